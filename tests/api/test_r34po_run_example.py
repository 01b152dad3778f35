"""r34po: the OpenAPI example for starting a benchmark run is one a fresh server takes and
its own worker runs. It had named a worker label no server has (`gpu-box-1`): "Try it out"
queued a run nothing would take, and the README's start for that label then got a 409."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.config import Settings
from app.reports.queue import default_label


def _documented_body(client: TestClient) -> Any:
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/api/v1/benchmark-runs"]["post"]["requestBody"]
    examples = body["content"]["application/json"]["examples"]
    return next(iter(examples.values()))["value"]


def test_the_documented_run_goes_to_the_servers_own_worker(
    client: TestClient, settings: Settings
) -> None:
    body = _documented_body(client)
    r = client.post("/api/v1/benchmark-runs", json=body)
    assert r.status_code == 202, r.text
    # `serve` starts `gpu-advisor worker` with no --label: default_label is the one it takes
    assert r.json()["label"] == default_label(settings)


def test_the_readme_start_matches_the_documented_example(client: TestClient) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    row = next(line for line in readme.splitlines() if "`POST /api/v1/benchmark-runs`" in line)
    assert '`{"profile": "quick"}`' in row
    assert _documented_body(client) == {"profile": "quick"}
