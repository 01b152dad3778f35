"""The engine's eager CNN inference batch split by operator class, with the bytes it moves.

For each GPU:preset:batch asked (default: ResNet-50 at batch 1,024 on the RTX 4090, AMP, as
timm's benchmark CSVs run it) it prices every operator of the forward pass with
app.domain.kernels.op_time — the same rates, bandwidth, launch gap and SM count the estimate
uses — and sums time, FLOPs and bytes per class: the 1×1 / strided convolutions, the 3×3
stride-1 ones, depthwise ones, cuDNN's NCHW layout transforms, batch norm, activations,
residual adds, pooling and the rest. It then states the floor the step's bytes set: all of
them over the GPU's datasheet bandwidth, the least time any run moving those bytes can take
(a measured step below it says the engine counts bytes the run did not move).

    python benchmarks/cnn_breakdown.py [gpu:preset:batch[:precision[:nhwc]] ...]
    python benchmarks/cnn_breakdown.py rtx-4090:resnet-50:1024 rtx-4090:resnet-50:1024:fp16:nhwc

Used for docs/methodology.md §6.7s ("tm": where timm's eager CNN rows go).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import kernels, perf  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402
from app.domain.operators import Op  # noqa: E402
from app.domain.workload import WorkloadSpec  # noqa: E402

DEFAULT_ASKS = ("rtx-4090:resnet-50:1024",)


@dataclass(frozen=True)
class ClassSplit:
    seconds: float
    flops: float
    bytes: float
    launches: float


@dataclass(frozen=True)
class Breakdown:
    gpu: str
    preset: str
    batch: int
    channels_last: bool
    step_s: float  # the estimate's step (perf.single_gpu)
    classes: dict[str, ClassSplit]
    bandwidth_gbs: float  # the GPU's datasheet bandwidth

    @property
    def gpu_s(self) -> float:
        return sum(c.seconds for c in self.classes.values())

    @property
    def bytes(self) -> float:
        return sum(c.bytes for c in self.classes.values())

    def floor_s(self, without: tuple[str, ...] = ()) -> float:
        """The step's bytes (less the classes ``without``) over the datasheet bandwidth."""
        moved = sum(c.bytes for k, c in self.classes.items() if k not in without)
        return moved / (self.bandwidth_gbs * 1e9)


def op_class(op: Op) -> str:
    """The class a forward op is reported under."""
    if op.role in ("layout", "layout_3x3"):
        return "nchw"  # cuDNN's layout transforms around a tensor-core convolution
    if op.kind == "conv":
        return op.klass  # conv (1×1, strided, grouped), conv_3x3, conv_dw
    if op.kind == "norm":
        return op.role or "norm"  # bn, ln, gn
    if op.kind == "elementwise":
        return op.role or "elementwise"  # act, residual, cast, ...
    return op.kind  # pool, gemm (the classifier), ...


def job(
    slug: str, preset_id: str, batch: int, precision: str, channels_last: bool
) -> tuple[GpuSpec, WorkloadSpec, str]:
    """The inference job as the held-out harness builds it (its resolved precision and
    backend), eager PyTorch."""
    from app.domain import compat
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency, load_rules

    data = ROOT / "data"
    gpu = {g.slug: g for g in read_gpu_specs(data)}[slug]
    preset = load_presets(data)[preset_id]
    work = WorkloadSpec(
        task="inference",
        model=preset.model,
        precision=precision,
        batch_size=batch,
        seq_len=1,
        output_tokens=1,
        preset=preset.id,
        runtime="pytorch",
        efficiency=load_efficiency(data),
        channels_last=channels_last,
    )
    rules = load_rules(data)
    support = compat.framework_support(gpu, "pytorch", rules)
    prec, _ = compat.resolve_precision(gpu, precision, rules, support.backend, work.model.family)
    return gpu, work.with_precision(prec or precision), support.backend


def breakdown(
    slug: str, preset: str, batch: int, precision: str = "fp16", channels_last: bool = False
) -> Breakdown:
    gpu, work, backend = job(slug, preset, batch, precision, channels_last)
    on = perf._on_gpu(gpu, work, "pytorch", None, backend)
    # the step as cuDNN's autotuner runs it on this GPU (convolutions it moves to the CUDA cores)
    step = perf._autotuned_nchw(on, work, perf._step_job(work, True, on.act_b))
    assert on.rates is not None and step.ops is not None
    rates = dict(zip(kernels.CLASSES, on.rates, strict=True))
    launch = on.prof.kernel_us * 1e-6
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for op in step.ops:
        if op.role and op.role in on.drop:
            continue  # fused by the runtime, or a transform that does not run here
        c = acc[op_class(op)]
        one = kernels.op_time(op, rates, on.bw, launch, on.sms, on.balance, on.tensor_conv)
        c[0] += one * op.count
        c[1] += op.flops * op.count
        c[2] += op.bytes * op.count
        c[3] += op.count
    one = perf.single_gpu(gpu, work, backend=backend)
    return Breakdown(
        gpu.slug, preset, batch, channels_last, one.step_s,
        {k: ClassSplit(*v) for k, v in acc.items()}, float(gpu.memory_bandwidth_gbs),
    )  # fmt: skip


def report(b: Breakdown) -> None:
    layout = "channels-last" if b.channels_last else "NCHW"
    print(
        f"{b.gpu} {b.preset} batch {b.batch} ({layout}): GPU {b.gpu_s * 1e3:.1f} ms, step"
        f" {b.step_s * 1e3:.1f} ms, {b.batch / b.step_s:.0f} images/s; {b.bytes / 1e9:.1f} GB"
        f" moved, at the datasheet {b.bandwidth_gbs:.0f} GB/s no less than"
        f" {b.floor_s() * 1e3:.1f} ms ({b.floor_s(('nchw',)) * 1e3:.1f} ms without the transforms)"
    )
    for name, c in sorted(b.classes.items(), key=lambda kv: -kv[1].seconds):
        rate = c.flops / c.seconds / 1e12 if c.seconds and c.flops else 0.0
        print(
            f"  {name:12} {c.seconds * 1e3:8.1f} ms {100 * c.seconds / b.gpu_s:5.1f} %"
            f" {c.flops / 1e12:7.2f} TFLOP {c.bytes / 1e9:7.1f} GB {rate:6.1f} TFLOP/s"
            f" {c.launches:5.0f} launches"
        )


def parse(ask: str) -> tuple[str, str, int, str, bool]:
    slug, preset, batch, *rest = ask.split(":")
    precision = rest[0] if rest else "fp16"
    return slug, preset, int(batch), precision, len(rest) > 1 and rest[1] == "nhwc"


def main(argv: list[str]) -> int:
    for ask in argv or DEFAULT_ASKS:
        report(breakdown(*parse(ask)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
