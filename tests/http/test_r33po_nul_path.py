"""r33po: a NUL byte in a path parameter is a 422 naming the parameter ("slug", "report_id"),
as a 404 for an unknown slug or id names it; the guard checks before routing and had named
the whole "path". A path no API operation's parameter holds (a page, a typo) still says
"path": the templates are the OpenAPI paths, which leave the pages out."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/gpus/h100%00", "slug"),
        ("/api/v1/device-reports/1%00", "report_id"),
        ("/api/v1/benchmark-runs/%00x", "run_id"),
        ("/api/v1/nope%00", "path"),
        ("/static/css%00/x.css", "path"),
    ],
)
def test_a_nul_in_the_path_names_the_parameter(
    read_client: TestClient, url: str, field: str
) -> None:
    r = read_client.get(url, headers={"accept": "application/json"})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"] == {"field": field}
    assert error["message"] == f"{field}: contains a NUL byte"


def test_a_delete_names_it_too(read_client: TestClient) -> None:
    # the route matched by path, whatever the method (routing would answer 405 or 401 later)
    r = read_client.delete("/api/v1/device-reports/%00", headers={"accept": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"] == {"field": "report_id"}
