"""The channels-last tip names cuDNN's transposes around convolutions: not on a FLUX.1 row (a
transformer denoiser; only its VAE convolves) nor on a Mac (no cuDNN) — the regression hunt."""

from __future__ import annotations

from fastapi.testclient import TestClient

TIP = "channels_last"


def _tips(client: TestClient, preset: str, gpu: str) -> list[str]:
    r = client.post(
        "/api/v1/estimate",
        json={"workload": {"preset": preset, "task": "inference", "batch_size": 1}, "gpu": gpu},
    )
    assert r.status_code == 200, r.text
    return list(r.json()["result"].get("tips") or [])


def test_the_layout_tip_is_for_a_unet_on_cudnn(read_client: TestClient) -> None:
    assert any(TIP in t for t in _tips(read_client, "sdxl", "h100-sxm"))
    assert not any(TIP in t for t in _tips(read_client, "flux-1-schnell", "h100-sxm"))
    assert not any(TIP in t for t in _tips(read_client, "sdxl", "apple-m4-max"))
