"""An fp8 answer does not depend on the diffusion model asked before it: the per-card terms
reused across requests were keyed on the family alone, so after FLUX.1 at fp8 SDXL ran fp8 on
a 4090 (and after SDXL, FLUX.1 was refused fp8)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _precisions(client: TestClient, preset: str) -> dict[str, str]:
    r = client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": preset, "task": "inference", "precision": "fp8"},
              "limit": 50, "constraints": {"acquisition": "rent"}},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    return {x["gpu"]["slug"]: x["precision"] for x in r.json()["recommendations"]}


def test_sdxl_and_flux_fp8_in_either_order(read_client: TestClient) -> None:
    for first, second in (("flux-1-dev", "sdxl"), ("sdxl", "flux-1-dev"), ("flux-1-dev", "sdxl")):
        _precisions(read_client, first)
        got = _precisions(read_client, second)
        assert got
        if second == "sdxl":
            assert "fp8" not in got.values(), got  # a UNet's convolutions have no fp8 kernels
        else:
            assert "fp8" in got.values(), got  # FLUX.1's DiT runs fp8 where the card does
