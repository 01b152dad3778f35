"""CNN inference under TensorFlow (± XLA) and eager PyTorch against NVIDIA DeepLearningExamples'
published tables for ResNeXt-101 32x4d, SE-ResNeXt-101 32x4d and EfficientNet-B0 (the tuning set
tests/data/dle_cnn_inference.yaml; the held-out ResNet-50 rows are not in it).

Measured when written (operator path with host dispatch per kernel): TensorFlow 188 rows median
ratio 1.45, bias 0.71, Spearman 0.932, and 1.29 / 0.87 / 0.947 once its NCHW compute format's
layout transforms were charged; eager PyTorch 108 rows 1.14 / 1.06 / 0.987, and 1.09 /
1.01 / 0.988 once the ResNeXt AMP rows ran channels-last as DLE's configs.yml sets. The
whole-model path scored 2.45 / 0.41 / 0.861 and 1.37 / 0.94 / 0.822. The host costs per kernel
were read off the batch-1 rows; the floors below sit under the measured values."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.shipped import yamlio
from tests.support import assert_prices_every_row, assert_scored

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "dle_cnn_inference.yaml"
HELDOUT = sorted((ROOT / "tests" / "data").glob("heldout_*.yaml"))


def _rows() -> list[dict]:
    return list(yamlio.safe_load(FILE.read_text(encoding="utf-8"))["measurements"])


@pytest.fixture(scope="module")
def scores(accuracy):
    return {s.regime: s for s in accuracy.dle_cnn_scores(ROOT / "data", FILE)}


def test_rows_are_sourced_and_name_known_presets_and_gpus() -> None:
    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets

    doc = yamlio.safe_load(FILE.read_text(encoding="utf-8"))
    presets = load_presets(ROOT / "data")
    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    for name, src in doc["sources"].items():
        # a pinned commit, not a moving branch
        assert "/blob/" in src["url"] and len(src["url"].split("/blob/")[1].split("/")[0]) == 40
        assert src["title"] and src["date"], name
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"], row
        assert row["preset"] in presets and row["gpu_slug"] in slugs, row
        assert row["metric"] == "samples_per_s" and row["value"] > 0, row


def test_no_row_is_a_held_out_row() -> None:
    def key(r: dict) -> tuple:
        return (r["preset"], r["gpu_slug"], r["runtime"], r["precision"], r.get("batch_size"))

    held = {key(r) for f in HELDOUT for r in yamlio.safe_load(f.read_text())["measurements"]
            if r.get("preset")}  # fmt: skip
    assert not held & {key(r) for r in _rows()}
    assert not {r["preset"] for r in _rows()} & {"resnet-50"}


def test_the_engine_prices_every_row(accuracy) -> None:
    assert_prices_every_row(accuracy, ROOT / "data", FILE, len(_rows()))


def test_eager_pytorch_cnn_inference_is_sized_and_ranked(scores) -> None:
    assert_scored(scores["pytorch-cnn-inference"], 108, 1.25, (0.85, 1.2), 0.95)


def test_tensorflow_cnn_inference_is_sized_and_ranked(scores) -> None:
    s = scores["tf-cnn-inference"]
    # 188 rows of the 20.06 / 21.02 tables and 96 of the TF1 READMEs' first revision (20.03,
    # cuDNN 7.6.5), whose T4 and V100 cells supersede 20.06's in the bands (every row scored)
    assert s.n == 284
    # DLE's TF ConvNets compute in NCHW: cuDNN's layout transforms around each tensor-core
    # convolution are charged (1.45 / 0.71 / 0.932 without them)
    assert s.median_ratio <= 1.35, s.median_ratio
    assert s.bias >= 0.8, s.bias
    assert s.spearman >= 0.94, s.spearman
