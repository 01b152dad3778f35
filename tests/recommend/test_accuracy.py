"""The throughput model against Lambda's published PyTorch training throughputs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"


@pytest.fixture(scope="module")
def scores(accuracy):
    return accuracy.evaluate(ROOT / "data", MEASUREMENTS)


# The workloads the engine's training constants were checked against; SSD300 (added with its
# measured activations) is held separately: it ranks as well but sizes GDDR cards ~1.3× slow.
CORE = ("resnet50", "bert_base_squad", "bert_large_squad")
# BERT-large in FP32 is priced too fast on every one of its 17 GPUs (a cost the engine does not
# price; README, known not to hold): its floor is 1.35 since the math attention's backward reads
# what PyTorch's autograd formulas read (2026-12-06, methodology §6.7o "ph"), which took 1.25 to
# 1.32. The floor moved with a physics fix, never with a fitted constant.
LOOSER = {("bert_large_squad", "fp32"): 1.35}


def test_every_workload_ranks_and_sizes_gpus(scores) -> None:
    assert len([s for s in scores if s.model in CORE]) >= 6
    for s in scores:
        assert s.n >= 5, s.model
        assert s.spearman >= 0.9, (s.model, s.precision, s.spearman)
        limit = LOOSER.get((s.model, s.precision), 1.3 if s.model in CORE else 1.45)
        assert s.median_ratio <= limit, (s.model, s.precision, s.median_ratio)


def test_published_training_runs_fit_at_their_batch_sizes(accuracy) -> None:
    """Lambda ran these batch sizes on these GPUs, so the engine must say they fit (≥ 95 %)."""
    fits = accuracy.evaluate_fit(ROOT / "data", MEASUREMENTS)
    models = {f.model for f in fits}
    assert {"resnet50", "bert_large_squad", "ssd"} <= models
    for model in models:
        rows = [f for f in fits if f.model == model]
        share = sum(f.fits for f in rows) / len(rows)
        assert share >= 0.95, (model, [(f.slug, f.batch_size) for f in rows if not f.fits])
    # and not by a mile: the largest published batch uses a real share of the card
    ssd = [f for f in fits if f.model == "ssd"]
    assert max(f.required_gb / f.usable_gb for f in ssd) > 0.4


def test_model_beats_bare_roofline(scores) -> None:
    for s in scores:
        assert s.median_ratio < s.roofline_median_ratio, s.model
        assert s.spearman >= s.roofline_spearman, s.model


def test_spearman_helper(accuracy) -> None:
    mod = accuracy
    assert mod.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert mod.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert mod.median_ratio([2.0, 1.0], [1.0, 1.0]) == pytest.approx(1.5)


def test_amp_cnn_training_holds_on_the_operator_path(scores) -> None:
    """ResNet-50 and SSD300 under AMP are priced per operator, with the NCHW layout transforms
    cuDNN adds around each tensor-core convolution (methodology, "Operator tables"): they must
    stay at least as good as the whole-model path they replaced (1.19 / 1.33, Spearman
    0.983 / 0.986)."""
    amp = {s.model: s for s in scores if s.precision == "fp16" and s.model in ("resnet50", "ssd")}
    # 1.13 until 2026-12-05, when the power caps of 300 W workstation boards (RTX A6000, RTX
    # 6000 Ada) bound their 16-bit work: 1.16, within the whole-model path's 1.19
    assert amp["resnet50"].median_ratio <= 1.19 and amp["resnet50"].spearman >= 0.983
    assert amp["ssd"].median_ratio <= 1.25 and amp["ssd"].spearman >= 0.986
