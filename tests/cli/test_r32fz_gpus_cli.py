"""`gpu-advisor gpus` after the session-32 closing review (fz): a vendor with a stray space is
read as the API reads it (catalog.schemas._fold_case strips), and the hourly column writes a
price below $1 with the figures the API gives ($0.0725 had read "0.07")."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings
from app.domain.figures import sig_figs


def _run(settings: Settings, *args: str, width: str = "200") -> tuple[int, str]:
    env = {"COLUMNS": width, "TERMINAL_WIDTH": width,
           "GPU_ADVISOR_DATABASE_URL": settings.database_url}  # fmt: skip
    result = CliRunner().invoke(cli, ["gpus", *args], env=env)
    return result.exit_code, result.output


def test_a_padded_vendor_is_read_as_the_api_reads_it(
    read_settings: Settings, read_client: TestClient
) -> None:
    code, out = _run(read_settings, "--vendor", " Nvidia ", "--json")
    assert code == 0, out
    api = read_client.get("/api/v1/gpus", params={"vendor": " Nvidia ", "limit": 500})
    assert api.status_code == 200
    assert [g["slug"] for g in json.loads(out)] == [g["slug"] for g in api.json()["items"]]
    code, out = _run(read_settings, "--segment", "datacenter ", "--json")
    assert code == 0 and json.loads(out), out


def test_an_hourly_price_below_a_dollar_keeps_its_figures(read_settings: Settings) -> None:
    code, out = _run(read_settings, "--json")
    assert code == 0, out
    cheap = [g for g in json.loads(out)
             if (g.get("rent_from") or {}).get("usd_per_gpu_hour") is not None
             and g["rent_from"]["usd_per_gpu_hour"] < 1]  # fmt: skip
    assert cheap, "the seeded catalog rents some card below $1/h"
    odd = [g for g in cheap if round(g["rent_from"]["usd_per_gpu_hour"], 2)
           != g["rent_from"]["usd_per_gpu_hour"]] or cheap  # fmt: skip
    gpu = odd[0]
    usd = gpu["rent_from"]["usd_per_gpu_hour"]
    code, table = _run(read_settings, "--search", gpu["slug"])
    assert code == 0, table
    row = next(line for line in table.splitlines() if gpu["slug"] in line)
    assert f" {sig_figs(usd)} " in f"{row} ", (usd, row)
