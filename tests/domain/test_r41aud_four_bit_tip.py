"""r41 expert audit: the 4-bit tip on an LLM inference row named formats the row's runtime
cannot load (AWQ/GPTQ/GGUF under TensorFlow, JAX and TensorRT-LLM), named no quality cost
while the FP8 tip beside it named one with its source, and read "~2.8× smaller … up to ~3.2×
faster" with nothing saying why the speed-up passes the size ratio."""

from __future__ import annotations

from dataclasses import replace

from app.domain import rank
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_70B, candidate
from tests.domain.fixtures import llm_inference as _plain

TABLE = load_efficiency()


_cand = candidate


def _tip(runtime: str, four_bit_cost: str | None = None) -> str:
    c = _cand(H100, _plain(efficiency=TABLE, runtime=runtime))
    tips = rank.tips(c, c.work, four_bit_cost=four_bit_cost)
    return next(t for t in tips if t.startswith("4-bit weights ("))


def test_a_graph_framework_row_is_told_where_4_bit_weights_run() -> None:
    for runtime, name in (("tensorflow", "TensorFlow"), ("jax", "JAX")):
        tip = _tip(runtime)
        assert f"under Transformers or vLLM, or GGUF Q4_K_M under llama.cpp; not {name})" in tip
    # a PyTorch runtime's row keeps its own formats
    assert _tip("vllm").startswith("4-bit weights (AWQ/GPTQ) are")


def test_a_tensorrt_llm_row_names_the_export_it_runs_not_a_gguf_file() -> None:
    tip = _tip("tensorrt-llm")
    assert tip.startswith("4-bit weights (INT4-AWQ, a Model Optimizer export) are")
    assert "GGUF" not in tip and "GPTQ" not in tip


def test_the_tip_names_the_formats_quality_cost_where_it_is_given() -> None:
    said = "INT4 weight-only rivalled 8-bit (source: a paper (https://example.org))"
    tip = _tip("vllm", said)
    assert tip.endswith(f". Quality, on the source's own model: {said}.")
    # without one the tip ends as it did
    assert "Quality" not in _tip("vllm")


def test_the_quality_figure_is_the_format_the_tip_names_first() -> None:
    c = _cand(H100, _plain(efficiency=TABLE, runtime="vllm"))
    assert rank.four_bit_quality_format(c) == "int4"
    gguf = _cand(H100, _plain(efficiency=TABLE, runtime="llama.cpp"))
    assert rank.four_bit_quality_format(gguf) == "q4_k_m"
    # a Mac under Transformers is told MLX 4-bit or GGUF Q4_K_M: the GGUF figure
    mac = replace(
        c, work=replace(c.work, runtime="transformers"), perf=replace(c.perf, backend="mps")
    )
    assert rank.four_bit_tip(mac).startswith(f"4-bit weights ({rank.FOUR_BIT_ON_MPS})")
    assert rank.four_bit_quality_format(mac) == "q4_k_m"
    mlx = replace(mac, work=replace(c.work, runtime="mlx"))
    # MLX's tip names its own 4-bit, whose entry is costed (r44 mlq), not AWQ/GPTQ's W4A16
    assert rank.four_bit_quality_format(mlx) == "mlx_4bit"


def test_a_speed_up_past_the_size_ratio_says_why() -> None:
    """Llama 3 8B: the file shrinks ~2.8×, the bytes a decode step reads ~3.2×, as its
    untied input table is in the file but gathered, not read: the tip says so."""
    tip = _tip("vllm")
    ratio = float(tip.split("~")[1].split("×")[0])
    gen = float(tip.split("up to ~")[1].split("×")[0])
    assert gen > ratio
    assert "(the files' input embedding is gathered a row a token, not read whole)" in tip
    # a tied table is the head's weight, read whole: nothing to explain
    tied = _plain(efficiency=TABLE, runtime="vllm")
    tied = replace(tied, model=replace(tied.model, tied_embeddings=True))
    c = _cand(H100, tied)
    assert "gathered" not in rank.four_bit_tip(c)


def test_the_fewer_cards_advice_names_the_runtimes_formats_and_its_cost() -> None:
    """A 70B at 16 bits over two H100s: the advice's 4-bit formats are the row's runtime's (a
    TensorFlow question had been told AWQ/GPTQ/GGUF), and its quality cost is the tip's."""
    for runtime, formats in (("tensorflow", "not TensorFlow)"), ("vllm", "(AWQ/GPTQ)")):
        work = _plain(efficiency=TABLE, model=LLAMA3_70B, runtime=runtime)
        c = _cand(H100, work, n=2)
        advice = rank.advice([c], work, defaulted_checkpointing=False)
        (said,) = [a for a in advice if "fewer cards" in a]
        assert formats in said, said
        assert said.endswith("at the quality cost the 4-bit tip below names with its source.")
        assert any(t.startswith("4-bit weights (") for t in rank.tips(c, work))
