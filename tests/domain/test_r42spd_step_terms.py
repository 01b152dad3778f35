"""Speed pass (issue 21), terms worked out another way and found the same:
``llm_step.busiest_stage_share`` counted per GPU rather than placed layer by layer,
``rank.four_bit_terms`` reading the model's untied input table once rather than once a term,
and ``costs.upfront_at`` choosing between two ways in without a list, each against the direct
computation it replaces."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from app.domain import cost as costs
from app.domain import formats, llm_step, rank
from app.domain.workload import WorkloadSpec
from tests.domain.test_llm_bound_arrays import _job

DATA = Path(__file__).resolve().parents[2] / "data"


def _placed(layers: int, stages: int, output_unit: bool) -> float:
    """llama.cpp's placement as the loop had made it: layer i on GPU i·stages // units."""
    if stages <= 1 or layers <= 0:
        return 0.0
    units = layers + (1 if output_unit else 0)
    counts = [0] * stages
    for i in range(layers):
        counts[i * stages // units] += 1
    return max(counts) / layers


def test_the_busiest_stage_is_the_one_placing_each_layer_finds() -> None:
    for layers in range(-1, 200):
        for stages in range(0, 20):
            for unit in (False, True):
                assert llm_step.busiest_stage_share(layers, stages, unit) == _placed(
                    layers, stages, unit
                ), (layers, stages, unit)
    # the docstring's llama.cpp splits: 32 layers + the output over 4 GPUs run 9, 8, 8, 7
    assert llm_step.busiest_stage_share(32, 4, True) == 9 / 32
    assert llm_step.busiest_stage_share(32, 8, True) == 5 / 32
    assert llm_step.busiest_stage_share(126, 13, False) == 10 / 126  # Llama 3.1 405B


def _decode_direct(w: WorkloadSpec, copies: int) -> tuple[float, float] | None:
    """rank.decode_bytes as it had read: the untied table worked out for each use."""
    m = w.model
    kv = m.kv_values(w.seq_len + w.output_tokens / 2)
    if not kv or not m.params:
        return None
    dense, experts = llm_step.expert_split(m)
    if experts:
        k, e = m.active_experts or 0, m.experts or 1
        experts *= 1.0 - (1.0 - k / e) ** max(1.0, w.batch_size / max(1, copies))
    untied = rank.untied_input_params(m)
    read = dense - untied + experts
    table = rank.untied_input_params(m) * formats.table_value_bytes(
        w.precision, w.own_bits, format_bits=w.format_bits
    )
    weights = (w.weight_bytes - table) / (m.params - untied) * read
    return weights * max(1, copies), kv * formats.kv_bytes(w.kv_format) * w.batch_size


@pytest.mark.parametrize(
    "job",
    [
        {"preset": "llama-3-8b"},
        {"preset": "llama-3-8b", "precision": "int4", "runtime": "vllm"},
        {"preset": "mistral-7b", "runtime": "llama.cpp", "precision": "int4", "weight_bits": 4.84},
        {"preset": "mixtral-8x7b", "batch_size": 16},
    ],
    ids=str,
)
@pytest.mark.parametrize("copies", [1, 2])
def test_four_bit_terms_are_the_terms_each_read_alone(job: dict[str, object], copies: int) -> None:
    preset = str(job["preset"])
    work = _job(preset, **{k: v for k, v in job.items() if k != "preset"})
    ratio, decode, table, table4 = rank.four_bit_terms(work, copies)
    k = max(1, copies)
    assert decode is not None and decode == _decode_direct(work, copies)
    assert rank.decode_bytes(work, copies) == decode
    untied = rank.untied_input_params(work.model)
    own = formats.table_value_bytes(work.precision, work.own_bits, format_bits=work.format_bits)
    assert table == untied * own * k == rank.input_table_bytes(work) * k
    assert table4 == untied * formats.table_value_bytes("int4", work.own_bits) * k
    assert ratio == work.weight_bytes / formats.weight_bytes(
        work.model, "int4", work.own_bits, format_bits=work.format_bits
    )


def _upfront_by_min(
    purchase: float | None, hourly: float | None, horizon: float, acquisition: str
) -> float | None:
    """costs.upfront_at as it had read: the least of a list of the ways in."""
    options = []
    if acquisition in ("buy", "either") and purchase is not None:
        options.append(purchase)
    if acquisition in ("rent", "either") and hourly is not None:
        options.append(hourly * horizon)
    return min(options) if options else None


def test_the_way_in_is_the_least_of_those_allowed_as_min_picks_it() -> None:
    prices = [None, 0.0, -0.0, 1.0, 2.5, 8766.0, 1e9, math.nan, math.inf]
    for purchase, hourly, horizon, acquisition in itertools.product(
        prices, prices, [0.0, 1.0, 8766.0, math.nan, math.inf], ["buy", "rent", "either", "x"]
    ):
        got = costs.upfront_at(purchase, hourly, horizon, acquisition)
        # repr: a NaN, and which of a tie (0.0 or -0.0) min would have kept
        assert repr(got) == repr(_upfront_by_min(purchase, hourly, horizon, acquisition))
    assert costs.upfront_at(1000.0, 1.0, 8766.0, "either") == 1000.0
    assert costs.upfront_at(1000.0, 0.1, 8766.0, "either") == 0.1 * 8766.0
