"""`launch-spec --gpus` took at most 64 where GET /api/v1/offers/launch-spec takes 512: one
limit now (vocab.MOST_GPUS), the planner's largest count, read by the CLI and the API alike."""

from __future__ import annotations

import typer
from fastapi.testclient import TestClient

from app.cli.main import cli
from app.domain.evaluate import COUNTS
from app.recommend.schemas import MOST_GPUS as REQUEST_MOST
from app.vocab import MOST_GPUS


def test_the_cli_and_the_api_share_one_limit(read_client: TestClient) -> None:
    command = typer.main.get_command(cli).commands["launch-spec"]  # type: ignore[attr-defined]
    gpus = next(p for p in command.params if p.name == "gpus")
    assert (gpus.min, gpus.max) == (1, MOST_GPUS)
    assert MOST_GPUS == COUNTS[-1] == REQUEST_MOST == 512
    spec = read_client.get("/openapi.json").json()["paths"]["/api/v1/offers/launch-spec"]
    param = next(p for p in spec["get"]["parameters"] if p["name"] == "gpus")
    assert param["schema"]["maximum"] == MOST_GPUS
