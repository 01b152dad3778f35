"""Eager diffusion inference as operators: classifier-free guidance, NCHW convolutions with a
bias, fused attention at Stable Diffusion's head dims, and the VAE decode's own table."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import perf
from app.domain.kernels import head_dim_fill, shape_efficiency
from app.domain.operators import attention, parse_table, table_ops
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import RESNET50

CONV = {
    "kind": "conv", "name": "c", "count": 2, "c_in": 320, "c_out": 640, "h_in": 64, "w_in": 64,
    "h_out": 32, "w_out": 32, "r": 3, "s": 3, "stride": 2, "groups": 1,
}  # fmt: skip
UNET = parse_table(
    {
        "model": "toy-unet",
        "ops": [
            CONV,
            {"kind": "gemm", "name": "proj", "count": 1, "m": 4096, "n": 640, "k": 640},
            {"kind": "norm", "name": "gn", "count": 1, "elements_in": 1e6, "elements_out": 1e6},
        ],
    }
)


def test_head_dims_between_the_kernels_steps_pad_to_the_next_one() -> None:
    assert head_dim_fill(64) == head_dim_fill(128) == head_dim_fill(160) == 1.0
    assert head_dim_fill(40) == pytest.approx(40 / 64)
    assert head_dim_fill(80) == pytest.approx(80 / 96)

    def attn(d: int) -> float:
        (op,) = attention(
            "a", tokens_q=2 * 4096, q_len=4096, kv_len=4096, heads=8, head_dim=d,
            kv_heads=8, count=1, act_b=2.0, causal=False, flash=True,
        )  # fmt: skip
        return shape_efficiency(op, 108)

    # same grid of blocks and key loop: only the padded matmuls differ
    assert attn(40) == pytest.approx(attn(64) * 0.625)


def test_eager_nchw_convolutions_add_two_transposes_and_a_bias_pass() -> None:
    plain = table_ops(UNET, 4)
    eager = table_ops(UNET, 4, eager_conv=True)
    extra = [o for o in eager if o not in plain]
    assert {o.role for o in extra} == {"layout", "bias"}
    in_b, out_b = 4 * 320 * 64 * 64 * 2.0, 4 * 640 * 32 * 32 * 2.0
    by = {o.name.split(":")[1]: o for o in extra}
    assert by["nchw_to_nhwc"].bytes == pytest.approx(2 * in_b)
    assert by["nhwc_to_nchw"].bytes == pytest.approx(2 * out_b)
    assert by["bias"].bytes == pytest.approx(2 * out_b)
    assert all(o.count == 2 and o.flops == 0 for o in extra)  # once per conv run
    # GEMMs and norms gain nothing
    assert len(eager) == len(plain) + 3


def _diffusion(decoder: bool = False, runtime: str = "pytorch") -> WorkloadSpec:
    per_pass = UNET.gflops * 1e9
    model = dataclasses.replace(
        RESNET50, family="diffusion", operators=UNET, passes_per_sample=50,
        gflops_per_sample=(50 * per_pass + 2e12) / 1e9,
        decoder_operators=UNET if decoder else None,
    )  # fmt: skip
    return WorkloadSpec(
        task="inference", model=model, precision="fp16", batch_size=3, runtime=runtime
    )


def test_guidance_runs_the_unet_once_per_step_on_twice_the_batch() -> None:
    ops = perf.forward_ops(_diffusion(), True, 2.0)
    assert ops is not None
    proj = [o for o in ops if o.name == "proj"]
    (p,) = proj
    assert p.m == 2 * 3 * 4096  # conditional + unconditional latents in one GEMM
    assert p.count == 25  # 50 passes = 25 steps × 2, one launch per step
    unet = [o for o in ops if o.name != "rest"]
    assert sum(o.count * o.flops for o in unet) == pytest.approx(3 * 50 * UNET.gflops * 1e9)


def test_the_vae_decode_is_priced_from_its_table_with_the_rest_of_the_flops() -> None:
    work = _diffusion(decoder=True)
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    assert not any(o.name == "rest" for o in ops)
    assert sum(o.count * o.flops for o in ops) == pytest.approx(3 * (50 * UNET.gflops * 1e9 + 2e12))
    # the decoder's eager convolutions carry their layout passes too
    assert sum(o.role == "layout" for o in ops) == 4
    # and a decode of memory-bound passes takes longer than one cubic GEMM of its FLOPs
    from tests.domain.fixtures import A100

    with_table = perf.estimate(A100, work).step_time_s
    without = perf.estimate(A100, _diffusion()).step_time_s
    assert with_table > without
