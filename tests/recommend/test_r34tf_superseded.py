"""A pre-release library's rows that the same document re-measured on a released one calibrate
nothing (benchmarks/accuracy.py ``superseded_cells``; issue #23, docs/methodology.md §6.7p "tf"):
the TF1 ResNeXt-101 / SE-ResNeXt-101 READMEs' T4 and V100 tables on NGC 20.06 (cuDNN 8.0.1
Preview) give way to the same READMEs' first revision (NGC 20.03, cuDNN 7.6.5)."""

from __future__ import annotations

import statistics
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "dle_cnn_inference.yaml"
PREVIEW = ("nvidia-dle-tf-rnx101", "nvidia-dle-tf-sernx101")
RELEASED = ("nvidia-dle-tf-rnx101-2003", "nvidia-dle-tf-sernx101-2003")
BLOB = "https://github.com/x/y/blob/{}/README.md"


def _row(source: str, gpu: str, batch: int, value: float = 1.0) -> dict[str, Any]:
    return {
        "regime": "tf-cnn-inference", "source": source, "preset": "resnext101-32x4d",
        "gpu_slug": gpu, "precision": "fp16", "batch_size": batch, "runtime": "tensorflow",
        "metric": "samples_per_s", "value": value,
    }  # fmt: skip


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return dict(yamlio.safe_load(FILE.read_text(encoding="utf-8")))


def test_only_a_prerelease_cell_the_same_document_re_measured_is_superseded(
    accuracy: ModuleType,
) -> None:
    pre: dict[str, Any] = {"url": BLOB.format("a" * 40), "prerelease": True}
    fixture: dict[str, Any] = {
        "sources": {
            "pre": pre,
            "ga": {"url": BLOB.format("b" * 40)},  # the same README at another commit
            "other-pre": {"url": "https://github.com/x/z/blob/c/README.md", "prerelease": True},
        },
        "measurements": [
            _row("pre", "t4", 8),  # re-measured by "ga": superseded
            _row("pre", "t4", 16),  # no released figure for this batch: kept
            _row("pre", "a100-sxm4-40gb", 8),  # nor for this GPU: kept
            _row("ga", "t4", 8),
            _row("other-pre", "t4", 8),  # another document: "ga" does not speak for it
        ],
    }
    stale = accuracy.superseded_cells(fixture)
    assert {(s, g) for s, g, _ in stale} == {("pre", "t4")}
    ((_, _, group),) = stale
    assert " 8 " in f" {group} " and group.endswith(" pre")
    # without the mark nothing is superseded, whatever the revisions say
    pre["prerelease"] = False
    assert not accuracy.superseded_cells(fixture)


def test_sources_without_a_url_name_no_common_document(accuracy: ModuleType) -> None:
    """r34fx: every URL-less source had the document "", so a pre-release one was superseded
    by any other URL-less source that measured the same cell."""
    fixture: dict[str, Any] = {
        "sources": {"pre": {"title": "a", "prerelease": True}, "ga": {"title": "b"}},
        "measurements": [_row("pre", "t4", 8), _row("ga", "t4", 8)],
    }
    assert not accuracy.superseded_cells(fixture)


def test_the_20_06_t4_and_v100_cells_are_superseded_and_no_a100_one(accuracy, doc) -> None:
    stale = accuracy.superseded_cells(doc)
    assert len(stale) == 96  # 2 models x 2 GPUs x 3 tables x 8 batches
    assert {s for s, _, _ in stale} == set(PREVIEW)
    assert {g for _, g, _ in stale} == {"t4", "v100-sxm2-16gb"}
    # every released row has its 20.06 counterpart (the pairing is complete)
    released = [r for r in doc["measurements"] if r["source"] in RELEASED]
    assert len(released) == len(stale)


def test_the_released_revision_is_pinned_and_names_its_library(doc) -> None:
    for key in RELEASED:
        src = doc["sources"][key]
        assert "/blob/fed7ba99cde958fda12c9e81d12b3d7e738e0590/" in src["url"]
        assert "20.03-tf1" in src["title"] and "cuDNN 7.6.5" in src["title"]
        assert not src.get("prerelease")
    for key in PREVIEW:
        assert doc["sources"][key]["prerelease"] is True
        assert "cuDNN 8.0.1 Preview" in doc["sources"][key]["title"]


def test_the_t4_deficit_is_the_preview_stacks_not_the_cards(doc) -> None:
    """Measured, no engine: at batch > 8 the released revision runs the same harness 1.5x or
    more faster on the T4 in every table, while on the V100 under XLA the two agree within 10 %."""

    def speed(source: tuple[str, ...]) -> dict[tuple[Any, ...], float]:
        return {
            (r["preset"][:2], r["gpu_slug"], r["runtime"], r["precision"], r["batch_size"]): r[
                "value"
            ]
            for r in doc["measurements"]
            if r["source"] in source
        }

    old, new = speed(PREVIEW), speed(RELEASED)
    gains: dict[tuple[Any, ...], list[float]] = {}
    for k, v in new.items():
        if k[-1] > 8:
            gains.setdefault(k[:-1], []).append(v / old[k])
    t4 = {k: statistics.median(g) for k, g in gains.items() if k[1] == "t4"}
    assert len(t4) == 6 and min(t4.values()) >= 1.5, t4
    xla = [
        g for k, gs in gains.items() if k[1:3] == ("v100-sxm2-16gb", "tensorflow-xla") for g in gs
    ]
    assert 0.9 <= statistics.median(xla) <= 1.1


def test_calibration_takes_the_released_rows_and_scores_every_row(
    accuracy: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # only the DLE file: the other batch-inference files are not this rule's
    for name in ("RUNTIME_FILE", "GEFORCE_CNN_FILE", "DIFFUSION_FILE", "DIFFUSION_COMPILED_FILE"):
        monkeypatch.setattr(accuracy, name, ROOT / "missing.yaml")
    monkeypatch.setattr(accuracy, "hf_vision_residuals", lambda data_dir: [])
    cal = accuracy._batch_inference_residuals(ROOT / "data")
    tf = [c for c in cal if c[1].startswith("tensorflow")]
    sources = {(c[5], c[3]) for c in tf}
    assert not {(s, g) for s, g in sources if s in PREVIEW} & {
        (s, g) for s in PREVIEW for g in ("t4", "v100-sxm2-16gb")
    }
    assert {g for s, g in sources if s in PREVIEW} == {"a100-sxm4-40gb"}
    assert {g for s, g in sources if s in RELEASED} == {"t4", "v100-sxm2-16gb"}
    assert len(tf) == 188  # as many as before: 96 rows swapped for their released figures
    scored = accuracy.dle_cnn_scores(ROOT / "data", FILE)
    assert {s.regime: s.n for s in scored}["tf-cnn-inference"] == 284
