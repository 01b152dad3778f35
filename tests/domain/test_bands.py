"""A row's band: the calibrated one for its regime, widened where the engine extrapolates."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.domain import bands
from app.domain.efficiency import EfficiencyTable

TABLE = EfficiencyTable(
    bands={("decode", "all"): (0.84, 1.14), ("infer", "nvidia"): (0.79, 1.36)},
    covered={
        "decode": (frozenset({"llama.cpp"}), frozenset({"Hopper", "Ampere"})),
        "infer": (frozenset({"tensorrt"}), frozenset({"Ampere"})),
    },
)
PLAIN = bands.BandInputs(
    regime="decode", vendor="nvidia", architecture="Hopper", runtime="llama.cpp",
    efficiency_source="prior",
)  # fmt: skip


def _with(**kw: object) -> bands.BandInputs:
    return replace(PLAIN, **kw)  # type: ignore[arg-type]


def _quad(edge: float, *factors: float) -> float:
    """A band edge (centre 1) with each factor added in quadrature in log space."""
    s = math.sqrt(sum(math.log(f) ** 2 for f in (edge, *factors)))
    return math.exp(s if edge >= 1 else -s)


def test_a_row_inside_the_calibration_set_gets_the_calibrated_band() -> None:
    lo, hi, basis = bands.band(PLAIN, TABLE)
    assert (lo, hi) == (0.84, 1.14)
    assert "split-conformal" in basis and "widened" not in basis


@pytest.mark.parametrize(
    ("kw", "widening"),
    [
        ({"runtime": "vllm"}, bands.UNMEASURED_RUNTIME),
        ({"architecture": "Blackwell"}, bands.UNMEASURED_ARCHITECTURE),
        ({"moe": True}, bands.MOE),
        ({"four_bit": True, "runtime": "llama.cpp"}, None),  # GGUF Q4 is what decode measured
        ({"derived_peak": True}, bands.DERIVED_PEAK),
        ({"num_gpus": 8}, bands.MULTI_GPU),
    ],
)
def test_each_extrapolation_widens_by_its_factor_and_says_why(
    kw: dict[str, object], widening: bands.Widening | None
) -> None:
    lo, hi, basis = bands.band(_with(**kw), TABLE)
    if widening is None:
        assert (lo, hi) == (0.84, 1.14)
        return
    # in quadrature with the row's own band, not multiplied onto its edges
    assert lo == pytest.approx(_quad(0.84, widening.low))
    assert hi == pytest.approx(_quad(1.14, widening.high))
    assert 0.84 * widening.low <= lo <= 0.84 and 1.14 <= hi <= 1.14 * widening.high
    assert widening.reason in basis


def test_four_bit_outside_the_measured_runtime_widens_the_low_side() -> None:
    lo, hi, basis = bands.band(_with(four_bit=True, runtime="transformers"), TABLE)
    run, four = bands.UNMEASURED_RUNTIME, bands.FOUR_BIT
    assert lo == pytest.approx(_quad(0.84, run.low, four.low))
    assert hi == pytest.approx(_quad(1.14, run.high, four.high))
    assert bands.FOUR_BIT.reason in basis and bands.UNMEASURED_RUNTIME.reason in basis


def test_widenings_combine_in_quadrature_not_as_a_product() -> None:
    ws = [bands.MOE, bands.FOUR_BIT, bands.UNMEASURED_RUNTIME]
    lo, hi = bands.combine(ws)
    product = math.prod(w.low for w in ws)
    assert product < lo < min(w.low for w in ws)
    assert math.log(lo) == pytest.approx(-math.sqrt(sum(math.log(w.low) ** 2 for w in ws)))
    assert hi >= max(w.high for w in ws)


def test_every_widening_brackets_one_and_states_a_reason() -> None:
    for w in (bands.UNMEASURED_RUNTIME, bands.UNMEASURED_ARCHITECTURE, bands.MOE,
              bands.FOUR_BIT, bands.DERIVED_PEAK, bands.MULTI_GPU):  # fmt: skip
        assert 0 < w.low <= 1 <= w.high and len(w.reason) > 20


def test_measured_rows_keep_their_narrow_band_but_not_past_moe() -> None:
    lo, hi, basis = bands.band(_with(efficiency_source="measured"), TABLE)
    assert (lo, hi) == bands.BAND_MEASURED and "measured" in basis
    mlo, _, mbasis = bands.band(_with(efficiency_source="measured", moe=True), TABLE)
    assert mlo == pytest.approx(_quad(bands.BAND_MEASURED[0], bands.MOE.low))
    assert "mixture-of-experts" in mbasis


def test_no_calibrated_band_falls_back_by_vendor() -> None:
    assert bands.band(_with(regime="train"), TABLE)[:2] == bands.BAND_MODELLED
    assert bands.band(_with(regime="train", vendor="amd"), TABLE)[:2] == bands.BAND_SPARSE_VENDOR


def test_band_regimes_keep_families_whose_errors_differ_apart() -> None:
    from app.domain.perf import family_regime

    def band_regime_infer(family: str) -> str:
        return family_regime(family, False)

    assert band_regime_infer("cnn") == "infer-cnn"
    assert band_regime_infer("diffusion") == "infer-diffusion"
    assert band_regime_infer("encoder") == band_regime_infer("vit") == "infer"


def test_a_time_band_is_the_inverted_rate_band() -> None:
    """A time is the inverse of a rate: the rate band ×0.8–×1.25 puts a predicted 200 ms
    between 200 ÷ 1.25 and 200 ÷ 0.8, and a measured time lies inside exactly when the
    measured rate lies inside the rate band."""
    low, high = bands.time_band(200.0, 0.8, 1.25)
    assert (low, high) == pytest.approx((160.0, 250.0))
    for measured_ms in (150.0, 160.5, 249.0, 260.0):
        rate_ratio = 200.0 / measured_ms  # measured ÷ predicted rate
        assert (low <= measured_ms <= high) == (0.8 <= rate_ratio <= 1.25)


def test_a_tables_bands_are_worked_out_once_and_never_read_from_another_table() -> None:
    table = EfficiencyTable(bands={("decode", "all"): (0.84, 1.14)})
    fresh = [bands._band(x, table) for x in (PLAIN, _with(num_gpus=8), _with(vendor="amd"))]
    got = [bands.band(x, table) for x in (PLAIN, _with(num_gpus=8), _with(vendor="amd"))]
    assert got == fresh
    # equal inputs are looked up, not worked out again (the same tuple comes back)
    assert bands.band(_with(), table) is bands.band(PLAIN, table)
    # another table (equal or not) keeps its own: a row read against it gets its band
    other = EfficiencyTable(bands={("decode", "all"): (0.5, 2.0)})
    assert bands.band(PLAIN, other)[:2] == (0.5, 2.0)
    assert bands.band(PLAIN, table)[:2] == (0.84, 1.14)
    # the cache is bounded: past the limit it starts afresh
    for k in range(bands.DERIVED_LIMIT + 5):
        bands.band(_with(num_gpus=k + 1), table)
    assert len(table.derived) <= bands.DERIVED_LIMIT


def test_a_workload_kind_with_its_own_band_takes_it_before_its_runtime_and_regime() -> None:
    # train-llm's fine-tuning rows are banded apart from its pretraining rows
    table = EfficiencyTable(
        bands={
            ("train-llm", "all"): (0.80, 1.07),
            ("train-llm/pytorch", "all"): (0.79, 1.07),
            ("train-llm/fine-tuning", "all"): (0.68, 1.28),
        },
        centres={("train-llm/fine-tuning", "all"): 0.97},
    )
    x = bands.BandInputs("train-llm", "nvidia", "Ampere", "pytorch", "prior")
    ft = replace(x, kind=bands.FINE_TUNING)
    assert bands.band(x, table)[:2] == (0.79, 1.07)  # pretraining: the runtime's band
    lo, hi, basis = bands.band(ft, table)
    assert (lo, hi) == (0.68, 1.28)
    assert "published train-llm fine-tuning results" in basis and "(0.97)" in basis
    # a kind with no band of its own in the regime falls back to the runtime's, then the regime's
    assert bands.band(replace(ft, regime="train"), table)[:2] == bands.BAND_MODELLED
    assert bands.band(replace(ft, runtime="megatron"), table)[:2] == (0.68, 1.28)
    assert not table.band_of_kind("train-llm", "")
    assert table.band(x.regime, "nvidia", "megatron", "") == (0.80, 1.07)


def test_a_span_the_regimes_multi_gpu_runs_lack_is_an_extrapolation() -> None:
    # decode's multi-GPU runs are tensor parallel: a layer split is widened by the `span`
    # term (its stated fallback without one), a tensor-parallel or one-GPU row is not
    table = EfficiencyTable(
        bands=TABLE.bands,
        covered=TABLE.covered,
        multi_gpu=frozenset({"decode"}),
        multi_gpu_spans={"decode": frozenset({"tensor"})},
    )
    split = _with(num_gpus=2, span="layers")
    lo, hi, basis = bands.band(split, table)
    assert bands.MULTI_GPU_SPAN.reason in basis
    assert (lo, hi) == pytest.approx((_quad(0.84, 0.85), _quad(1.14, 1.10)))
    for x in (_with(num_gpus=2, span="tensor"), _with(span="layers"), _with(num_gpus=2)):
        assert bands.band(x, table)[:2] == (0.84, 1.14)
    # calibrated: the term the tuning sets' multi-GPU workloads needed (x1 names it, no wider)
    nil = replace(table, extrapolation={"span": (1.0, 1.0)})
    lo, hi, basis = bands.band(split, nil)
    assert (lo, hi) == (0.84, 1.14) and bands.NIL_TERM_NOTE in basis
    assert bands.MULTI_GPU_SPAN.reason in basis
    # a regime whose multi-GPU spans are not recorded counts every span as measured
    legacy = replace(table, multi_gpu_spans={})
    assert bands.band(split, legacy)[:2] == (0.84, 1.14)
