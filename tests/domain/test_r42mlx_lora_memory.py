"""mlx-lm's LoRA / QLoRA as the engine prices it (data/efficiency.yaml's MLX training row):
adapters on the last --num-layers blocks, so only those blocks' activations are saved and only
they run backward; QLoRA over MLX's affine 4-bit base (embeddings and LM head included,
dequantised inside the kernel); the loss in the logits' dtype."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import perf
from app.domain.formats import MLX_AFFINE_4BIT_BITS
from app.domain.workload import (
    GB,
    WorkloadSpec,
    adapted_layers,
    job_lora_params,
    lora_params,
    memory_breakdown,
)
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import LLAMA31_8B, M2, llama31_8b_finetune

TABLE = load_efficiency(DATA_DIR)
LAYERS = int(LLAMA31_8B.layers or 0)


def _mlx(**kw: object) -> WorkloadSpec:
    """Llama 3.1 8B under mlx_lm.lora's defaults: Adam, batch 4, no checkpointing."""
    base = llama31_8b_finetune(
        peft="lora",
        optimizer="adamw",
        batch_size=4,
        seq_len=512,
        gradient_checkpointing=False,
        runtime="mlx",
        efficiency=TABLE,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_mlx_adapts_the_last_sixteen_blocks_by_default_and_pytorch_every_block() -> None:
    assert LAYERS == 32
    assert adapted_layers(_mlx()) == 16
    assert adapted_layers(_mlx(lora_layers=8)) == 8
    # more than the model has: every block (the resolver refuses it with a 422)
    assert adapted_layers(_mlx(lora_layers=99)) == LAYERS
    pytorch = _mlx(runtime="pytorch")
    assert adapted_layers(pytorch) == LAYERS
    # the adapters follow: half the blocks, half PEFT's all-block count
    full = lora_params(LLAMA31_8B, 16)
    assert job_lora_params(_mlx()) == pytest.approx(full / 2)
    assert job_lora_params(pytorch) == pytest.approx(full)


def test_saved_activations_count_only_the_adapted_blocks() -> None:
    acts = {k: memory_breakdown(_mlx(lora_layers=k)).activations for k in (8, 16, 32)}
    # linear in the adapted blocks: each block saves the same, the head once
    per_block = (acts[16] - acts[8]) / 8
    assert per_block > 0
    assert acts[32] - acts[16] == pytest.approx(16 * per_block, rel=1e-9)
    # the default (16) is the 16-block figure, and PyTorch's PEFT saves every block's
    assert memory_breakdown(_mlx()).activations == pytest.approx(acts[16])
    assert memory_breakdown(_mlx(runtime="pytorch")).activations == pytest.approx(acts[32])


def test_checkpointing_keeps_only_the_adapted_blocks_inputs() -> None:
    h, tokens = float(LLAMA31_8B.hidden_size or 0), 4 * 512.0
    a8 = memory_breakdown(_mlx(lora_layers=8, gradient_checkpointing=True)).activations
    a16 = memory_breakdown(_mlx(lora_layers=16, gradient_checkpointing=True)).activations
    # eight more blocks keep eight more 16-bit layer inputs
    assert (a16 - a8) * GB == pytest.approx(8 * tokens * h * 2.0, rel=1e-9)


def test_qlora_under_mlx_needs_less_than_lora_and_holds_every_weight_in_4_5_bits() -> None:
    lora = memory_breakdown(_mlx())
    qlora = memory_breakdown(_mlx(peft="qlora", weight_bits=MLX_AFFINE_4BIT_BITS))
    assert qlora.total < lora.total
    # every weight, embeddings and LM head included, at MLX's affine 4-bit
    assert qlora.weights * GB == pytest.approx(LLAMA31_8B.params * 4.5 / 8)
    # no 16-bit copy of a linear: the quantised matmul dequantises inside the kernel
    assert qlora.workspace == pytest.approx(lora.workspace)
    assert any("affine 4-bit" in n for n in qlora.notes)
    # bitsandbytes' QLoRA (PyTorch) keeps the embeddings and head in 16-bit: more weights
    bnb = memory_breakdown(_mlx(peft="qlora", runtime="pytorch"))
    assert bnb.weights > qlora.weights


def test_the_mlx_loss_holds_the_logits_and_two_16_bit_gradients() -> None:
    tokens, vocab = 4 * 512.0, float(LLAMA31_8B.vocab_size or 0)
    mlx = memory_breakdown(_mlx()).logits * GB
    eager = memory_breakdown(_mlx(runtime="pytorch")).logits * GB
    assert mlx == pytest.approx(tokens * vocab * (2.0 + 4.0))
    assert eager == pytest.approx(tokens * vocab * (2.0 + 12.0))


def test_backward_runs_through_the_adapted_blocks_only() -> None:
    def bwd_flops(work: WorkloadSpec) -> float:
        ops = perf.step_ops(work, flash_attention=True, act_b=2.0) or []
        return sum(o.total_flops for o in ops if o.phase == "bwd")

    half, every = bwd_flops(_mlx()), bwd_flops(_mlx(lora_layers=LAYERS))
    assert 0.45 * every < half < 0.6 * every  # the head's dgrad is in both
    ops = perf.step_ops(_mlx(), flash_attention=True, act_b=2.0) or []
    assert not any(o.role == "embed" and o.phase == "bwd" for o in ops)
    # and so the step is faster on the same Mac
    fast = perf.estimate(M2, _mlx(), backend="mps").throughput
    slow = perf.estimate(M2, _mlx(lora_layers=LAYERS), backend="mps").throughput
    assert fast > slow


def test_mlx_qlora_runs_no_dequantisation_pass() -> None:
    work = _mlx(peft="qlora", weight_bits=MLX_AFFINE_4BIT_BITS)
    ops = perf.step_ops(work, flash_attention=True, act_b=2.0) or []
    assert not any("dequantise" in o.name for o in ops)
    bnb = perf.step_ops(_mlx(peft="qlora", runtime="pytorch"), flash_attention=True, act_b=2.0)
    assert any("dequantise" in o.name for o in bnb or [])
