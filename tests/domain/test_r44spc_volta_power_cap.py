"""Volta's sustained 16-bit tensor throughput per board watt (data/efficiency.yaml, the
compute capability 7.0 row; issue: "the V100 has no sustained-power figure").

The figure is the 250 W Tesla V100S's measured torch.matmul FP16 rate, 88.92 TFLOPS
(zzc0721/torch-performance-test-data database.md), 0.356 TFLOPS per board watt, the way the
Ampere, Ada and Hopper rows took theirs from the power-capped PCIe part of the die. The 300 W
V100-SXM2 in the same project (issue #140) reaches 97.36 TFLOPS at its best size, under what
0.356 × 300 W allows: it is not held by its cap, and the engine does not slow it on the
operator path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
TABLE = load_efficiency(DATA)

V100S_FP16_TFLOPS = 88.92  # database.md at 07858687, Tesla V100S 32GB, best size
V100S_TDP_W = 250.0
SXM2_FP16_TFLOPS = 97.36  # issue #140, Tesla V100-SXM2-16GB, 8192² (best size)


@pytest.mark.parametrize("regime", ["train", "infer", "prefill"])
def test_a_v100_16bit_job_carries_voltas_per_watt_figure(regime: str) -> None:
    prof = TABLE.profile(GPUS["v100-sxm2-16gb"], "cuda", "pytorch", "fp16", regime)
    assert prof.tensor_tflops_per_watt == pytest.approx(V100S_FP16_TFLOPS / V100S_TDP_W, rel=0.01)


def test_the_figure_does_not_bind_the_uncapped_sxm2_part_it_is_checked_against() -> None:
    sxm2 = GPUS["v100-sxm2-16gb"]
    assert sxm2.tdp_w == 300
    prof = TABLE.profile(sxm2, "cuda", "pytorch", "fp16", "train")
    per_watt = prof.tensor_tflops_per_watt
    assert per_watt is not None
    # the SXM2's measured best FP16 GEMM sits under its 300 W allowance
    assert sxm2.tdp_w * per_watt > SXM2_FP16_TFLOPS
    eff = perf.efficiencies(sxm2, None)
    op_eff = perf.operator_efficiency(eff, "fp16")
    assert perf._sustained_clock(sxm2, op_eff, prof, "fp16") == 1.0


def test_the_250w_pcie_v100_holds_the_clock_its_tdp_feeds() -> None:
    pcie = GPUS["v100-pcie-16gb"]
    assert pcie.tdp_w == 250
    prof = TABLE.profile(pcie, "cuda", "pytorch", "fp16", "prefill")
    per_watt = prof.tensor_tflops_per_watt
    assert per_watt is not None
    # the LLM prompt path: TDP × per-watt ÷ the 112 TFLOPS tensor peak, ~0.79 of boost
    held = llm_step.sustained_clock(pcie, prof)
    assert held == pytest.approx(250 * per_watt / 112.0)
    assert 0.75 < held < 0.85
    # the operator path, against the GEMM prior: 89 of 0.80 × 112 = 89.6, barely binding
    eff = perf.efficiencies(pcie, None)
    op_eff = perf.operator_efficiency(eff, "fp16")
    share = perf._sustained_clock(pcie, op_eff, prof, "fp16")
    assert 0.98 < share < 1.0


def test_a_bf16_job_on_volta_runs_on_the_cuda_cores_and_keeps_its_clock() -> None:
    # Volta has no BF16 tensor mode: the job runs fp32 math, which the figure does not bind
    sxm2 = GPUS["v100-sxm2-16gb"]
    prof = TABLE.profile(sxm2, "cuda", "pytorch", "bf16", "train")
    eff = perf.efficiencies(sxm2, None)
    op_eff = perf.operator_efficiency(eff, "fp32")
    assert perf._sustained_clock(sxm2, op_eff, prof, "fp32") == 1.0
