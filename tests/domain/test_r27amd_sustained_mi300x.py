"""AMD Instinct rows of ``sustained_gemm_tflops`` (data/efficiency.yaml): AMD's own
Max-Achievable FLOPs (ROCm blog "Measuring Max-Achievable FLOPs – Part 2", hipBLASLt at the
clock the board's power management holds under dense matrix load). A training step on an
MI300X prices its GEMMs at no more than them, exactly as the H100 SXM's gpu-fryer rows do;
inference keeps the burst prior, and the MI325X's figures, all above its 0.55 prior, slow
nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.efficiency import EfficiencyTable, parse_table
from app.domain.gpu import GpuSpec
from app.domain.kernels import ATTN_FLASH, ATTN_FLASH_BWD, CLASS_INDEX, CONV, GEMM
from app.domain.workload import ModelSpec, WorkloadSpec
from app.shipped import yamlio
from tests.domain.fixtures import LLAMA3_8B, RESNET50

DATA = Path(__file__).resolve().parents[2] / "data"
_GEMM, _CONV = CLASS_INDEX[GEMM], CLASS_INDEX[CONV]
_ATTN = (CLASS_INDEX[ATTN_FLASH], CLASS_INDEX[ATTN_FLASH_BWD])
# Table 1 of the blog (TFLOPS): MI300X at 750 W, MI325X at 1000 W
MAF = {
    "mi300x": {"bf16": 708.0, "fp16": 654.0, "fp8": 1273.0},
    "mi325x": {"bf16": 843.0, "fp16": 794.0, "fp8": 1519.0},
}


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = yamlio.safe_load((DATA / "efficiency.yaml").read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def shipped() -> EfficiencyTable:
    return parse_table(_doc())


@pytest.fixture(scope="module")
def without_amd() -> EfficiencyTable:
    """The shipped table with no AMD sustained rows: the boost-clock (burst) rates."""
    doc = _doc()
    doc["sustained_gemm_tflops"] = {
        k: v for k, v in doc["sustained_gemm_tflops"].items() if k not in MAF
    }
    return parse_table(doc)


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA) if g.slug in MAF}


def _work(
    task: str, table: EfficiencyTable, precision: str, model: ModelSpec = LLAMA3_8B
) -> WorkloadSpec:
    return WorkloadSpec(
        task=task,
        model=model,
        precision=precision,
        batch_size=8 if model is LLAMA3_8B else 256,
        seq_len=2048,
        efficiency=table,
    )


def _rates(gpu: GpuSpec, work: WorkloadSpec) -> tuple[float, ...]:
    on = perf._on_gpu(gpu, work, "pytorch", None, None)
    assert on.backend == "rocm"
    assert on.rates is not None
    return on.rates


def test_the_shipped_amd_rows_are_the_blogs_table_with_its_source(shipped) -> None:
    doc = _doc()
    src = doc["sources"]["rocm-maf-part2"]
    assert "measuring-max-achievable-flops-part2" in src["url"]
    assert src["date"] == "2025-02-28"
    for slug, figures in MAF.items():
        assert doc["sustained_gemm_tflops"][slug]["source"] == "rocm-maf-part2"
        for dtype, tflops in figures.items():
            assert shipped.sustained_gemm_tflops(slug, dtype) == tflops
        # the blog measured no TF32: no figure, so no TF32 scaling
        assert shipped.sustained_gemm_tflops(slug, "tf32") is None


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp8"])
def test_an_mi300x_training_step_runs_its_gemms_at_amds_maf(
    gpus, shipped, without_amd, dtype
) -> None:
    gpu = gpus["mi300x"]
    peak = {"bf16": gpu.bf16_tflops, "fp16": gpu.fp16_tflops, "fp8": gpu.fp8_tflops}[dtype]
    assert peak is not None
    prior = peak * perf.prior_compute_efficiency(gpu, dtype) * 1e12
    held = MAF["mi300x"][dtype] * 1e12
    share = held / prior  # 0.98 bf16, 0.91 fp16, 0.89 fp8: all below the 0.55 prior
    assert share < 1.0
    burst = _rates(gpu, _work("training", without_amd, dtype))
    slow = _rates(gpu, _work("training", shipped, dtype))
    assert burst[_GEMM] == pytest.approx(prior)
    assert slow[_GEMM] == pytest.approx(held)
    assert slow[_CONV] == pytest.approx(burst[_CONV] * share)
    # the attention kernels are not what MAF measured: their rates stay
    for i in _ATTN:
        assert slow[i] == pytest.approx(burst[i])
    # the step slows, by no more than the GEMMs' share (attention, norms, the optimizer and
    # communication keep their time)
    fast = perf.estimate(gpu, _work("training", without_amd, dtype), num_gpus=8, sharded=True)
    held_est = perf.estimate(gpu, _work("training", shipped, dtype), num_gpus=8, sharded=True)
    assert fast.throughput * share < held_est.throughput < fast.throughput


def test_the_whole_model_path_takes_the_same_share_on_an_mi300x(gpus, shipped, without_amd) -> None:
    # a CNN with no operator table: the FLOPs run through the whole-model split
    gpu = gpus["mi300x"]

    def t_comp(task: str, table: EfficiencyTable) -> float:
        return perf.single_gpu(gpu, _work(task, table, "fp16", RESNET50)).t_comp

    share = 654.0 / (1307.4 * 0.55)
    assert t_comp("training", shipped) == pytest.approx(t_comp("training", without_amd) / share)
    assert t_comp("inference", shipped) == pytest.approx(t_comp("inference", without_amd))


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp8"])
def test_mi300x_inference_keeps_the_burst_rate(gpus, shipped, without_amd, dtype) -> None:
    gpu = gpus["mi300x"]
    burst = _rates(gpu, _work("inference", without_amd, dtype))
    assert _rates(gpu, _work("inference", shipped, dtype)) == pytest.approx(burst)
    a = perf.estimate(gpu, _work("inference", shipped, dtype)).throughput
    b = perf.estimate(gpu, _work("inference", without_amd, dtype)).throughput
    assert a == pytest.approx(b)


def test_the_mi325xs_figures_sit_above_its_prior_and_slow_nothing(
    gpus, shipped, without_amd
) -> None:
    gpu = gpus["mi325x"]
    for dtype in ("bf16", "fp16", "fp8"):
        work = _work("training", shipped, dtype)
        peak = {"bf16": gpu.bf16_tflops, "fp16": gpu.fp16_tflops, "fp8": gpu.fp8_tflops}[dtype]
        assert peak is not None
        prior = peak * perf.prior_compute_efficiency(gpu, dtype) * 1e12
        assert MAF["mi325x"][dtype] * 1e12 > prior
        assert perf._sustained_shares(gpu, work, dtype, ((1.0, prior),)) is None
        # a rate above what AMD measured would be held to it
        above = perf._sustained_shares(gpu, work, dtype, ((1.0, 2 * prior),))
        assert above == pytest.approx((MAF["mi325x"][dtype] * 1e12 / (2 * prior),))
        assert _rates(gpu, work) == pytest.approx(
            _rates(gpu, _work("training", without_amd, dtype))
        )
