"""Throughput vs mini-batch size for a ResNet bottleneck block and a transformer encoder
block, forward only and full training step (forward, backward, AdamW step written with
``torch._foreach`` ops).

For each batch (powers of two up to the profile's limit, the first out-of-memory error or
the step-time cap): median step time, samples/s, achieved TFLOPS with model FLOPs counted
once per shape by ``torch.utils.flop_counter.FlopCounterMode`` (training: forward +
backward, the optimizer's elementwise work is not counted). Reported per curve: B90 (the
smallest batch reaching 90 % of the best samples/s), the best samples/s and the fit
t(B) = t₀ + B·c.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from app.bench.device import empty_cache, is_oom, precision_support
from app.bench.report import BatchCurve, BatchPoint, BatchScalingSuite, Figure
from app.bench.suites.common import (
    CnnConfig,
    Context,
    TransformerConfig,
    rate_figure,
    time_figure,
)
from app.bench.timing import fit_linear, saturation_batch

WORKLOADS = ("cnn_block", "transformer_block")
MODES = ("forward", "train")


class Bottleneck(nn.Module):
    """ResNet bottleneck: 1×1 reduce, 3×3, 1×1 expand, batch norm, residual."""

    def __init__(self, channels: int, bottleneck: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, bottleneck, 1, bias=False),
            nn.BatchNorm2d(bottleneck),
            nn.ReLU(inplace=True),
            nn.Conv2d(bottleneck, bottleneck, 3, padding=1, bias=False),
            nn.BatchNorm2d(bottleneck),
            nn.ReLU(inplace=True),
            nn.Conv2d(bottleneck, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )
        self.act = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x + self.body(x))


class ForeachAdamW:
    """AdamW (decoupled weight decay, bias correction) written with ``torch._foreach_*``
    ops: the same math and the same state (two tensors per parameter) as
    ``torch.optim.AdamW(foreach=True)``. ``torch.optim`` imports ``torch._dynamo`` on first
    use (about 1 s on a small CPU), which the peak-memory child processes cannot afford, so
    both the timed steps and the memory steps use this one."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-4,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.exp_avg: list[torch.Tensor] = []
        self.exp_avg_sq: list[torch.Tensor] = []
        self.t = 0

    @torch.no_grad()
    def step(self) -> None:
        params = [p for p in self.params if p.grad is not None]
        if not params:
            return
        grads = [p.grad for p in params]
        if not self.exp_avg:
            self.exp_avg = [torch.zeros_like(p) for p in self.params]
            self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        index = {id(p): i for i, p in enumerate(self.params)}
        m = [self.exp_avg[index[id(p)]] for p in params]
        v = [self.exp_avg_sq[index[id(p)]] for p in params]
        b1, b2 = self.betas
        self.t += 1
        torch._foreach_mul_(params, 1.0 - self.lr * self.weight_decay)
        torch._foreach_lerp_(m, grads, 1.0 - b1)
        torch._foreach_mul_(v, b2)
        torch._foreach_addcmul_(v, grads, grads, 1.0 - b2)
        denom = torch._foreach_sqrt(v)
        torch._foreach_div_(denom, math.sqrt(1.0 - b2**self.t))
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(params, m, denom, -self.lr / (1.0 - b1**self.t))

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None


def build_model(workload: str, cnn: CnnConfig, tr: TransformerConfig) -> nn.Module:
    if workload == "cnn_block":
        return Bottleneck(cnn.channels, cnn.bottleneck)
    if workload == "transformer_block":
        return nn.TransformerEncoderLayer(
            tr.d_model,
            tr.heads,
            tr.ff,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
    raise ValueError(f"unknown workload {workload!r}")


def make_input(
    workload: str, batch: int, cnn: CnnConfig, tr: TransformerConfig, device: torch.device
) -> torch.Tensor:
    if workload == "cnn_block":
        return torch.randn(batch, cnn.channels, cnn.hw, cnn.hw, device=device)
    return torch.randn(batch, tr.seq, tr.d_model, device=device)


def describe(workload: str, cnn: CnnConfig, tr: TransformerConfig) -> str:
    if workload == "cnn_block":
        return (
            f"ResNet bottleneck {cnn.channels}→{cnn.bottleneck}→{cnn.channels} channels "
            f"at {cnn.hw}×{cnn.hw}"
        )
    return f"transformer encoder layer d={tr.d_model}, heads={tr.heads}, ff={tr.ff}, seq={tr.seq}"


def autocast_for(device: torch.device, precision: str) -> contextlib.AbstractContextManager[Any]:
    if precision in ("bf16", "fp16"):
        dtype = torch.bfloat16 if precision == "bf16" else torch.float16
        return torch.autocast(device_type=device.type, dtype=dtype)
    return contextlib.nullcontext()


def make_step(
    model: nn.Module, x: torch.Tensor, mode: str, precision: str, optimizer: ForeachAdamW | None
) -> Callable[[], object]:
    device = x.device
    if mode == "forward":

        def fwd() -> object:
            with torch.no_grad(), autocast_for(device, precision):
                return model(x)

        return fwd
    assert optimizer is not None

    def train() -> object:
        with autocast_for(device, precision):
            out = model(x)
            loss = out.float().pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    return train


def _cpu_sdpa_mapping() -> dict[Any, Any]:
    """FLOP formulas for the CPU flash-attention kernels, which flop_counter lacks."""
    try:
        from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count
    except ImportError:  # pragma: no cover - older torch
        return {}
    aten = torch.ops.aten

    def fwd(q: Any, k: Any, v: Any, *args: Any, out_shape: Any = None, **kw: Any) -> int:
        return int(sdpa_flop_count(q, k, v))

    def bwd(g: Any, q: Any, k: Any, v: Any, *args: Any, out_shape: Any = None, **kw: Any) -> int:
        return int(sdpa_backward_flop_count(g, q, k, v))

    out: dict[Any, Any] = {}
    for name, fn in (
        ("_scaled_dot_product_flash_attention_for_cpu", fwd),
        ("_scaled_dot_product_flash_attention_for_cpu_backward", bwd),
    ):
        op = getattr(aten, name, None)
        if op is not None:
            out[op] = fn
    return out


def count_flops(model: nn.Module, x: torch.Tensor, mode: str, precision: str) -> int:
    """Model FLOPs of one step (forward, or forward + backward) via FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False, custom_mapping=_cpu_sdpa_mapping()) as counter:
        if mode == "forward":
            with torch.no_grad(), autocast_for(x.device, precision):
                model(x)
        else:
            with autocast_for(x.device, precision):
                loss = model(x).float().pow(2).mean()
            loss.backward()
    model.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())


def batch_precisions(ctx: Context) -> list[str]:
    out: list[str] = []
    for p in ctx.profile.batch_precisions:
        if p == "auto":
            if ctx.is_accelerator:
                for cand in ("bf16", "fp16"):
                    runnable, native, _ = precision_support(ctx.device, cand)
                    if runnable and native:
                        out.append(cand)
                        break
                else:
                    out.append("fp32")
            else:
                out.append("fp32")
        elif p == "fp32":
            out.append(p)
        else:
            runnable, native, _ = precision_support(ctx.device, p)
            if runnable and native:
                out.append(p)
    seen: list[str] = []
    for p in out:
        if p not in seen:
            seen.append(p)
    return seen


def run_curve(
    ctx: Context,
    workload: str,
    mode: str,
    precision: str,
    batches: tuple[int, ...],
    frac: Callable[[float], None] | None = None,
) -> BatchCurve:
    prof = ctx.profile
    dev = ctx.torch_device
    curve = BatchCurve(
        workload=workload,
        mode=mode,
        precision=precision,
        description=describe(workload, prof.cnn, prof.transformer),
    )
    torch.manual_seed(0)
    model = build_model(workload, prof.cnn, prof.transformer).to(dev)
    model.train()
    optimizer = ForeachAdamW(model.parameters()) if mode == "train" else None
    cfg = prof.batch_timing or prof.timing
    for i, batch in enumerate(batches):
        if frac is not None:
            frac(i / len(batches))
        if len(curve.points) >= 2 and ctx.out_of_time():
            curve.stopped = f"time budget spent after batch {curve.points[-1].batch}"
            ctx.skip_note("larger batches of some batch-scaling curves")
            break
        try:
            x = make_input(workload, batch, prof.cnn, prof.transformer, dev)
            flops = count_flops(model, x, mode, precision)
            step = make_step(model, x, mode, precision, optimizer)
            timing = ctx.measure(step, config=cfg)
        except Exception as exc:
            if is_oom(exc):
                empty_cache(ctx.device)
                curve.stopped = f"out of memory at batch {batch}"
                break
            curve.stopped = f"failed at batch {batch}: {type(exc).__name__}: {exc}"[:300]
            break
        step_fig = time_figure(timing)
        sps = rate_figure(timing, batch, "samples/s", 1.0)
        tflops = (
            rate_figure(timing, flops, "TFLOPS", 1e12)
            if flops > 0
            else Figure.missing("TFLOPS", "not_applicable", "no FLOPs counted")
        )
        tflops = ctx.check(tflops, precision, f"{workload} {precision}")
        curve.points.append(
            BatchPoint(
                batch=batch, flops=flops, step_time=step_fig, samples_per_s=sps, tflops=tflops
            )
        )
        if timing.median_s > prof.batch_step_cap_s and batch != batches[-1]:
            curve.stopped = (
                f"step time {timing.median_s:.2f} s at batch {batch} exceeds the "
                f"profile cap {prof.batch_step_cap_s:g} s"
            )
            break
    del model, optimizer
    empty_cache(ctx.device)
    pts = [(p.batch, p.samples_per_s.value or 0.0) for p in curve.points]
    curve.b90 = saturation_batch(pts, 0.9)
    if pts:
        curve.max_samples_per_s = max(v for _, v in pts)
        tf = [p.tflops.value for p in curve.points if p.tflops.value is not None]
        curve.best_tflops = max(tf) if tf else None
    if len(curve.points) >= 2:
        with contextlib.suppress(ValueError):
            t0, c = fit_linear(
                [p.batch for p in curve.points], [p.step_time.value or 0.0 for p in curve.points]
            )
            curve.fit_t0_s, curve.fit_per_sample_s = t0, c
            curve.fit_note = fit_problem(t0, c)
    return curve


def fit_problem(t0: float, per_sample: float) -> str | None:
    """Why a fitted t(B) = t₀ + B·c is not physical, or None: a step cannot take less than no
    time at batch 0 (t₀ < 0), and a larger batch cannot take less time (c < 0). Either means
    the step times were noisy or fell with the batch, so nothing (no B90 tip) should rest on
    them."""
    if per_sample < 0:
        return (
            f"the fitted time per sample is negative ({per_sample:.3g} s): step times fell "
            "as the batch grew, so the measurement was too noisy to fit"
        )
    if t0 < 0:
        return (
            f"the fitted fixed time t0 is negative ({t0:.3g} s): the step times do not grow "
            "linearly with the batch, so the measurement was too noisy to fit"
        )
    return None


def run(ctx: Context) -> BatchScalingSuite:
    start = time.perf_counter()
    suite = BatchScalingSuite()
    precisions = batch_precisions(ctx)
    combos = [(w, m, p) for p in precisions for w in WORKLOADS for m in MODES]
    for i, (workload, mode, precision) in enumerate(combos):
        label = f"batch scaling {workload} {mode} {precision}"

        def frac(f: float, i: int = i, label: str = label) -> None:
            ctx.step(label, (i + f) / len(combos))

        frac(0.0)
        suite.curves.append(run_curve(ctx, workload, mode, precision, ctx.profile.batches, frac))
    if not any(c.points for c in suite.curves):
        suite.status = "failed"
        suite.reason = "; ".join(c.stopped or "" for c in suite.curves)[:500] or "no points"
    suite.duration_s = time.perf_counter() - start
    return suite
