"""The llama.cpp MoE batch-1 decode tuning set (tests/data/llamacpp_moe_decode.yaml: llama-bench
tg128 of Qwen3-30B-A3B and gpt-oss-20b) and its place in benchmarks/accuracy.py: every row
sourced and priced, none a held-out row, its results calibrating the decode band as the runtime
llama.cpp and every row an MoE unit."""

from __future__ import annotations

from pathlib import Path

from app.shipped import yamlio
from tests.support import held_out_source_urls

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
TUNING = DATA / "llamacpp_moe_decode.yaml"


def _doc(path: Path) -> dict:
    return yamlio.safe_load(path.read_text(encoding="utf-8"))


def test_every_row_is_sourced_and_none_is_held_out() -> None:
    doc = _doc(TUNING)
    assert not {s["url"] for s in doc["sources"].values()} & held_out_source_urls(DATA)
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"] and row["runtime"] == "llama.cpp"
        assert row["batch_size"] == 1 and row["test"] == "tg128"
        assert row["preset"] in ("qwen3-30b-a3b", "gpt-oss-20b")


def test_the_rows_are_priced_and_calibrate_decode_as_llamacpp_moe(accuracy) -> None:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [TUNING])
    assert not any(skipped.values()) and len(rows) == len(_doc(TUNING)["measurements"])
    res = accuracy.llamacpp_moe_residuals(ROOT / "data")
    assert {(r[0], r[1]) for r in res} == {("decode", "llama.cpp")}
    presets = accuracy.load_presets(ROOT / "data")
    flags = [accuracy._flags(r[0], r[2], presets) for r in res]
    assert all(f[0] for f in flags) and not any(f[2] for f in flags)
    assert [f[1] for f in flags] == [" int4 " in r[2] for r in res]
