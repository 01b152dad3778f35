"""The held-out validation set (tests/data/heldout_*.yaml) and its scorer in
benchmarks/accuracy.py.

The set is never tuned on, so nothing here holds the engine to an accuracy figure: the tests
check that every row is complete, sourced and distinct from the tuning files, that the engine
prices every row through its public entry point, and that the scorer ranks and ratios as
documented. The figures themselves are printed by ``python benchmarks/accuracy.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FILES = sorted(DATA.glob("heldout_*.yaml"))
REQUIRED = {"regime", "source", "gpu_name", "gpu_slug", "precision", "batch_size", "runtime",
            "metric", "value", "unit"}  # fmt: skip
METRIC_NEEDS = {
    "samples_per_s": set(),
    "latency_ms": {"seq_len"},
    "denoise_steps_per_s": set(),
    "seconds_per_batch": {"steps"},
    "decode_tokens_per_s": {"prompt_tokens", "output_tokens", "num_gpus"},
    "tokens_per_s_per_gpu": {"seq_len", "num_gpus", "model"},
}


def _rows() -> list[tuple[str, dict]]:
    out = []
    for path in FILES:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        out += [(path.name, row) for row in doc["measurements"]]
    return out


def _models(name: str) -> dict:
    return yaml.safe_load((DATA / name).read_text(encoding="utf-8")).get("models") or {}


def test_held_out_files_carry_the_warning_and_their_sources() -> None:
    assert FILES, "no held-out files"
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# HELD-OUT VALIDATION SET — never tuned on.")
        doc = yaml.safe_load(text)
        for key, src in doc["sources"].items():
            assert src["url"].startswith("https://") and src["title"] and src["date"], key
        for row in doc["measurements"]:
            assert row["source"] in doc["sources"], row


def test_every_row_is_complete_and_names_known_presets_and_gpus(accuracy) -> None:
    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets

    presets = load_presets(ROOT / "data")
    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    for name, row in _rows():
        assert set(row) >= REQUIRED, (name, row)
        # a preset, or a decoder shape given in the file (with its source in the note)
        if "preset" in row:
            assert row["preset"] in presets, row
        else:
            shape = _models(name)[row["model"]]
            assert shape["params"] > 0 and shape["layers"] > 0 and shape["note"], row
        assert row["gpu_slug"] is None or row["gpu_slug"] in slugs, row
        assert row["metric"] in METRIC_NEEDS, row
        assert METRIC_NEEDS[row["metric"]] <= set(row), row
        assert row["value"] > 0 and row["batch_size"] >= 1, row


def _key(row: dict) -> tuple:
    return (
        row.get("gpu_slug"), row.get("preset") or row.get("model"), row.get("runtime"),
        row.get("precision"), int(row.get("batch_size") or 0), int(row.get("seq_len") or 0),
        int(row.get("num_gpus") or 1),
    )  # fmt: skip


def test_held_out_rows_do_not_repeat_a_tuning_row_or_each_other() -> None:
    tuning = yaml.safe_load((DATA / "runtime_inference.yaml").read_text(encoding="utf-8"))
    seen = {_key(r) for r in tuning["measurements"]}
    assert not seen & {_key(row) for _, row in _rows()}
    full = [(*_key(row), row["regime"], row["metric"], row.get("steps"), row.get("peft"),
             row.get("note")) for _, row in _rows()]  # fmt: skip
    assert len(full) == len(set(full)), "duplicate held-out rows"


def test_the_engine_prices_every_held_out_row(accuracy) -> None:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", FILES)
    assert not skipped
    assert len(rows) == len(_rows())
    assert all(math.isfinite(r.predicted) and r.predicted > 0 for r in rows)
    names = {r.regime for r in rows}
    assert {"cnn-training", "tf-cnn-inference", "diffusion-eager", "bert-tensorrt",
            "moe-decode", "eager-decode", "pytorch-cnn-inference", "llm-pretraining",
            "llm-finetuning"} <= names  # fmt: skip


def test_scores_rank_latencies_as_rates_and_ratio_symmetrically(accuracy) -> None:
    Row = accuracy.HeldoutRow
    rows = [
        # latencies: the engine orders the three GPUs as measured, at twice the time
        Row("r", "g", "a", "latency_ms", 1.0, 2.0),
        Row("r", "g", "b", "latency_ms", 2.0, 4.0),
        Row("r", "g", "c", "latency_ms", 4.0, 8.0),
    ]
    (score,) = accuracy.heldout_scores(rows)
    assert score.median_ratio == pytest.approx(2.0)
    assert score.bias == pytest.approx(2.0)  # measured rate ÷ predicted rate: engine too slow
    assert score.spearman == pytest.approx(1.0)
    assert score.group_spearman == [pytest.approx(1.0)]
    flipped = [Row("r", "g", r.slug, r.metric, r.measured, 1 / r.predicted) for r in rows]
    (worse,) = accuracy.heldout_scores(flipped)
    assert worse.spearman == pytest.approx(-1.0)


def test_groups_need_three_gpus(accuracy) -> None:
    Row = accuracy.HeldoutRow
    rows = [Row("r", "g1", "a", "samples_per_s", 1.0, 1.0), Row("r", "g1", "b", "samples_per_s", 2.0, 3.0),
            Row("r", "g2", "a", "samples_per_s", 5.0, 5.0)]  # fmt: skip
    (score,) = accuracy.heldout_scores(rows)
    assert score.group_spearman == []
    assert score.n == 3
