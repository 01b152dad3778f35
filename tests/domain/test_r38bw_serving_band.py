"""A serving row's band carries the MoE and 4-bit extrapolation terms as an LLM inference row's
does (bw, 2026-12-07): the serving band is fitted on the tuning sets' dense, standard-format
rows alone (benchmarks/accuracy.py bands_of), their MoE and fp4 results held out of it as the
units of those terms, so a serving row of either kind is outside what its base band measured.
It had taken the dense band: an MoE row on vLLM was drawn as narrow as a dense one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import bands, rank
from app.domain import serving as sv
from app.domain.efficiency import EfficiencyTable
from app.domain.workload import ModelSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_8B

# an MoE decoder: the dense fixture's shape with routed experts (only ``experts`` is read)
MOE = replace(LLAMA3_8B, experts=8, active_experts=2)


@pytest.fixture(scope="module")
def table() -> EfficiencyTable:
    return load_efficiency()


def _runtime(table: EfficiencyTable, name: str) -> sv.RuntimeProfile:
    return sv.runtime_profile(table, name, table.profile(H100, "cuda", name, "bf16", "decode"))


def _inputs(
    table: EfficiencyTable, model: ModelSpec, weights: str, regime: str = "serving"
) -> bands.BandInputs:
    cfg = sv.ServingConfig(1, 1, weights, "bf16", "vllm")
    return rank.serving_band_inputs(H100, cfg, _runtime(table, "vllm"), regime, model=model)


@pytest.mark.parametrize(
    ("model", "weights", "moe", "four_bit"),
    [
        (LLAMA3_8B, "bf16", False, False),
        (LLAMA3_8B, "fp8", False, False),
        (LLAMA3_8B, "int4", False, True),
        (LLAMA3_8B, "fp4", False, True),
        (MOE, "bf16", True, False),
        (MOE, "fp4", True, True),
    ],
)
def test_serving_inputs_flag_experts_and_4_bit_weights(
    table: EfficiencyTable, model: ModelSpec, weights: str, moe: bool, four_bit: bool
) -> None:
    for regime in ("serving", "prefill"):
        x = _inputs(table, model, weights, regime)
        assert (x.moe, x.four_bit) == (moe, four_bit)


def test_an_moe_serving_row_is_widened_by_the_moe_term(table: EfficiencyTable) -> None:
    """Same GPU, runtime and weights: the MoE model's band is the dense one's with the
    calibrated MoE term added in quadrature, wider on both sides, and its basis says why."""
    assert table.extrapolation.get("moe") not in (None, (1.0, 1.0))
    dense_lo, dense_hi, dense_basis = bands.band(_inputs(table, LLAMA3_8B, "bf16"), table)
    lo, hi, basis = bands.band(_inputs(table, MOE, "bf16"), table)
    assert lo < dense_lo and hi > dense_hi
    assert bands.MOE.reason in basis and bands.MOE.reason not in dense_basis


def test_4_bit_serving_weights_are_widened_by_the_4_bit_term(table: EfficiencyTable) -> None:
    # the shipped term may calibrate to ×1 (r39bx: then the row carries the "needed no
    # widening" note); a non-nil term shows the flag reaches the band
    if table.extrapolation.get("four_bit") in (None, (1.0, 1.0)):
        table = replace(table, extrapolation={**table.extrapolation, "four_bit": (0.92, 1.09)})
    lo8, hi8, basis8 = bands.band(_inputs(table, LLAMA3_8B, "fp8"), table)
    lo4, hi4, basis4 = bands.band(_inputs(table, LLAMA3_8B, "fp4"), table)
    assert lo4 < lo8 and hi4 > hi8
    assert bands.FOUR_BIT.reason in basis4 and bands.FOUR_BIT.reason not in basis8
