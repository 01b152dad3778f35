"""A replicated (DDP) mixed-precision training step all-reduces fp32 gradients: under
torch.autocast the parameters, hence ``.grad``, stay fp32 (the memory model's master weights
and 4-byte gradients), and DDP reduces in the gradient's dtype. A sharded step reduces in the
16-bit param dtype (FSDP MixedPrecision), as workload.fsdp_block_bytes sizes it; a 16-bit
model (model.half()) reduces 16-bit gradients."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import perf
from app.domain.workload import ModelSpec, WorkloadSpec, fsdp_block_bytes
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, RTX4090

DATA = Path(__file__).resolve().parents[2] / "data"
VIT_B16 = ModelSpec(
    family="vit",
    params=86567656,
    layers=12,
    hidden_size=768,
    num_heads=12,
    num_kv_heads=12,
    intermediate_size=3072,
    max_context=197,
    gflops_per_sample=35.12,
    input_size=224,
)


def _train(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="training",
        model=VIT_B16,
        precision="bf16",
        batch_size=1024,
        efficiency=load_efficiency(DATA),
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def test_autocast_ddp_reduces_fp32_gradients_sharded_and_half_models_16_bit() -> None:
    amp = _train()
    assert perf.reduced_gradient_bytes(amp, sharded=False) == 4.0
    assert perf.reduced_gradient_bytes(amp, sharded=True) == 2.0
    assert perf.reduced_gradient_bytes(replace(amp, half_weights=True), sharded=False) == 2.0
    assert perf.reduced_gradient_bytes(_train(precision="fp32"), sharded=False) == 4.0
    assert perf.reduced_gradient_bytes(_train(precision="fp8"), sharded=False) == 4.0
    assert perf.reduced_gradient_bytes(_train(peft="lora"), sharded=True) == 4.0


def test_the_sharded_reduction_is_the_width_the_fsdp_memory_model_holds() -> None:
    for work in (_train(), _train(precision="fp32"), _train(peft="lora")):
        params, grad = fsdp_block_bytes(work)
        if work.peft == "none":
            # one unit's gradient ÷ its parameters at the gathered width (2, or 4 for fp32)
            w_b = 4.0 if work.precision == "fp32" else 2.0
            assert grad / params * w_b == pytest.approx(
                perf.reduced_gradient_bytes(work, sharded=True)
            )
        else:
            assert perf.reduced_gradient_bytes(work, sharded=True) == 4.0


def test_ddp_over_pcie_moves_twice_the_bytes_of_a_half_model() -> None:
    # 8 × RTX 4090 (no peer-to-peer: nothing hides): the autocast job's all-reduce is the
    # fp32 gradients', twice a model.half() job's
    amp = _train()
    half = replace(amp, half_weights=True)
    a = perf.training_layout(RTX4090, amp, 8, sharded=False, compute_s=0.05)
    h = perf.training_layout(RTX4090, half, 8, sharded=False, compute_s=0.05)
    assert a.name == h.name == "ddp"
    assert a.comm_s == pytest.approx(2.0 * h.comm_s, rel=0.02)
    assert a.exposed_s > 1.9 * h.exposed_s


def test_sharded_layouts_keep_16_bit_reductions() -> None:
    amp = _train()
    a = perf.training_layout(H100, amp, 8, sharded=True, compute_s=0.05)
    h = perf.training_layout(H100, replace(amp, half_weights=True), 8, sharded=True, compute_s=0.05)
    assert a.name == "fsdp"
    assert a.comm_s == pytest.approx(h.comm_s)
