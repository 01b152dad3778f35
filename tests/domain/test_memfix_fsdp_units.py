"""FSDP/ZeRO-3 holds the units it runs unsharded beside its shards (review #5).

Under FSDP's default BACKWARD_PRE prefetch the peak holds "the current set of parameters,
next set of parameters, and current set of gradients" (torch.distributed.fsdp.BackwardPrefetch):
two transformer layers' parameters in the compute dtype and one layer's gradient, per GPU.
"""

from __future__ import annotations

import pytest

from app.domain.workload import (
    ModelSpec,
    WorkloadSpec,
    fsdp_block_bytes,
    fsdp_root_bytes,
    lora_params,
    memory_breakdown,
)
from tests.domain.fixtures import LLAMA2_7B, LLAMA3_70B

GB = 1e9
# one layer's linears: q and o h×h, k and v h×kv, gate, up and down h×inter
LLAMA2_7B_LAYER = 2 * 4096**2 + 2 * 4096 * 4096 + 3 * 4096 * 11008  # 202.4 M
LLAMA3_70B_LAYER = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672  # 855.6 M


def _work(model: ModelSpec, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = {
        "task": "training",
        "model": model,
        "precision": "bf16",
        "batch_size": 64,
        "seq_len": 4096,
    }
    return WorkloadSpec(**{**base, **kw})  # type: ignore[arg-type]


def test_one_fsdp_unit_is_one_layer_in_16_bit() -> None:
    params, grad = fsdp_block_bytes(_work(LLAMA2_7B))
    assert params == pytest.approx(2.0 * LLAMA2_7B_LAYER)
    assert grad == pytest.approx(2.0 * LLAMA2_7B_LAYER)


def test_sharded_training_adds_two_gathered_layers_and_one_gradient() -> None:
    work = _work(LLAMA2_7B)
    one = memory_breakdown(work, num_gpus=1)
    eight = memory_breakdown(work, num_gpus=8)
    # 2 × 202 M × 2 B gathered, 202 M × 2 B of gradient: ≈ 1.2 GB beyond the shards
    extra = 3 * 2.0 * LLAMA2_7B_LAYER / GB
    assert extra == pytest.approx(1.21, abs=0.01)
    # and the root unit, whole (test_mem2fix_fsdp_root), whose head's 16-bit copy it replaces
    root, root_grad = fsdp_root_bytes(work)
    head_cast = 2.0 * 32000 * 4096
    extra += (root + root_grad - head_cast / 8) / GB
    # this job's peak is the start of backward (activations outweigh the optimizer step)
    assert eight.total == pytest.approx((one.total - one.framework) / 8 + one.framework + extra)
    layers = 2 * 2.0 * LLAMA2_7B_LAYER
    assert eight.weights == pytest.approx(
        (one.weights * GB - head_cast) / 8 / GB + (layers + root) / GB
    )
    assert any("unsharded" in note for note in eight.notes)


def test_a_70b_layer_is_about_5_gb_per_gpu() -> None:
    params, grad = fsdp_block_bytes(_work(LLAMA3_70B))
    assert (2 * params + grad) / GB == pytest.approx(3 * 2.0 * LLAMA3_70B_LAYER / GB)
    assert (2 * params + grad) / GB == pytest.approx(5.13, abs=0.01)


def test_one_gpu_holds_no_gathered_units() -> None:
    work = _work(LLAMA2_7B)
    mem = memory_breakdown(work, num_gpus=1)
    assert not any("unsharded" in note for note in mem.notes)


def test_fp32_gathers_and_reduces_in_fp32() -> None:
    params, grad = fsdp_block_bytes(_work(LLAMA2_7B, precision="fp32"))
    assert params == pytest.approx(4.0 * LLAMA2_7B_LAYER)
    assert grad == pytest.approx(4.0 * LLAMA2_7B_LAYER)


def test_lora_gathers_the_frozen_base_and_reduces_only_the_adapters() -> None:
    work = _work(LLAMA2_7B, task="fine-tuning", peft="lora", lora_rank=16)
    params, grad = fsdp_block_bytes(work)
    assert params == pytest.approx(2.0 * LLAMA2_7B_LAYER)
    # the adapters' fp32 gradient (PEFT keeps them in fp32): about 1 % of the layer's bytes
    assert grad == pytest.approx(4.0 * lora_params(LLAMA2_7B, 16) / 32)
    one = memory_breakdown(work, num_gpus=1)
    four = memory_breakdown(work, num_gpus=4)
    # the frozen root (embedding and head, 16-bit) is held whole, with no gradient
    root, root_grad = fsdp_root_bytes(work)
    assert root_grad == 0.0
    assert four.weights == pytest.approx(one.weights / 4 + (2 * params + root) / GB)
