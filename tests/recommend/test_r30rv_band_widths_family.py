"""benchmarks/band_widths.py names the new-source term a base band's rows take: a runtime's cell
under a regime ("decode/llama.cpp") takes its regime's term, as bands.term_family gives a row
of that runtime; only a workload kind banded apart ("train-llm/fine-tuning") is a family of its
own. (EfficiencyTable.band_of_kind holds for any key under the regime, runtimes' cells too.)"""

from __future__ import annotations

from types import ModuleType

import pytest

from app.domain import bands
from app.shipped.rules import load_efficiency
from tests.support import ROOT, load_benchmark

TABLE = load_efficiency(ROOT / "data")


@pytest.fixture(scope="module")
def widths() -> ModuleType:
    return load_benchmark("band_widths.py", "bench_band_widths_r30rv")


def _row_family(regime: str, runtime: str, kind: str = "") -> str:
    x = bands.BandInputs(regime, "nvidia", "Hopper", runtime, "measured", kind=kind)
    return bands.term_family(x, TABLE)


@pytest.mark.parametrize("regime, runtime", [("decode", "llama.cpp"), ("prefill", "llama.cpp")])
def test_a_runtime_cell_takes_its_regimes_term(
    widths: ModuleType, regime: str, runtime: str
) -> None:
    key = f"{regime}/{runtime}"
    assert (key, "all") in TABLE.bands  # a runtime's own cell
    # the family a row of that runtime takes in the app
    assert widths._family(key, TABLE) == _row_family(regime, runtime) == regime
    if regime in TABLE.new_source:  # decode has a term of its own, unlike the pooled one
        assert TABLE.source_term(widths._family(key, TABLE)) == TABLE.new_source[regime]


def test_a_kind_banded_apart_is_its_own_family(widths: ModuleType) -> None:
    key = f"train-llm/{bands.FINE_TUNING}"
    assert TABLE.band_of_kind("train-llm", bands.FINE_TUNING)
    assert widths._family(key, TABLE) == _row_family("train-llm", "pytorch", bands.FINE_TUNING)
    assert widths._family(key, TABLE) == key
