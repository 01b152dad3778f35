"""Runtime-aware batch inference against published optimised-runtime results.

Data: tests/data/runtime_inference.yaml. TensorRT's demo/BERT tables (A100, A30, T4; BERT-Base
and BERT-Large, INT8 and FP16, sequence 128 and 384, batch 128) and MLPerf Inference closed
Offline results under TensorRT (ResNet-50 v1.5 INT8 on H100 SXM/PCIe, A100 SXM/PCIe, A30, A10,
L4; Stable Diffusion XL with an INT8 or FP8 UNet on H100 SXM, H200 and L40S). Measured when
written: all 35 rows Spearman 1.00, median ratio 1.13, bias (measured ÷ predicted) 1.01
(BERT priced per operator: A100 and A30 0.93–1.27×, the T4 0.88–0.99× through Turing's power
cap, set from a forum GEMM measurement, not from these rows).
ResNet-50 1.00 / 1.28 / 1.28, under-predicted: TensorRT's convolutions overlap their fused
epilogue writes with the math, which the additive activation-traffic term does not; the L4 at
MLPerf's batch 32 keeps a layer's activations in its 48 MB L2 and runs 2.2× the estimate.
SDXL over 4 rows 0.80 / 1.14 / 0.96; the H200 is over-predicted 1.36× (it ran 4 % faster than
the H100; the engine credits its bandwidth). The eager 16-bit roofline alone is 2–5× below
these figures. The floors sit under the measured values; the ResNet-50 and SDXL rows were
added after the runtime constants were set and were not used to choose them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "runtime_inference.yaml"


@pytest.fixture(scope="module")
def score(accuracy):
    return accuracy.evaluate_runtime(ROOT / "data", DATA)


def test_optimised_inference_is_sized_and_ranked(score) -> None:
    assert score.n >= 30
    assert score.spearman >= 0.9, score.spearman
    assert score.median_ratio <= 1.5, score.median_ratio
    assert 0.7 <= score.bias <= 1.4, score.bias


def test_cnn_and_diffusion_inference_hold_on_their_own(score) -> None:
    """MLPerf's ResNet-50 and SDXL Offline rows, each family on its own (issue #11's target:
    median ratio error ≤ 1.5×, bias 0.7–1.4 for large-batch CNN and diffusion inference)."""
    by = score.by_preset()
    resnet = by["resnet-50"]
    assert resnet.n >= 7
    assert resnet.spearman >= 0.9, resnet.spearman
    assert resnet.median_ratio <= 1.5, resnet.median_ratio
    assert 0.7 <= resnet.bias <= 1.4, resnet.bias
    sdxl = by["sdxl"]
    assert sdxl.n >= 4
    assert sdxl.median_ratio <= 1.5, sdxl.median_ratio
    assert 0.7 <= sdxl.bias <= 1.4, sdxl.bias


def test_int8_runs_on_its_own_peak(score) -> None:
    by = {(slug, label): p for slug, label, _, p in score.rows}
    pairs = 0
    for (slug, label), pred in by.items():
        fp16 = by.get((slug, label.replace(" int8 ", " fp16 ")))
        if " int8 " in label and fp16 is not None:
            pairs += 1
            assert pred > 1.5 * fp16, (slug, label)
    assert pairs >= 12


def test_sdxl_rows_run_the_benchmark_step_count(accuracy) -> None:
    """MLPerf's SDXL runs 20 steps (40 UNet passes), not the preset's 25: the FLOPs follow."""
    from app.recommend.presets import load_presets

    sdxl = load_presets(ROOT / "data")["sdxl"].model
    at20 = accuracy.diffusion_at_steps(sdxl, 20, accuracy.VAE_DECODE_GFLOPS["sdxl"])
    assert at20.passes_per_sample == 40
    assert at20.gflops_per_sample == pytest.approx(40 * 6761.2 + 10470.4, rel=1e-4)
    same = accuracy.diffusion_at_steps(sdxl, 25, accuracy.VAE_DECODE_GFLOPS["sdxl"])
    assert same.gflops_per_sample == pytest.approx(sdxl.gflops_per_sample, rel=1e-6)


def test_rows_cite_their_source() -> None:
    from app.shipped import yamlio

    doc = yamlio.safe_load(DATA.read_text(encoding="utf-8"))
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"], row
        if "latency_ms" in row:
            assert row["samples_per_s"] == pytest.approx(
                row["batch_size"] / row["latency_ms"] * 1e3, rel=1e-3
            )
        else:  # MLPerf Offline: the printed system throughput, per GPU
            system = row.get("system_samples_per_s", row["samples_per_s"])
            assert row["samples_per_s"] == pytest.approx(
                system / row.get("num_gpus", 1), rel=1e-4
            ), row
            assert row["system"] and row["source"].startswith("mlperf-"), row
