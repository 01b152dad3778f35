"""Every GET /api path that names a thing answers an unknown one with 404 whose
details.field is the path parameter as the OpenAPI document names it (README, "The API"):
GET /api/v1/workloads/{workload_id} had named `id`."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_an_unknown_thing_in_the_path_is_a_404_naming_its_parameter(
    read_client: TestClient,
) -> None:
    spec = read_client.get("/openapi.json").json()
    checked = []
    for path, item in spec["paths"].items():
        op = item.get("get")
        if not path.startswith("/api/") or op is None or "{" not in path:
            continue
        params = {p["name"]: p["schema"] for p in op.get("parameters", []) if p["in"] == "path"}
        (name,) = re.findall(r"{(\w+)}", path)
        unknown = "2147483000" if params[name].get("type") == "integer" else "no-such-thing"
        r = read_client.get(path.replace("{" + name + "}", unknown))
        assert r.status_code == 404, (path, r.text)
        assert r.json()["error"]["details"]["field"] == name, (path, r.text)
        checked.append(path)
    assert "/api/v1/workloads/{workload_id}" in checked and len(checked) >= 4, checked
