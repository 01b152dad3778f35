"""llama.cpp's layer-split tuning rows (tests/data/llamacpp_layer_split.yaml) and the build rule
benchmarks/accuracy.py reads from a source's date (llamacpp_graphs): a run published before a
pull request was merged ran a build without it (docs/methodology.md §6.7m, ls)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from app.shipped import yamlio
from tests.support import assert_prices_every_row, held_out_source_urls, load_benchmark

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "llamacpp_layer_split.yaml"


@pytest.fixture(scope="module")
def acc() -> ModuleType:
    return load_benchmark("accuracy.py", "accuracy_r31ls")


@pytest.mark.parametrize(
    ("date", "want"),
    [
        ("2024-03-12", "none"),  # before PR #6766's CUDA graphs
        ("2024-05-07", "none"),
        ("2024-05-08", "one-gpu"),
        ("2024-05", "one-gpu"),  # a month alone: read at its end
        ("2025-05-29", "one-gpu"),  # before PR #13814 reached master
        ("2025-05-30", ""),
        ("2024", "one-gpu"),  # a year alone: read at its end
        ("2023", "none"),
        ("2026-02-08", ""),
        ("", ""),  # no date: today's build
    ],
)
def test_the_build_follows_the_date(acc: ModuleType, date: str, want: str) -> None:
    assert acc.llamacpp_graphs({"runtime": "llama.cpp", "backend": "cuda", "date": date}) == want


def test_other_runtimes_and_backends_keep_todays_build(acc: ModuleType) -> None:
    assert acc.llamacpp_graphs({"runtime": "vllm", "date": "2024-01-01"}) == ""
    assert (
        acc.llamacpp_graphs({"runtime": "llama.cpp", "backend": "metal", "date": "2024-01"}) == ""
    )
    # a source's date reaches its rows (source_stack), where the row states none
    doc = {"sources": {"s": {"date": "2024-03-12"}}}
    assert acc.source_stack(doc, {"source": "s"})["date"] == "2024-03-12"


def test_every_row_is_priced_and_none_is_held_out(acc: ModuleType) -> None:
    assert_prices_every_row(acc, ROOT / "data", FILE, 12)
    doc = yamlio.safe_load(FILE.read_text(encoding="utf-8"))
    urls = {s["url"] for s in doc["sources"].values()}
    assert not urls & held_out_source_urls(ROOT / "tests" / "data")


def test_the_march_2024_one_gpu_decode_pays_the_eager_gaps(acc: ModuleType) -> None:
    """PR #6017's one-A100 tg128 ran before CUDA graphs existed: priced eagerly it lands within
    5 % (0.93 when the graph was assumed); its prompt rows do not move (prompts are eager on
    every build)."""
    rows, _ = acc.evaluate_heldout(ROOT / "data", [FILE])
    (tg,) = [r for r in rows if r.regime == "llamacpp-decode"]
    assert 0.95 <= tg.ratio <= 1.05
