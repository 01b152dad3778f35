"""The launch-spec task benchmarks a rented machine on the project's pinned versions: it ran
`pip install torch` unpinned, so a report measured whatever torch was newest that day. It now
installs requirements-bench.lock (torch pinned without "+cpu", so a GPU box gets PyPI's CUDA
build of that release) before the project; a ROCm box takes the same release from PyTorch's
ROCm index first, which the lock's pin accepts."""

from __future__ import annotations

import re

import yaml

from app.domain.cost import CloudOffer
from app.offers.launch import BENCH_LOCK, task_yaml
from tests.support import ROOT


def _offer(accelerator: str) -> CloudOffer:
    return CloudOffer(
        provider="runpod", instance_type=f"1x_{accelerator}_SECURE", gpus=1, usd_per_hour=2.49,
        spot_usd_per_hour=None, tier="on-demand", as_of="2026-11-30", source="skypilot catalog",
        accelerator=accelerator,
    )  # fmt: skip


def _locked_torch() -> str:
    (pin,) = re.findall(r"^torch==(\S+)$", (ROOT / BENCH_LOCK).read_text(), flags=re.M)
    return pin


def _setup(accelerator: str, slug: str) -> list[str]:
    task = yaml.safe_load(task_yaml(_offer(accelerator), slug, "https://lab.example/"))
    return list(task["setup"].splitlines())


def test_the_bench_lock_pins_torch_without_the_cpu_label() -> None:
    # a "+cpu" pin would force a CPU build on the GPU machine the task rents
    assert re.fullmatch(r"\d+\.\d+\.\d+", _locked_torch())


def test_a_cuda_machine_installs_the_lock_before_the_project_and_no_loose_torch() -> None:
    setup = _setup("H100", "h100-sxm")
    lock = f"python3 -m pip install -r {BENCH_LOCK}"
    assert lock in setup and "python3 -m pip install ." in setup
    assert setup.index(lock) < setup.index("python3 -m pip install .")
    assert not any(re.search(r"install torch(?!==)", line) for line in setup), setup
    assert not any("download.pytorch.org" in line for line in setup)


def test_a_rocm_machine_takes_the_locked_release_from_pytorchs_rocm_index_first() -> None:
    setup = _setup("MI300X", "mi300x")
    (torch,) = [line for line in setup if "install torch" in line]
    assert f"torch=={_locked_torch()} " in torch and "download.pytorch.org/whl/rocm" in torch
    lock = f"python3 -m pip install -r {BENCH_LOCK}"
    assert setup.index(torch) < setup.index(lock) < setup.index("python3 -m pip install .")
