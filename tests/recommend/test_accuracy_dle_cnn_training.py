"""CNN training under TensorFlow + XLA and eager PyTorch against NVIDIA DeepLearningExamples'
published one-GPU training tables for ResNeXt-101 32x4d, SE-ResNeXt-101 32x4d and
EfficientNet-B0 (the tuning set tests/data/dle_cnn_training.yaml; the held-out ResNet-50 rows
and their README are not in it).

Measured when written: TensorFlow + XLA 10 rows median ratio 1.08, bias 0.92, Spearman 0.988 per
operator with the NCHW transforms of DLE's NCHW compute format (whole-model: 1.38 / 0.72 / 0.939;
per operator without the transforms 1.60 / 0.63);
eager PyTorch 12 rows 1.11 / 0.93 / 0.993 with the AMP rows channels-last, as DLE's configs.yml
runs them (1.11 / 1.09 / 0.887 when the NCHW transforms were charged to them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.shipped import yamlio
from tests.support import assert_prices_every_row, assert_scored

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "dle_cnn_training.yaml"
HELDOUT = sorted((ROOT / "tests" / "data").glob("heldout_*.yaml"))


def _doc() -> dict:
    return yamlio.safe_load(FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scores(accuracy):
    return {s.regime: s for s in accuracy.dle_train_scores(ROOT / "data", FILE)}


def test_rows_are_sourced_and_name_known_presets_and_gpus() -> None:
    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets

    doc = _doc()
    presets = load_presets(ROOT / "data")
    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    for name, src in doc["sources"].items():
        # a pinned commit, not a moving branch
        assert "/blob/" in src["url"] and len(src["url"].split("/blob/")[1].split("/")[0]) == 40
        assert src["title"] and src["date"], name
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"] and row["regime"] == "cnn-training", row
        assert row["preset"] in presets and row["gpu_slug"] in slugs, row
        assert row["metric"] == "samples_per_s" and row["value"] > 0, row


def test_no_row_or_source_is_held_out() -> None:
    def key(r: dict) -> tuple:
        return (r["preset"], r["gpu_slug"], r["runtime"], r["precision"], r.get("batch_size"))

    held = [yamlio.safe_load(f.read_text(encoding="utf-8")) for f in HELDOUT]
    held_rows = {key(r) for d in held for r in d["measurements"] if r.get("preset")}
    held_urls = {s["url"] for d in held for s in (d.get("sources") or {}).values()}
    doc = _doc()
    assert not held_rows & {key(r) for r in doc["measurements"]}
    assert not held_urls & {s["url"] for s in doc["sources"].values()}
    assert not any("resnet50" in s["url"] for s in doc["sources"].values())


def test_the_engine_prices_every_row(accuracy) -> None:
    assert_prices_every_row(accuracy, ROOT / "data", FILE, len(_doc()["measurements"]))


def test_tensorflow_xla_cnn_training_is_sized_and_ranked(scores) -> None:
    # 10 rows of the 20.06 / 21.02 tables and the TF1 READMEs' first revision's 2 (20.03, cuDNN
    # 7.6.5), whose V100 AMP cells supersede 20.06's in the bands (every row scored; §6.7p "tt")
    assert_scored(scores["tensorflow-xla"], 12, 1.15, (0.85, 1.15), 0.95)
    # EfficientNet-B0's host-side AutoAugment is not modelled: the engine is fast there
    effnet = [r for r in scores.values() if r.regime.strip() == "efficientnet-b0"]
    assert effnet and effnet[0].bias < 0.6


def test_eager_pytorch_cnn_training_is_sized_and_ranked(scores) -> None:
    assert_scored(scores["pytorch"], 12, 1.2, (0.85, 1.2), 0.95)


def test_the_rows_join_the_training_band_calibration(accuracy) -> None:
    lambda_file = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    rows = accuracy._training_residuals(ROOT / "data", lambda_file)
    dle = [r for r in rows if r[2].startswith("dle ")]
    # every row but the two 20.06 (cuDNN 8.0.1 Preview) V100 AMP + XLA cells the READMEs' first
    # revision re-measured (accuracy.superseded_cells; tests/recommend/test_r34tt_*)
    assert len(dle) == len(_doc()["measurements"]) - 2
    assert {r[0] for r in dle} == {"train"}
    assert {r[1] for r in dle} == {"tensorflow-xla", "tensorflow", "pytorch"}
