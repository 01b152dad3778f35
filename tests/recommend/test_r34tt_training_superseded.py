"""The pre-release rule holds for CNN training too (benchmarks/accuracy.py ``superseded_cells``;
docs/methodology.md §6.7p "tt"): the TF1 ResNeXt-101 / SE-ResNeXt-101 READMEs' 20.06 training
tables (NGC 20.06, cuDNN 8.0.1 Preview) give way, cell by cell, to the same READMEs' first
revision (NGC 20.03, cuDNN 7.6.5), whose DGX-1 V100 1-GPU rows are in
tests/data/dle_cnn_training.yaml."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "dle_cnn_training.yaml"
LAMBDA = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
PREVIEW = ("nvidia-dle-tf-rnx101-train", "nvidia-dle-tf-sernx101-train")
RELEASED = ("nvidia-dle-tf-rnx101-train-2003", "nvidia-dle-tf-sernx101-train-2003")
V100 = "v100-sxm2-16gb"
BLOB = "https://github.com/x/y/blob/{}/README.md"
IMAGENET_TRAIN = 1_281_167  # ILSVRC-2012 training images: one epoch


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return dict(yamlio.safe_load(FILE.read_text(encoding="utf-8")))


def _rows(doc: dict[str, Any], sources: tuple[str, ...]) -> list[dict[str, Any]]:
    return [r for r in doc["measurements"] if r["source"] in sources]


def _train(source: str, runtime: str, precision: str, batch: int) -> dict[str, Any]:
    return {
        "regime": "cnn-training", "source": source, "preset": "resnext101-32x4d",
        "gpu_slug": V100, "precision": precision, "batch_size": batch, "runtime": runtime,
        "metric": "samples_per_s", "value": 1.0,
    }  # fmt: skip


def test_a_training_cell_is_superseded_only_by_the_same_runtime(accuracy: ModuleType) -> None:
    """XLA or not is part of the cell: a released graph-mode row does not speak for a
    pre-release XLA one of the same model, GPU, precision and batch."""
    fixture: dict[str, Any] = {
        "sources": {
            "pre": {"url": BLOB.format("a" * 40), "prerelease": True},
            "ga": {"url": BLOB.format("b" * 40)},
        },
        "measurements": [
            _train("pre", "tensorflow-xla", "fp16", 128),  # "ga" re-measured it: superseded
            _train("pre", "tensorflow-xla", "fp32", 64),  # "ga" has FP32 without XLA only
            _train("ga", "tensorflow-xla", "fp16", 128),
            _train("ga", "tensorflow", "fp32", 64),
        ],
    }
    stale = accuracy.superseded_cells(fixture)
    assert [g for _, _, g in stale] == [
        "resnext101-32x4d tensorflow-xla fp16 128 samples_per_s pre"
    ]


def test_the_20_06_v100_amp_xla_cells_are_superseded_and_nothing_else(accuracy, doc) -> None:
    stale = accuracy.superseded_cells(doc)
    assert {(s, g) for s, g, _ in stale} == {(s, V100) for s in PREVIEW}
    assert all(" tensorflow-xla fp16 " in g for _, _, g in stale)
    # the A100 rows (no released cuDNN of the time ran Ampere) and the V100's FP32 + XLA rows
    # (the first revision timed FP32 without XLA) stay in
    assert len(_rows(doc, PREVIEW)) - len(stale) == 6


def test_the_first_revision_is_pinned_and_names_its_library(doc) -> None:
    for key in RELEASED:
        src = doc["sources"][key]
        assert "/blob/fed7ba99cde958fda12c9e81d12b3d7e738e0590/" in src["url"]
        assert "20.03-tf1" in src["title"] and "cuDNN 7.6.5" in src["title"]
        assert not src.get("prerelease")
    for key in PREVIEW:
        assert doc["sources"][key]["prerelease"] is True
        assert "20.06-tf1" in doc["sources"][key]["title"]
        assert "cuDNN 8.0.1 Preview" in doc["sources"][key]["title"]
    rows = _rows(doc, RELEASED)
    assert len(rows) == 6 and {r["gpu_slug"] for r in rows} == {V100}


def test_the_first_revision_rows_agree_with_its_own_time_to_train_table(doc) -> None:
    """The README's 1-GPU 'Training time for 90 Epochs' table (DGX-1) is derived from its
    throughput rows: each row, over 90 ImageNet epochs, gives the hours the same README states
    for its column (mixed precision + XLA / mixed precision / FP32), so the runtime each row is
    mapped to (XLA or not) is the README's."""
    hours = {  # (preset, runtime, precision) -> '~Nh' of the README's 1-GPU row
        ("resnext101-32x4d", "tensorflow-xla", "fp16"): 54,
        ("resnext101-32x4d", "tensorflow", "fp16"): 75,
        ("resnext101-32x4d", "tensorflow", "fp32"): 225,
        ("se-resnext101-32x4d", "tensorflow-xla", "fp16"): 71,
        ("se-resnext101-32x4d", "tensorflow", "fp16"): 112,
        ("se-resnext101-32x4d", "tensorflow", "fp32"): 253,
    }
    rows = _rows(doc, RELEASED)
    assert {(r["preset"], r["runtime"], r["precision"]) for r in rows} == set(hours)
    for r in rows:
        h = 90 * IMAGENET_TRAIN / r["value"] / 3600
        assert abs(h - hours[(r["preset"], r["runtime"], r["precision"])]) < 1.0, (r, h)


def test_the_se_resnext_xla_rows_batch_barely_moves_its_ratio(accuracy, doc, tmp_path) -> None:
    """Its 'XLA Enabled' table's header says batch 128 where its first table says 96 for the
    same 285.99 images/s: the row is taken at 96; at 128 the engine's ratio moves under 2 %."""
    (row,) = [
        r
        for r in _rows(doc, RELEASED)
        if r["preset"].startswith("se-") and r["runtime"] == "tensorflow-xla"
    ]
    assert row["batch_size"] == 96
    alt = tmp_path / "alt.yaml"
    # JSON is YAML: the file's sources with the one row at both batches
    alt.write_text(
        json.dumps({**doc, "measurements": [row, {**row, "batch_size": 128}]}), encoding="utf-8"
    )
    at96, at128 = (r.ratio for r in accuracy.evaluate_heldout(ROOT / "data", [alt])[0])
    assert abs(at128 / at96 - 1) < 0.02


def test_calibration_takes_the_released_training_rows_and_scores_every_row(
    accuracy: ModuleType, doc
) -> None:
    cal = [
        r for r in accuracy._training_residuals(ROOT / "data", LAMBDA) if r[2].startswith("dle ")
    ]
    # the 20.06 V100 AMP + XLA rows calibrate nothing; their A100 and FP32 rows do
    assert not [c for c in cal if c[5] in PREVIEW and c[3] == V100 and " fp16 " in c[2]]
    assert {(c[5], c[3]) for c in cal if c[5] in PREVIEW} == {
        (s, g) for s in PREVIEW for g in (V100, "a100-sxm4-40gb")
    }
    assert {c[5] for c in cal} >= set(RELEASED)
    assert len(cal) == len(doc["measurements"]) - 2
    assert {c[1] for c in cal} == {"tensorflow", "tensorflow-xla", "pytorch"}
    # every row is still scored in the file's own section
    scored = accuracy.dle_train_scores(ROOT / "data", FILE)
    n = {s.regime: s.n for s in scored}
    assert n["tensorflow-xla"] + n["tensorflow"] + n["pytorch"] == len(doc["measurements"])


def test_the_graph_mode_amp_rows_are_where_the_engine_is_fast(accuracy, doc) -> None:
    """Found, not tuned (§6.7p "tt"): graph-mode AMP (no XLA) on these grouped-convolution,
    squeeze-excitation models runs well below the engine's figure, which the Lambda ResNet-50 /
    VGG16 rows calibrate; the same README's XLA rows sit near 1."""
    rows = {
        (r.group.split()[0], r.group.split()[1], r.group.split()[2]): r.ratio
        for r in accuracy.evaluate_heldout(ROOT / "data", [FILE])[0]
        if r.source in RELEASED
    }
    graph_amp = [v for (_, rt, p), v in rows.items() if rt == "tensorflow" and p == "fp16"]
    xla_amp = [v for (_, rt, p), v in rows.items() if rt == "tensorflow-xla"]
    assert len(graph_amp) == 2 and max(graph_amp) < 0.8
    assert len(xla_amp) == 2 and all(0.8 < v < 1.25 for v in xla_amp)
