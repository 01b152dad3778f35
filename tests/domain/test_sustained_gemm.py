"""Sustained GEMM rates: a training step's GEMMs run at what the GPU holds over a long run at
its power limit (data/efficiency.yaml ``sustained_gemm_tflops``); inference keeps the burst
(boost-clock) rate the GEMM prior stands for."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.domain import perf
from app.domain.efficiency import EfficiencyTable, parse_table
from app.domain.kernels import ATTN_FLASH, ATTN_FLASH_BWD, CLASS_INDEX, CONV, GEMM, class_rates
from app.domain.workload import WorkloadSpec
from app.shipped import yamlio
from tests.domain.fixtures import A100, BERT_LARGE, H100, RESNET50

DATA = Path(__file__).resolve().parents[2] / "data"
H100_BF16 = 989.4  # the fixture's dense bf16 TFLOPS
HELD = 700.0  # TFLOPS: below the H100's best-shape bf16 rate (989.4 × the 0.80 prior)
WITH = parse_table({"sustained_gemm_tflops": {"h100-sxm": {"bf16": HELD, "source": "test"}}})
WITHOUT = parse_table({})
_GEMM, _CONV = CLASS_INDEX[GEMM], CLASS_INDEX[CONV]
_ATTN = (CLASS_INDEX[ATTN_FLASH], CLASS_INDEX[ATTN_FLASH_BWD])


def _work(task: str, table: EfficiencyTable, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task=task, model=BERT_LARGE, precision="bf16", batch_size=32, efficiency=table
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def _rates(gpu: object, work: WorkloadSpec) -> tuple[float, ...]:
    on = perf._on_gpu(gpu, work, "pytorch", None, None)  # type: ignore[arg-type]
    assert on.rates is not None
    return on.rates


def test_a_training_step_on_h100_runs_its_gemms_at_the_sustained_rate() -> None:
    assert H100.bf16_tflops == H100_BF16
    burst = _rates(H100, _work("training", WITHOUT))
    held = _rates(H100, _work("training", WITH))
    prior = H100_BF16 * perf.prior_compute_efficiency(H100, "bf16") * 1e12
    assert burst[_GEMM] == pytest.approx(prior)
    assert held[_GEMM] == pytest.approx(HELD * 1e12)
    assert held[_CONV] == pytest.approx(HELD * 1e12)
    # attention kernels are not what the figure measured: their rates stay
    for i in _ATTN:
        assert held[i] == pytest.approx(burst[i])
    slow = perf.estimate(H100, _work("training", WITH)).throughput
    fast = perf.estimate(H100, _work("training", WITHOUT)).throughput
    assert fast * HELD * 1e12 / prior < slow < fast


def test_inference_on_h100_keeps_the_burst_rate() -> None:
    burst = _rates(H100, _work("inference", WITHOUT))
    assert _rates(H100, _work("inference", WITH)) == pytest.approx(burst)
    a = perf.estimate(H100, _work("inference", WITH)).throughput
    b = perf.estimate(H100, _work("inference", WITHOUT)).throughput
    assert a == pytest.approx(b)


def test_a_figure_only_slows_its_own_gpu_and_datapath_and_never_speeds_one_up() -> None:
    # another GPU, another datapath (fp16: no figure), a figure above the prior's rate
    assert _rates(A100, _work("training", WITH)) == pytest.approx(
        _rates(A100, _work("training", WITHOUT))
    )
    fp16 = _rates(H100, _work("training", WITH, precision="fp16"))
    assert fp16 == pytest.approx(_rates(H100, _work("training", WITHOUT, precision="fp16")))
    above = parse_table({"sustained_gemm_tflops": {"h100-sxm": {"bf16": 950, "source": "t"}}})
    assert _rates(H100, _work("training", above)) == pytest.approx(
        _rates(H100, _work("training", WITHOUT))
    )


def test_the_whole_model_path_takes_the_same_share_in_training() -> None:
    # a CNN with no operator table: FLOPs through the whole-model split
    def t_comp(task: str, table: EfficiencyTable) -> float:
        work = _work(task, table, model=RESNET50, batch_size=256)
        return perf.single_gpu(H100, work).t_comp

    prior = H100_BF16 * perf.prior_compute_efficiency(H100, "bf16")
    assert t_comp("training", WITH) == pytest.approx(t_comp("training", WITHOUT) * prior / HELD)
    assert t_comp("inference", WITH) == pytest.approx(t_comp("inference", WITHOUT))


def test_class_rates_scale_the_tensor_gemm_classes_only() -> None:
    base = class_rates(800e12, 60e12, winograd=2.25)
    held = class_rates(800e12, 60e12, winograd=2.25, sustained=0.9)
    assert held[_GEMM] == pytest.approx(0.9 * base[_GEMM])
    assert held[_CONV] == pytest.approx(0.9 * base[_CONV])
    assert [held[i] for i in _ATTN] == pytest.approx([base[i] for i in _ATTN])


def test_parsing_needs_a_source_and_a_known_datapath() -> None:
    assert WITH.sustained_gemm_tflops("h100-sxm", "bf16") == HELD
    assert WITH.sustained_gemm_tflops("h100-sxm", "fp16") is None
    with pytest.raises(ValueError, match="no source"):
        parse_table({"sustained_gemm_tflops": {"x": {"bf16": 1.0}}})
    with pytest.raises(ValueError, match="unknown datapaths"):
        parse_table({"sustained_gemm_tflops": {"x": {"bf61": 1.0, "source": "s"}}})


def test_every_shipped_figure_cites_a_listed_source_and_a_catalog_gpu() -> None:
    doc = yamlio.safe_load((DATA / "efficiency.yaml").read_text(encoding="utf-8"))
    slugs = {
        g["slug"]
        for f in (DATA / "gpus").glob("*.yaml")
        for g in yamlio.safe_load(f.read_text(encoding="utf-8"))["gpus"]
    }
    for slug, entry in doc["sustained_gemm_tflops"].items():
        assert entry["source"] in doc["sources"], slug
        assert slug in slugs, slug


def test_the_cached_gpu_terms_keep_training_and_inference_apart() -> None:
    # _on_gpu keeps one entry per phase on the spec: pricing inference first must not hand
    # its burst rates to a training request on the same card
    gpu = dataclasses.replace(H100)  # an edited spec: an empty store
    inf = _rates(gpu, _work("inference", WITH))
    train = _rates(gpu, _work("training", WITH))
    assert train[_GEMM] < inf[_GEMM]


def test_a_mixed_fp32_job_holds_only_its_tf32_share() -> None:
    # PyTorch's default fp32: convolutions on TF32 tensor cores, matmuls on the CUDA cores
    # (compute_split's "fp32+tf32": the TF32 part first); the figure is a TF32 GEMM's
    table = parse_table({"sustained_gemm_tflops": {"h100-sxm": {"tf32": 300, "source": "t"}}})
    work = _work("training", table, precision="fp32")
    tf32, fp32 = 0.8 * 494.7e12, 0.9 * 67e12
    shares = perf._sustained_shares(H100, work, "fp32+tf32", ((0.6, tf32), (0.4, fp32)))
    assert shares == pytest.approx((300e12 / tf32, 1.0))
    assert perf._sustained_shares(H100, work, "fp32", ((1.0, fp32),)) is None
    inference = _work("inference", table, precision="fp32")
    assert perf._sustained_shares(H100, inference, "tf32", ((1.0, tf32),)) is None


def test_the_shipped_h200_sxm_holds_the_h100_sxms_rates() -> None:
    """The H200 SXM is the H100 SXM's compute die under the same 700 W limit: a training step
    on it held its boost-clock GEMM rate beside a power-limited H100 (Llama 3 70B on 64 GPUs,
    1,026 against 936 tokens/s a GPU) though the two compute alike."""
    doc = yamlio.safe_load((DATA / "efficiency.yaml").read_text(encoding="utf-8"))
    table = parse_table(doc)
    for dtype in ("bf16", "fp16", "tf32", "fp8"):
        h100 = table.sustained_gemm_tflops("h100-sxm", dtype)
        assert h100 is not None
        assert table.sustained_gemm_tflops("h200-sxm", dtype) == h100
    # the 600 W NVL part is other power: no figure
    assert table.sustained_gemm_tflops("h200-nvl", "bf16") is None
