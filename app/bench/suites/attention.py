"""Attention through ``torch.nn.functional.scaled_dot_product_attention`` (which picks
FlashAttention or memory-efficient kernels where the build has them): prefill (causal,
q = kv = context) and decode (one query token against a KV cache of the context length).

FLOPs = 4·B·H·Sq·Skv·D, halved when causal. Bytes = Q, K, V read and O written; decode is
bound by the K/V read, so its rate is held to the memory bandwidth.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from app.bench.device import DTYPES
from app.bench.report import KernelSuite, attention_flops
from app.bench.suites.common import Context
from app.bench.suites.kernel_points import element_size, measure_point


def _sdpa(
    ctx: Context, dtype: str, b: int, h: int, q_len: int, kv_len: int, d: int, causal: bool
) -> Callable[[], object]:
    dev, dt = ctx.torch_device, DTYPES[dtype]
    q = torch.randn(b, h, q_len, d, device=dev, dtype=dt)
    k = torch.randn(b, h, kv_len, d, device=dev, dtype=dt)
    v = torch.randn(b, h, kv_len, d, device=dev, dtype=dt)
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _point(
    ctx: Context, suite: KernelSuite, dtype: str, phase: str, q_len: int, kv_len: int
) -> None:
    b, h, d = ctx.profile.kernels.attention_bhd
    causal = phase == "prefill"
    shape = {"batch": b, "heads": h, "q_len": q_len, "kv_len": kv_len, "head_dim": d}
    if causal:
        shape["causal"] = 1
    elt = element_size(dtype)
    measure_point(
        ctx,
        suite,
        f"attention_{phase}",
        "sdpa",
        shape,
        dtype,
        lambda: _sdpa(ctx, dtype, b, h, q_len, kv_len, d, causal),
        flops=attention_flops(shape),
        bytes_moved=elt * b * h * d * (2 * q_len + 2 * kv_len),
        flush=True,
    )


def run(ctx: Context, suite: KernelSuite) -> None:
    cfg = ctx.profile.kernels
    work = [("prefill", c, c) for c in cfg.prefill_contexts]
    work += [("decode", 1, c) for c in cfg.decode_contexts]
    for dtype in cfg.dtypes:
        for i, (phase, q_len, kv_len) in enumerate(work):
            ctx.step(f"attention {phase} {dtype} ctx {kv_len}", i / len(work))
            # the first prefill and the first decode point always; the rest as time allows
            first = i in (0, len(cfg.prefill_contexts))
            if not first and ctx.out_of_time():
                ctx.skip_note("some attention context lengths")
                continue
            _point(ctx, suite, dtype, phase, q_len, kv_len)
