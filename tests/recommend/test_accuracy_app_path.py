"""benchmarks/accuracy.py scores as the app answers (issue 21, "one engine"): the calibration
the service attaches while no device report is stored carries the shipped kernel profiles
(data/profiles/), where the benchmark path prices on the priors (calibration None)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec

DATA = Path(__file__).resolve().parents[2] / "data"
PROFILED = "a100-sxm4-80gb"  # data/profiles/a100-sxm4-80gb.yaml: its own GEMM and attention points
# No profile, and no profiled GPU of its vendor and segment to carry one over from (no
# Intel consumer profile; GEMMs carry over within a segment, attention within a vendor)
UNPROFILED = "arc-a770-16gb"
CARRIED = "h100-nvl"  # no profile of its own, but profiled datacenter NVIDIA donors


@pytest.fixture(scope="module")
def cal(accuracy: ModuleType) -> Calibration:
    out = accuracy.app_calibration(DATA)
    assert isinstance(out, Calibration)
    return out


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def test_app_calibration_is_the_services_with_no_report_stored(cal: Calibration) -> None:
    assert cal.by_slug == {} and cal.by_family == {}  # no measured efficiency
    assert cal.profiles is not None
    shipped = {p.stem for p in (DATA / "profiles").glob("*.yaml")}
    assert set(cal.profiles.profiles) == shipped and PROFILED in shipped
    assert UNPROFILED not in shipped and CARRIED not in shipped


def test_a_profiled_gpu_gets_its_profile_and_an_unprofiled_one_none(
    cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    own = perf.efficiencies(gpus[PROFILED], cal)
    assert own.gemm["bf16"].basis == "published figures for this GPU"
    assert own.attention is not None and own.attention.basis == "published figures for this GPU"
    assert perf.efficiencies(gpus[PROFILED], None).gemm == {}  # the benchmark path: priors

    bare = perf.efficiencies(gpus[UNPROFILED], cal)
    assert bare.gemm == {} and bare.attention is None
    assert bare == perf.efficiencies(gpus[UNPROFILED], None)


def test_an_unprofiled_gpu_with_donors_gets_a_carried_over_profile(
    cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    """Why the app path can differ on a GPU without a profile of its own: the carry-over."""
    eff = perf.efficiencies(gpus[CARRIED], cal)
    assert eff.gemm["bf16"].basis.startswith("carried over from")


def _finetune_row(slug: str) -> dict[str, Any]:
    """A LoRA fine-tuning row as the held-out files write one (not a held-out row)."""
    return {
        "regime": "llm-finetuning",
        "model": "m",
        "gpu_slug": slug,
        "precision": "bf16",
        "peft": "lora",
        "lora_rank": 16,
        "batch_size": 8,  # compute-bound: at 1 the host dispatch hides the GEMM rate
        "num_gpus": 1,
        "seq_len": 1024,
        "grad_accum": 1,
        "runtime": "pytorch",
        "metric": "tokens_per_s_per_gpu",
    }


MODELS = {
    "m": {
        "params": 1.1e9,
        "layers": 22,
        "hidden_size": 2048,
        "num_heads": 32,
        "num_kv_heads": 4,
        "intermediate_size": 5632,
        "vocab_size": 32000,
    }
}


def test_both_paths_agree_on_an_unprofiled_gpu_and_differ_on_a_profiled_one(
    accuracy: ModuleType, cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    def both(slug: str) -> tuple[float, float]:
        row = _finetune_row(slug)
        bench = accuracy.heldout_estimate(row, gpus[slug], DATA, MODELS)[0]
        app = accuracy.heldout_estimate(row, gpus[slug], DATA, MODELS, cal)[0]
        return float(bench), float(app)

    bench, app = both(UNPROFILED)
    assert bench > 0 and app == bench
    bench, app = both(PROFILED)
    # its published GEMM points (0.87 of the bf16 peak) beat the datacenter prior
    assert bench > 0 and app > bench * 1.01
