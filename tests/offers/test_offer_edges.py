"""Offers follow their GPU out of the catalog, and a launch spec's inputs are refused by
name: an upload URL that would break the task's lines, a provider or instance type with no
offer."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings
from app.offers.launch import upload_url_problem

SPEC = "/api/v1/offers/launch-spec"


def _offers_of(client: TestClient, slug: str) -> list[dict[str, object]]:
    items = client.get("/api/v1/offers?limit=500").json()["items"]
    return [o for o in items if o["gpu"] == slug]


def test_deleting_a_gpu_deletes_its_offers(client: TestClient, admin: dict[str, str]) -> None:
    entry = client.get("/api/v1/gpus/a10").json()
    assert _offers_of(client, "a10")
    assert client.delete("/api/v1/gpus/a10", headers=admin).status_code == 204
    assert _offers_of(client, "a10") == []
    entry = {k: v for k, v in entry.items() if k not in ("origin", "purchase_usd", "offers",
                                                         "buy_at", "rent_from",
                                                         "seen_price")}  # fmt: skip
    again = client.post("/api/v1/gpus", json=entry, headers=admin)
    assert again.status_code == 201, again.text
    assert _offers_of(client, "a10") == []


@pytest.mark.parametrize(
    "url", ["http://x\nsetup: rm -rf /", "http://x foo", "http://x\tfoo", "http://x\u2028y"]
)
def test_upload_url_with_whitespace_or_controls_is_422(read_client: TestClient, url: str) -> None:
    r = read_client.get(SPEC, params={"gpu": "h100-sxm", "upload": url})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == "upload"
    assert upload_url_problem("https://advisor.example.org/") is None


@pytest.mark.parametrize("field", ["provider", "instance_type"])
def test_unknown_provider_or_instance_is_named(read_client: TestClient, field: str) -> None:
    r = read_client.get(SPEC, params={"gpu": "h100-sxm", "upload": "https://a.example",
                                      field: "nope"})  # fmt: skip
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == field
    assert f"{field} 'nope'" in error["message"]


def test_cli_launch_spec_names_upload(read_settings: Settings) -> None:
    env = {"GPU_ADVISOR_DATABASE_URL": read_settings.database_url, "COLUMNS": "200"}
    args = ["launch-spec", "--gpu", "h100-sxm", "--upload", "http://x\nfoo"]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code != 0
    assert "--upload" in result.output
