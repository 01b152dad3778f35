"""The benchmark task installs the torch build of the GPU's backend: PyPI's torch is a CUDA
build, so a ROCm machine ran the benchmarks on its CPU (and `nvidia-smi` printed nothing)."""

from __future__ import annotations

import yaml
from fastapi.testclient import TestClient

from app.domain.cost import CloudOffer
from app.offers.launch import backend_of, task_yaml


def _offer(accelerator: str) -> CloudOffer:
    return CloudOffer(
        provider="runpod", instance_type=f"1x_{accelerator}_SECURE", gpus=1, usd_per_hour=2.49,
        spot_usd_per_hour=None, tier="on-demand", as_of="2026-11-30", source="skypilot catalog",
        accelerator=accelerator,
    )  # fmt: skip


def test_a_rocm_gpu_installs_pytorchs_rocm_wheel_and_lists_its_gpus_with_rocm_smi() -> None:
    assert backend_of("mi300x") == "rocm" and backend_of("h100-sxm") == "cuda"
    task = yaml.safe_load(task_yaml(_offer("MI300X"), "mi300x", "https://lab.example/"))
    setup = task["setup"].splitlines()
    (torch,) = [line for line in setup if "install torch" in line]
    # the release the lock file pins, from PyTorch's ROCm index (not PyPI's CUDA build)
    assert "torch==2.13.0" in torch
    assert "--index-url https://download.pytorch.org/whl/rocm" in torch
    assert "rocm-smi" in task["run"] and "nvidia-smi" not in task["run"]
    cuda = yaml.safe_load(task_yaml(_offer("H100"), "h100-sxm", "https://lab.example/"))
    # PyPI's CUDA build of the locked release (test_r25cli_launch_lock.py)
    assert "python3 -m pip install -r requirements-bench.lock" in cuda["setup"].splitlines()
    assert "download.pytorch.org" not in cuda["setup"] and "nvidia-smi" in cuda["run"]


def test_the_launch_spec_for_an_mi300x_benchmarks_it_on_rocm(read_client: TestClient) -> None:
    r = read_client.get(
        "/api/v1/offers/launch-spec",
        params={"gpu": "mi300x", "gpus": 1, "upload": "http://x.example/api/v1/reports"},
    )
    assert r.status_code == 200, r.text
    task = yaml.safe_load(r.text)
    assert "whl/rocm" in task["setup"] and "rocm-smi" in task["run"]
