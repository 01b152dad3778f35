"""Deploy commands off NVIDIA: vLLM on Gaudi is the vllm-gaudi plugin, on Intel GPUs its XPU
build (PyPI's vllm is a CUDA build); AMD's ROCm vLLM image runs with AITER off outside
MI300/MI350; Apple rows get mlx_lm.server's command."""

from __future__ import annotations

import shlex
from types import SimpleNamespace
from typing import Any, cast

import yaml

from app.recommend import deploy
from app.recommend import schemas as s

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _row(
    runtime: str, vendor: str, gfx: str | None = None, architecture: str = "", weights: str = "bf16"
) -> s.Recommendation:
    sv = SimpleNamespace(
        runtime=runtime, weight_precision=weights, kv_cache_precision="bf16",
        weight_format=None, max_concurrency=16, replicas=1, gpus_per_replica=1,
        tensor_parallel=1, multi_gpu="tensor",
    )  # fmt: skip
    memory = SimpleNamespace(breakdown={"weights": 16.0}, available_gb=64.0)
    gpu = SimpleNamespace(
        vendor=vendor, slug="gpu", name="GPU", compute_capability=gfx, architecture=architecture
    )
    return cast(
        s.Recommendation,
        SimpleNamespace(
            serving=sv, offer=None, memory=memory, gpu=gpu, cost=SimpleNamespace(rent=None)
        ),
    )


def _rent(row: s.Recommendation) -> s.Recommendation:
    cast(Any, row).offer = SimpleNamespace(
        provider="runpod", instance_type="1x", gpus=1, tier="on-demand", instances=1,
        launchable=True,
    )  # fmt: skip
    return row


def _notes(row: s.Recommendation) -> str:
    out = deploy.deploy_for(row, MODEL, 4096)
    assert out is not None
    return " ".join(out.notes)


def test_gaudi_and_intel_gpu_rows_install_vllms_own_build_not_pypis_cuda_wheel() -> None:
    gaudi = _rent(_row("vllm", "intel", architecture="Gaudi3"))
    setup = deploy.setup_for(gaudi, "vllm serve x")
    assert setup.setup is not None and "pip install vllm\n" not in setup.setup + "\n"
    assert "vllm-gaudi" in setup.setup and "VLLM_TARGET_DEVICE=empty" in setup.setup
    assert "vllm-gaudi" in _notes(gaudi)
    xpu = _row("vllm", "intel", architecture="Xe2 (Battlemage)")
    setup = deploy.setup_for(xpu, "vllm serve x")
    assert setup.setup is not None and "VLLM_TARGET_DEVICE=xpu" in setup.setup
    assert "XPU" in _notes(xpu)
    spec = deploy.deploy_for(_rent(_row("vllm", "intel", architecture="Gaudi2")), MODEL, 4096, "G2")
    assert spec is not None and spec.skypilot_service is not None
    assert "vllm-gaudi" in yaml.safe_load(spec.skypilot_service)["setup"]
    # NVIDIA keeps PyPI's wheel
    assert deploy.setup_for(_row("vllm", "nvidia"), "c").setup == "pip install vllm"


def test_rocm_vllm_turns_aiter_off_outside_mi300_and_mi350() -> None:
    for gfx in ("gfx90a", "gfx1100"):  # MI250 / W7900 / RX 7900 XTX
        row = _row("vllm", "amd", gfx)
        run = shlex.split(deploy.setup_for(row, "vllm serve x").run)
        assert run[run.index("-e") :][:2] == ["-e", "HF_TOKEN"]
        assert "VLLM_ROCM_USE_AITER=0" in run
        assert run.index("VLLM_ROCM_USE_AITER=0") < run.index(deploy.VLLM_ROCM_IMAGE)
        assert "AITER" in _notes(row)
    for gfx in ("gfx942", "gfx950"):
        row = _row("vllm", "amd", gfx)
        assert "VLLM_ROCM_USE_AITER" not in deploy.setup_for(row, "vllm serve x").run
        assert "AITER" not in _notes(row)
    # SGLang's MI300 image is another runtime's: untouched
    assert "AITER" not in deploy.setup_for(_row("sglang", "amd", "gfx942"), "c").run


def test_apple_rows_get_the_mlx_lm_server_command() -> None:
    out = deploy.deploy_for(_row("mlx", "apple"), MODEL, 4096)
    assert out is not None
    args = shlex.split(out.command)
    assert args[:3] == ["mlx_lm.server", "--model", MODEL]
    assert args[args.index("--decode-concurrency") + 1] == "16"
    assert args[args.index("--port") + 1] == str(deploy.PORT)
    assert deploy.setup_for(_row("mlx", "apple"), "c").setup == "pip install mlx-lm"
    # 4-bit weights under MLX are its own format, made by mlx_lm.convert -q
    q4 = deploy.deploy_for(_row("mlx", "apple", weights="int4"), MODEL, 4096)
    assert q4 is not None and "<mlx-4bit-of-Llama-3.1-8B-Instruct>" in q4.command
    assert any("mlx_lm.convert" in n and "--q-bits 4" in n for n in q4.notes)
    # llama.cpp on a Mac builds with Metal, not CUDA
    llama = deploy.setup_for(_row("llama.cpp", "apple"), "c").setup
    assert llama is not None and "Metal" in llama and "CUDA" not in llama
