"""Can the non-tensor kernels or small grids of a UNet step explain diffusion's GPU order?

Issue #21 (§6.7m "df"): at Stable Diffusion 1.5's shapes every card runs 124-369 FLOP per SM per
clock whatever its tensor peak, so GeForce reads fast against the engine (measured ÷ predicted
1.15-1.50) and datacenter cards slow (0.58-0.89). This asks whether the kernels that are not
tensor-core convolutions, GEMMs or attention (element-wise, group and layer norms, cuDNN's NCHW
transforms, the convolutions' bias passes, the timestep embedding), priced as the engine prices
them, or the wave quantisation of small grids, could make that split. Three prints:

1. shares: one UNet pass (classifier-free guidance: 2 × batch latents) on each GPU, split into
   the tensor classes, the memory class (the non-tensor kernels, by their bytes) and the
   per-kernel launch gaps, at batches 1, 4 and 16 (the held-out groups that order wrongly are
   at 4 and 16);
2. waves: the FLOP-weighted shape efficiency (tile fill, wave fill over the card's SMs, K loop,
   best split-K) of the pass's convolutions and self-attention per GPU at batch 1;
3. split: the tuning rows' median measured ÷ predicted per segment (GeForce, the rest) with the
   non-tensor kernels' time × 0, × 1, × 2 and × 4, and with a wave of two thread blocks per SM.
   A term that closed the split would bring the two segments' ratio to 1.

Tuning files only (tests/data/diffusion_eager.yaml, diffusion_compiled.yaml); the held-out files
are never read here.

    python benchmarks/diffusion_nontensor.py
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy  # noqa: E402
import diffusion_breakdown  # noqa: E402

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import kernels, perf  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402

DATA = ROOT / "data"
TUNING = (diffusion_breakdown.TUNING, diffusion_breakdown.COMPILED)
GPUS = ("a100-sxm4-40gb", "h100-sxm", "v100-pcie-16gb", "rtx-a6000", "rtx-3090", "rtx-4080",
        "rtx-4090")  # fmt: skip
TENSOR = (kernels.GEMM, kernels.CONV, kernels.CONV_3X3, kernels.ATTN_FLASH)


def _pass(gpu: GpuSpec, batch: int) -> tuple[Any, Any]:
    """perf's view of one eager SD 1.5 UNet call at ``batch`` images on ``gpu``: (the GPU's
    rates and policy, the step's job), Lambda's A100 tuning row re-pointed (a single call)."""
    rows = yaml.safe_load(diffusion_breakdown.TUNING.read_text(encoding="utf-8"))["measurements"]
    base = next(r for r in rows if r["gpu_slug"] == "a100-sxm4-40gb")
    row = {**base, "gpu_slug": gpu.slug, "batch_size": batch, "steps": 1, "unet_calls": 1}
    work, backend = diffusion_breakdown._work(row, gpu, DATA)
    on = perf._on_gpu(gpu, work, "pytorch", None, backend)
    return on, perf._step_job(work, True, on.act_b)


def unet_pass(gpu: GpuSpec, batch: int) -> dict[str, float]:
    """Seconds of one eager SD 1.5 UNet pass at ``batch`` images (2 × batch latents), by part:
    "tensor" (convolutions, GEMMs, attention), "memory" (every other kernel, by its bytes) and
    "launch" (the per-kernel gaps), each op as kernels.op_time prices it."""
    on, job = _pass(gpu, batch)
    rates = dict(zip(kernels.CLASSES, on.rates or (), strict=True))
    launch = on.prof.kernel_us * 1e-6
    out = {"tensor": 0.0, "memory": 0.0, "launch": 0.0}
    for op in job.ops or ():
        if (op.role and op.role in on.drop) or op.name.startswith("vae."):
            continue
        t = kernels.op_time(op, rates, on.bw, 0.0, on.sms, on.balance, on.tensor_conv)
        out["tensor" if op.klass in TENSOR else "memory"] += t * op.count
        out["launch"] += launch * op.count
    return out


def fills(gpu: GpuSpec, batch: int = 1) -> dict[str, float]:
    """FLOP-weighted shape efficiency of the pass's convolutions and self-attention on ``gpu``."""
    on, job = _pass(gpu, batch)
    sums: dict[str, list[float]] = {"conv": [0.0, 0.0], "attn-self": [0.0, 0.0]}
    for op in job.ops or ():
        name = diffusion_breakdown.op_class(op)
        if name in sums and not op.name.startswith("vae."):
            e = kernels.shape_efficiency(op, on.sms, on.tensor_conv, on.balance)
            sums[name][0] += e * op.flops * op.count
            sums[name][1] += op.flops * op.count
    return {k: w / f for k, (w, f) in sums.items() if f}


@contextmanager
def memory_scaled(factor: float) -> Iterator[None]:
    """The memory class (the non-tensor kernels) at ``factor`` × its time in perf's step."""
    real = kernels.step_time
    index = kernels.CLASS_INDEX[kernels.MEMORY]

    def scaled(
        arrs: kernels.OpArrays, rates: tuple[float, ...], bandwidth: float, launch_s: float
    ) -> kernels.StepTime:
        classes = tuple(
            c if c.index != index else kernels.ClassColumns(
                c.index, c.intensity, tuple(b * factor for b in c.bytes_below),
                tuple(w * factor for w in c.work_above),
            )
            for c in arrs.classes
        )  # fmt: skip
        return real(kernels.OpArrays(classes, arrs.kernels, arrs.flops), rates, bandwidth, launch_s)

    with mock.patch.object(perf, "step_time", scaled):
        yield


@contextmanager
def blocks_per_sm(n: int) -> Iterator[None]:
    """Waves of ``n`` thread blocks per SM instead of one (kernels.wave_fill)."""
    real = kernels.wave_fill
    kernels._shape_efficiency.cache_clear()
    with mock.patch.object(kernels, "wave_fill", lambda t, s: real(t, n * s if s else s)):
        yield
    kernels._shape_efficiency.cache_clear()


def split() -> tuple[float, float]:
    """Median measured ÷ predicted of the two tuning sets' rows: (GeForce, every other card)."""
    segment = {g.slug: g.segment for g in read_gpu_specs(DATA)}
    ratios: dict[bool, list[float]] = {True: [], False: []}
    for path in TUNING:
        scored, _ = accuracy.evaluate_heldout(DATA, [path])
        for r in scored:
            ratios[segment[r.slug] == "consumer"].append(r.ratio)
    return statistics.median(ratios[True]), statistics.median(ratios[False])


VARIANTS: tuple[tuple[str, Callable[[], AbstractContextManager[None]]], ...] = (
    ("as shipped", lambda: memory_scaled(1.0)),
    ("non-tensor kernels x 0", lambda: memory_scaled(0.0)),
    ("non-tensor kernels x 2", lambda: memory_scaled(2.0)),
    ("non-tensor kernels x 4", lambda: memory_scaled(4.0)),
    ("two thread blocks per SM", lambda: blocks_per_sm(2)),
)


def main(argv: list[str] | None = None) -> int:
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    print("1. one eager SD 1.5 UNet pass (2 x batch latents): ms, and the non-tensor share")
    for slug in GPUS:
        parts = [unet_pass(gpus[slug], b) for b in (1, 4, 16)]
        cells = "  ".join(
            f"b{b}: {sum(p.values()) * 1e3:6.1f} ms tensor {p['tensor'] * 1e3:6.1f}"
            f" non-tensor {p['memory'] * 1e3:5.1f} ({p['memory'] / sum(p.values()):4.0%})"
            f" launch {p['launch'] * 1e3:4.1f}"
            for b, p in zip((1, 4, 16), parts, strict=True)
        )
        print(f"  {slug:15} {cells}")
    print("2. FLOP-weighted shape efficiency at batch 1 (tile, wave over the SMs, K loop, split-K)")
    for slug in GPUS:
        f = fills(gpus[slug])
        sms = gpus[slug].sm_count or "nominal"
        print(f"  {slug:15} SMs {sms!s:>7}  conv {f['conv']:.2f}  attention {f['attn-self']:.2f}")
    print("3. tuning rows, median measured / predicted: GeForce, the rest, and their ratio")
    for name, variant in VARIANTS:
        with variant():
            geforce, rest = split()
        print(f"  {name:26} GeForce {geforce:4.2f}  rest {rest:4.2f}  ratio {geforce / rest:4.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
