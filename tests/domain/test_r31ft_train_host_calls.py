"""Eager decoder training's host floor counted in host calls, not engine kernels (helper "ft",
issues 21/23; perf._train_host_calls, data/efficiency.yaml train-llm row): a block's forward
calls (ops_per_layer) are issued once per forward pass — twice under gradient checkpointing —
and once more as the autograd node behind each; PEFT adds ~6 calls per adapted linear as
often, and a GPTQ base its unpack kernels per linear per forward pass."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import operators as ops_mod
from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import LLAMA3_8B
from tests.domain.test_finetune_step import _job as finetune_job

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)
A100 = {g.slug: g for g in read_gpu_specs(DATA)}["a100-sxm4-80gb"]
LAYERS = float(LLAMA3_8B.layers or 0)
LINEARS = float(len(ops_mod.block_linears(LLAMA3_8B)))


def _job(peft: str, seq: int = 256, **kw: object) -> WorkloadSpec:
    # test_finetune_step's job (LoRA rank 64, checkpointing, one sequence) at 256 tokens
    return finetune_job(peft, seq, **kw)


def _prof() -> tuple[float, float]:
    prof = TABLE.profile(A100, "cuda", "pytorch", "bf16", "train-llm")
    return prof.ops_per_layer, prof.host_us_per_op * 1e-6


def test_the_eager_training_row_counts_calls_per_block() -> None:
    ops_per_layer, per_call = _prof()
    # the transformers row's 81 forward op-equivalents a block; the LoRA rows' median per call
    assert ops_per_layer == pytest.approx(81.0)
    assert per_call == pytest.approx(13.5e-6)
    # Megatron's fused TE modules keep their per-kernel figure: no calls-per-block count
    megatron = TABLE.profile(A100, "cuda", "megatron", "bf16", "train-llm")
    assert megatron.ops_per_layer == 0.0


def test_full_fine_tuning_dispatch_is_the_blocks_calls_rerun_and_backed_by_autograd() -> None:
    ops_per_layer, per_call = _prof()
    ckpt = perf.single_gpu(A100, _job("none"))
    # forward, recomputed forward, autograd node: three issues of each forward call
    assert ckpt.dispatch == pytest.approx(ops_per_layer * LAYERS * 3.0 * per_call)
    plain = perf.single_gpu(A100, _job("none", gradient_checkpointing=False))
    assert plain.dispatch == pytest.approx(ops_per_layer * LAYERS * 2.0 * per_call)
    # the count does not depend on the batch or the sequence (host work per call)
    long = perf.single_gpu(A100, _job("none", 4096, batch_size=4))
    assert long.dispatch == pytest.approx(ckpt.dispatch)


def test_lora_and_gptq_add_their_own_calls() -> None:
    _, per_call = _prof()
    full = perf.single_gpu(A100, _job("none")).dispatch
    lora = perf.single_gpu(A100, _job("lora")).dispatch
    peft = perf.PEFT_CALLS_PER_LINEAR * LINEARS * LAYERS * 3.0 * per_call
    assert lora - full == pytest.approx(peft)
    gptq = perf.single_gpu(A100, _job("qlora", quantization="gptq", precision="fp16")).dispatch
    # AutoGPTQ's nine unpack kernels a linear, in the forward and the recomputed forward only
    unpack = ops_mod.GPTQ_TORCH_DEQUANT.kernels * LINEARS * LAYERS * 2.0 * per_call
    assert gptq - lora == pytest.approx(unpack)


def test_inference_and_compiled_steps_do_not_take_the_training_count() -> None:
    infer = replace(_job("none"), task="inference")
    assert perf._train_host_calls(infer) == (0.0, 0.0)
    graphs = perf.single_gpu(A100, replace(_job("none"), cuda_graphs=True))
    assert graphs.dispatch == 0.0


def test_an_moe_blocks_router_and_experts_add_a_call_a_kernel() -> None:
    ops_per_layer, per_call = _prof()
    moe = replace(_job("none"), model=replace(LLAMA3_8B, experts=8, active_experts=2))
    ops = perf.step_ops(moe, True, 2.0)
    assert ops is not None
    routed = sum(o.count for o in ops if o.name.split(".")[0] in ("router", "expert"))
    assert routed > 8 * LAYERS * 3  # each expert's up, activation and down, in every pass
    one = perf.single_gpu(A100, moe)
    assert one.dispatch == pytest.approx((ops_per_layer * LAYERS * 3.0 + routed) * per_call)
