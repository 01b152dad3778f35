"""A row's words in the reader's terms and from its own numbers: the wall circuit a
multi-card build needs, value per dollar in output tokens or images, a layer split's speed,
what 4-bit weights buy a decode step, and the usable memory the verdict gives."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec, Price
from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, RESNET50, RTX3090, RTX4090
from tests.domain.fixtures import llm_inference as _plain

TABLE = load_efficiency()


def llm_inference(**kw: object) -> WorkloadSpec:
    """An LLM inference job on the shipped runtime table (its spans, its decode constants)."""
    return _plain(efficiency=TABLE, **kw)


def _cand(
    gpu: GpuSpec, work: WorkloadSpec | None = None, n: int = 1, available: float | None = None
) -> rank.Candidate:
    work = work or llm_inference()
    est = perf.estimate(gpu, work, num_gpus=n)
    c = cost.estimate_cost(gpu, n, est.throughput, 10.0)
    return rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=n),
        available_gb=gpu.memory_gb if available is None else available,
        perf=est,
        cost=c,
    )


def _power(c: rank.Candidate) -> str | None:
    return next((t for t in rank.tips(c, c.work) if "GPU power" in t), None)


# ---------------------------------------------------------------- power at the wall


def test_four_desktop_cards_are_told_the_circuit_they_need() -> None:
    """4 × 450 W and a workstation host draw ~2.3 kW at the wall: over a 15 A/120 V circuit's
    1,440 W continuous (NEC's 80 % rule), within a 16 A/230 V one's 3,680 W."""
    c = _cand(replace(RTX4090, tdp_w=450.0, slot_width=3.0), n=4)
    tip = _power(c)
    assert tip is not None
    wall = (4 * 450 + rank.HOST_W_MORE_CARDS) / rank.PSU_EFFICIENCY
    assert 2_200 < wall < 2_400
    assert f"about {rank.significant(wall)} W at the wall" in tip
    assert "over a 20 A/120 V circuit's 1,920 W continuous" in tip
    assert "20 A/240 V circuit (3,840 W continuous) or a 16 A/230 V one (3,680 W)" in tip
    # the supply sizing stays, and it is still one tip
    assert "1,800 W of GPU power" in tip and "2,700 W" in tip
    assert sum("GPU power" in t for t in rank.tips(c, c.work)) == 1


def test_two_desktop_cards_fit_a_household_circuit_and_near_it_is_said() -> None:
    two = _power(_cand(replace(RTX4090, tdp_w=450.0), n=2))
    assert two is not None and "within a 15 A/120 V circuit's 1,440 W continuous" in two
    # 2 × 575 W and a desktop CPU: a floor of ~1.43 kW, at the limit before the board and fans
    near = _power(_cand(replace(RTX4090, tdp_w=575.0), n=2))
    assert near is not None and "near a 15 A/120 V circuit's 1,440 W continuous" in near
    # eight 450 W cards are more than even a 16 A/230 V circuit carries
    many = _power(_cand(replace(RTX4090, tdp_w=450.0), n=8))
    assert many is not None and "over even a 16 A/230 V circuit's 3,680 W" in many


def test_the_circuit_constants_are_the_rules_they_cite() -> None:
    assert pytest.approx(1_440.0) == rank.CIRCUIT_120V_W  # 15 A × 120 V × 80 %
    assert pytest.approx(3_680.0) == rank.CIRCUIT_230V_W  # 16 A × 230 V
    # a 1,600 W supply at full load draws more than a 15 A/120 V circuit's continuous load
    assert rank.DESKTOP_PSU_W / rank.PSU_EFFICIENCY > rank.CIRCUIT_120V_W


def test_bought_pcie_datacenter_cards_get_a_server_power_line_rented_ones_do_not() -> None:
    a100_pcie = replace(
        A100,
        slug="a100-pcie",
        name="A100 PCIe",
        form_factor="PCIe dual-slot",
        tdp_w=250.0,
        street_price=Price(usd=7000.0, as_of="2026-01-01"),
    )
    bought = _cand(a100_pcie, n=4)
    bought.acquisition = "buy"
    assert bought.cost.purchase_usd is not None
    tip = _power(bought)
    assert tip is not None
    assert "1,000 W of GPU power" in tip and "GPU server's own supplies" in tip
    assert "over a 15 A/120 V circuit's 1,440 W continuous" in tip  # 1,350 W ÷ 0.92
    rented = _cand(a100_pcie, n=4)
    rented.acquisition = "rent"
    assert _power(rented) is None  # the provider's server, the provider's circuit
    sxm = _cand(replace(H100, street_price=Price(usd=30000.0, as_of="2026-01-01")), n=8)
    sxm.acquisition = "buy"
    assert _power(sxm) is None  # an HGX board comes as a whole server


# ---------------------------------------------------------------- value per dollar


def _best_value_line(c: rank.Candidate, lead: rank.Candidate) -> str:
    return next(x for x in rank.explain(c, 2, lead, "best_value") if "Ranked #2" in x)


def test_llm_inference_value_is_dollars_per_million_output_tokens() -> None:
    lead, other = _cand(RTX4090), _cand(RTX3090)
    line = _best_value_line(other, lead)
    assert "samples per dollar" not in line
    v = cost.value(other.cost, other.acquisition)
    lv = cost.value(lead.cost, lead.acquisition)
    assert v and lv
    # the value is output tokens per dollar: a million of them cost 1e6 ÷ value
    assert re.search(rf"\${re.escape(rank._fmt(1e6 / v))} per million output tokens", line)
    assert f"against ${rank._fmt(1e6 / lv)} for {lead.gpu.name}" in line


def test_image_rows_count_images_per_dollar() -> None:
    work = WorkloadSpec(model=RESNET50, task="inference", batch_size=64, precision="fp16")
    line = _best_value_line(_cand(RTX3090, work), _cand(RTX4090, work))
    assert "images per dollar against" in line and "samples" not in line


def test_speech_rows_count_hours_of_audio_per_dollar() -> None:
    whisper = ModelSpec(family="encoder-decoder", params=1.55e9, input_size=30.0)
    v = 36_000.0  # windows per dollar
    assert rank.per_dollar(WorkloadSpec(model=whisper, task="inference"), v) == (
        "300 hours of audio per dollar"
    )


# ---------------------------------------------------------------- a layer split's speed


def test_a_layer_split_says_the_cards_take_turns_not_a_scaling_efficiency() -> None:
    work = llm_inference(runtime="llama.cpp")
    c = _cand(RTX4090, work, n=2)
    assert rank.replica_span(c.gpu, c.work, c.perf) == "layers"
    text = " ".join(rank.explain(c, 1, c, "fastest"))
    assert "scaling efficiency" not in text and "collectives" not in text
    assert "the cards take turns on each token" in text and "2× the memory" in text
    assert f"{c.perf.scaling_efficiency * 2:.2f}× one {RTX4090.name}" in text
    # a tensor-parallel split keeps its link and efficiency
    tp = _cand(H100, llm_inference(runtime="vllm"), n=2)
    assert "scaling efficiency" in " ".join(rank.explain(tp, 1, tp, "fastest"))


# ---------------------------------------------------------------- 4-bit weights


def _four_bit(c: rank.Candidate) -> str:
    return next(t for t in rank.tips(c, c.work) if t.startswith("4-bit weights ("))


def test_the_4_bit_tip_states_a_speed_up_only_where_weights_dominate_the_decode_bytes() -> None:
    # batch 1, 2,048 tokens: 16 GB of weights against ~0.3 GB of KV a step
    small = _cand(H100, llm_inference(runtime="vllm"))
    assert small.perf.decode_bottleneck == "memory bandwidth"
    weights, kv = rank.decode_bytes(small.work) or (0.0, 0.0)
    assert weights / (weights + kv) > 0.9
    tip = _four_bit(small)
    assert "of the bytes each decode step reads here" in tip and "faster" in tip
    ratio = small.work.weight_bytes / small.work.with_precision("int4").weight_bytes
    # Llama 3 8B's untied input table (128,256 × 4,096 at 2 B) is 16-bit in both files and
    # gathered row by row, not read whole, by either format's step
    table = rank.input_table_bytes(small.work)
    assert 1.0e9 < table < 1.1e9
    gen = (weights + kv) / ((weights + table) / ratio - table + kv)
    assert f"up to ~{gen:.1f}× faster" in tip
    assert f"~{ratio:.1f}× smaller" in tip and ratio < 3.0  # 16-bit embeddings and head kept
    assert "nearly as much faster" not in tip


def test_the_4_bit_tip_promises_little_where_the_kv_cache_dominates() -> None:
    """Llama 3.1 8B at batch 32 and 8,000 tokens reads ~16 GB of weights beside ~35 GB of KV
    cache a decode step: 4-bit weights make it ~1.3× faster, not nearly 3.5×."""
    big = _cand(H100, llm_inference(runtime="vllm", batch_size=32, seq_len=8000))
    weights, kv = rank.decode_bytes(big.work) or (0.0, 0.0)
    assert 15e9 < weights < 17e9 and 30e9 < kv < 40e9
    tip = _four_bit(big)
    assert "nearly as much faster" not in tip and "up to" not in tip
    assert f"the KV cache is {kv / (weights + kv):.0%} of the bytes" in tip
    assert re.search(r"only ~1\.[0-4]× faster", tip), tip


def test_a_long_prompt_dilutes_the_4_bit_gain_end_to_end() -> None:
    # a 30,000-token prompt at batch 1: prefill, which W4A16 does not shorten, is a large part
    long = _cand(H100, llm_inference(runtime="vllm", seq_len=30_000, output_tokens=64))
    tip = _four_bit(long)
    assert "up to" in tip  # weights still dominate one sequence's decode bytes
    assert re.search(r"× faster \(~1\.[0-4]× end to end, the prompt's time unchanged\)\.$", tip)
    # a short prompt's row says no such thing
    assert "end to end" not in _four_bit(_cand(H100, llm_inference(runtime="vllm")))


# ---------------------------------------------------------------- usable memory


def test_the_explanation_gives_usable_memory_as_the_verdict_does() -> None:
    """ "needs 6.6 GB of 8 GB" beside the verdict's "1.18 GB spare of 7.78 GB": the explanation
    gives the usable figure to three significant figures, as the verdict does."""
    usable = 7.78 * 2**30 / 1e9  # 7.78 of the vendors' GB, in the engine's 10^9 bytes
    c = _cand(RTX3090, llm_inference(runtime="vllm"), available=usable)
    first = rank.explain(c, 1, c, "fastest")[0]
    assert "GiB of 7.78 GiB" in first and "of 8 GiB" not in first
    assert rank.significant(157.2) == "157" and rank.significant(23.71) == "23.7"


def test_a_decode_step_reads_no_untied_input_table_and_a_tied_one_as_the_head() -> None:
    """The 4-bit tip's decode bytes follow the engine's step (llm_step): an untied input
    embedding is gathered row by row, so Llama 3 8B's step reads its weights less that 1.05 GB
    table; a tied table is the LM head's weight, read whole."""
    w = llm_inference(runtime="vllm")
    weights, _ = rank.decode_bytes(w) or (0.0, 0.0)
    table = rank.input_table_bytes(w)
    assert table > 1e9
    assert weights == pytest.approx(w.weight_bytes - table, rel=1e-9)
    tied = replace(w.model, tied_embeddings=True)
    assert rank.untied_input_params(tied) == 0.0


def test_an_fp32_rows_4_bit_gain_takes_the_table_at_the_4_bit_files_16_bits() -> None:
    """An fp32 file stores the input table at 4 B a value, the 4-bit file at 2 B: the 4-bit
    step's bytes are its file's less its own table, so the gain stays below the size ratio
    plus what the KV cache leaves (an fp32 Llama 3.1 8B had read 'up to ~7.3× faster' beside
    '~5.6× smaller')."""
    w = llm_inference(runtime="vllm", precision="fp32")
    ratio, read, table, table4 = rank.four_bit_terms(w)
    assert read is not None and table == pytest.approx(2 * table4)
    weights, kv = read
    four = w.with_precision("int4").weight_bytes
    gen = (weights + kv) / ((weights + table) / ratio - table4 + kv)
    assert gen == pytest.approx((weights + kv) / (four - table4 + kv), rel=1e-9)
    assert gen < ratio * 1.2
