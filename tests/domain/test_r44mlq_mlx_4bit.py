"""Issue 23 (r44 mlq): MLX's own 4-bit, named as a weight format (quantization mlx_4bit),
stores what MLX at int4 already stored: 4.5 bits per weight over the whole file (a 16-bit
scale and bias per 64 weights, the embeddings and LM head quantised too), and a row says
that format's name, not GPTQ/AWQ's, with or without the format named."""

from __future__ import annotations

import pytest

from app.domain import rank
from app.domain.formats import MLX_AFFINE_4BIT_BITS
from app.domain.workload import memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_70B, candidate, llm_inference

TABLE = load_efficiency()


def test_the_format_is_4_5_bits_a_weight_from_mlx_lm() -> None:
    assert TABLE.bits_per_weight["mlx_4bit"] == MLX_AFFINE_4BIT_BITS == 4.5


def test_named_mlx_4bit_stores_what_mlx_int4_stored_whole_file() -> None:
    named = llm_inference(
        model=LLAMA3_70B, runtime="mlx", precision="int4", quantization="mlx_4bit",
        weight_bits=TABLE.bits_per_weight["mlx_4bit"],
    )  # fmt: skip
    bare = llm_inference(model=LLAMA3_70B, runtime="mlx", precision="int4")
    assert named.own_bits == 4.5 and bare.own_bits == 4.5
    # every weight at 4.5 bits, the embeddings and LM head included (not kept in 16-bit)
    assert named.weight_bytes == pytest.approx(LLAMA3_70B.params * 4.5 / 8)
    assert named.weight_bytes == pytest.approx(bare.weight_bytes)


@pytest.mark.parametrize("quantization", ["mlx_4bit", "none"])
def test_the_memory_note_names_mlx_4bit_over_the_whole_file(quantization: str) -> None:
    bits = 4.5 if quantization != "none" else None
    work = llm_inference(
        model=LLAMA3_70B, runtime="mlx", precision="int4", quantization=quantization,
        weight_bits=bits,
    )  # fmt: skip
    note = next(n for n in memory_breakdown(work).notes if n.startswith("weights "))
    assert note.startswith("weights in MLX 4-bit (4.5 bits per weight over the whole file")
    assert "LM head" not in note  # MLX quantises it: not "kept in 16-bit"


def test_a_bare_int4_elsewhere_keeps_its_own_note() -> None:
    work = llm_inference(model=LLAMA3_70B, runtime="vllm", precision="int4")
    note = next(n for n in memory_breakdown(work).notes if n.startswith("weights "))
    assert note.startswith("weights quantised to int4; embeddings, LM head")


def test_the_4_bit_tip_on_an_mlx_row_costs_mlx_4bit_and_says_no_figure_plainly() -> None:
    c = candidate(H100, llm_inference(efficiency=TABLE, runtime="mlx"))
    assert rank.four_bit_quality_format(c) == "mlx_4bit"
    said = f"{rank.NO_FIGURE} delta found (source: s)"
    tip = next(
        t for t in rank.tips(c, c.work, four_bit_cost=said) if t.startswith("4-bit weights (")
    )
    assert tip.startswith("4-bit weights (MLX 4-bit, mlx_lm.convert -q) are")
    assert tip.endswith(f" Quality: {said}.") and "source's own model" not in tip
    # another runtime's row keeps the W4A16 figure and its wording
    vllm = candidate(H100, llm_inference(efficiency=TABLE, runtime="vllm"))
    assert rank.four_bit_quality_format(vllm) == "int4"
