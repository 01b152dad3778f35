"""Eager PyTorch VGG16 inference on GeForce cards (GTX 1080 Ti, RTX 2080 Ti) and a V100 against
u39kun/deep-learning-benchmark's README (the tuning set tests/data/u39kun_vgg16_inference.yaml,
issue 21: the first eager CNN inference rows on consumer cards).

Measured when added (2026-12-03): 6 rows, median ratio 1.11, bias 1.09 (the engine slightly
slow), Spearman 1.000; 1.14 / 1.14 before the model.half() rows stopped paying autocast's
per-pass weight casts (WorkloadSpec.half_weights), which the harness never runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.shipped import yamlio
from tests.support import assert_prices_every_row, assert_scored, held_out_source_urls

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "u39kun_vgg16_inference.yaml"


def _doc() -> dict:
    return yamlio.safe_load(FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scores(accuracy):
    return {s.regime: s for s in accuracy.dle_cnn_scores(ROOT / "data", FILE)}


def test_rows_are_sourced_and_not_from_the_held_out_or_spot_check_sources() -> None:
    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets

    doc = _doc()
    presets = load_presets(ROOT / "data")
    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    for name, src in doc["sources"].items():
        # a pinned commit, not a moving branch
        assert len(src["url"].split("/blob/")[1].split("/")[0]) == 40, name
        assert src["title"] and src["date"] and src["torch_version"], name
    assert not {s["url"] for s in doc["sources"].values()} & held_out_source_urls(
        ROOT / "tests" / "data"
    )
    assert all("pytorch-image-models" not in s["url"] for s in doc["sources"].values())
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"], row
        assert row["preset"] in presets and row["gpu_slug"] in slugs, row
        assert row["metric"] == "latency_ms" and row["value"] > 0, row
        # the harness's 16-bit runs are model.half(): no autocast over fp32 weights
        assert row.get("half_weights", False) == (row["precision"] == "fp16"), row


def test_the_engine_prices_every_row(accuracy) -> None:
    assert_prices_every_row(accuracy, ROOT / "data", FILE, len(_doc()["measurements"]))


def test_eager_vgg16_on_geforce_is_sized_and_ranked(scores) -> None:
    assert_scored(scores["pytorch-cnn-inference"], 6, 1.15, (0.95, 1.15), 0.95)


def test_the_rows_feed_the_cnn_inference_band(accuracy) -> None:
    rows = [r for r in accuracy.calibration_rows(
        ROOT / "data", ROOT / "tests" / "data" / "lambda_pytorch_train.yaml",
        ROOT / "tests" / "data" / "llm_inference.yaml",
    ) if r.workload.startswith("u39kun ")]  # fmt: skip
    assert len(rows) == 6 and {r.regime for r in rows} == {"infer-cnn"}
    assert {r.slug for r in rows} == {"gtx-1080-ti", "rtx-2080-ti", "v100-sxm2-16gb"}
