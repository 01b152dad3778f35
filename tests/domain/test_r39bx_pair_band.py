"""A runtime and an architecture each measured in a regime, but never together, is an
extrapolation of its own: the runtime × architecture widening (issue 23)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import bands, conformal
from app.domain.efficiency import EfficiencyTable, parse_table

# serving as the tuning sets hold it, cut down: vLLM measured on Ada and TensorRT-LLM on Hopper
TABLE = EfficiencyTable(
    bands={("serving", "all"): (0.80, 1.25)},
    centres={("serving", "all"): 1.05},
    covered={
        "serving": (frozenset({"vllm", "tensorrt-llm"}), frozenset({"Ada Lovelace", "Hopper"}))
    },
    covered_pairs={"serving": frozenset({("vllm", "Ada Lovelace"), ("tensorrt-llm", "Hopper")})},
    multi_gpu=frozenset({"serving"}),
    extrapolation={"runtime_architecture": (0.70, 1.40)},
)
ROW = bands.BandInputs(
    regime="serving", vendor="nvidia", architecture="Hopper", runtime="vllm",
    efficiency_source="prior",
)  # fmt: skip


def _reasons(x: bands.BandInputs, table: EfficiencyTable) -> list[str]:
    return [w.reason for w in bands.widenings(x, table, calibrated=True)]


def test_a_runtime_and_an_architecture_covered_apart_get_the_pair_term() -> None:
    ws = bands.widenings(ROW, TABLE, calibrated=True)
    pair = [w for w in ws if w.reason == bands.UNMEASURED_PAIR.reason]
    assert [(w.low, w.high) for w in pair] == [(0.70, 1.40)]
    # neither the runtime nor the architecture widening: each is covered on its own
    assert bands.UNMEASURED_RUNTIME.reason not in _reasons(ROW, TABLE)
    assert bands.UNMEASURED_ARCHITECTURE.reason not in _reasons(ROW, TABLE)
    lo, hi, basis = bands.band(ROW, TABLE)
    want = conformal.Spread.of(0.80, 1.25, 1.05).widened([(0.70, 1.40)]).band()
    assert (lo, hi) == (pytest.approx(want[0]), pytest.approx(want[1]))
    assert "this runtime on this architecture" in basis


def test_a_covered_pair_gets_no_pair_term() -> None:
    for x in (replace(ROW, architecture="Ada Lovelace"), replace(ROW, runtime="tensorrt-llm")):
        assert bands.UNMEASURED_PAIR.reason not in _reasons(x, TABLE)
        assert bands.band(x, TABLE)[:2] == (0.80, 1.25)


def test_no_pair_data_leaves_the_band_as_it_was() -> None:
    # a regime whose coverage does not say which runtime ran where: no pair is judged
    legacy = replace(TABLE, covered_pairs={})
    assert bands.band(ROW, legacy)[:2] == (0.80, 1.25)
    # a regime without `covered` data at all: no extrapolation widening of any kind
    bare = replace(TABLE, covered={}, covered_pairs={})
    assert bands.widenings(ROW, bare, calibrated=True) == []


def test_an_uncovered_runtime_or_architecture_is_not_also_a_pair() -> None:
    sglang = replace(ROW, runtime="sglang")  # no serving row runs it: the runtime widening
    assert _reasons(sglang, TABLE) == [bands.UNMEASURED_RUNTIME.reason]
    ampere = replace(ROW, architecture="Ampere")  # no serving row on Ampere
    assert _reasons(ampere, TABLE) == [bands.UNMEASURED_ARCHITECTURE.reason]


def test_without_a_calibrated_term_the_stated_factors_hold_and_x1_is_a_note() -> None:
    stated = replace(TABLE, extrapolation={})
    (w,) = bands.widenings(ROW, stated, calibrated=True)
    assert (w.low, w.high) == (bands.UNMEASURED_PAIR.low, bands.UNMEASURED_PAIR.high)
    nil = replace(TABLE, extrapolation={"runtime_architecture": (1.0, 1.0)})
    lo, hi, basis = bands.band(ROW, nil)
    assert (lo, hi) == (0.80, 1.25)
    assert bands.NIL_TERM_NOTE in basis and bands.UNMEASURED_PAIR.reason in basis


def test_the_table_reads_each_runtimes_architectures() -> None:
    doc = {
        "bands": {
            "covered": {
                "serving": {
                    "runtimes": ["tensorrt-llm", "vllm"],
                    "architectures": ["Ada Lovelace", "Hopper"],
                    "pairs": {"tensorrt-llm": ["Hopper"], "vllm": ["Ada Lovelace"]},
                },
                "decode": {"runtimes": ["llama.cpp"], "architectures": ["Ampere"]},
            }
        }
    }
    table = parse_table(doc)
    assert table.covered_pairs == TABLE.covered_pairs  # decode: no pairs, none judged
