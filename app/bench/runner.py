"""Run the benchmark suites on one device and assemble a :class:`BenchReport`.

    from app.bench.runner import run_benchmarks
    report = run_benchmarks(profile="quick", device="auto", peaks=None, progress=None)

Profiles: ``quick`` (≤ 30 s on a 2-core CPU, every suite at reduced sizes) and
``standard`` (≤ 5 minutes; closer to the methodology's defaults). Each profile has a CPU
and an accelerator variant. Every global torch setting the suites touch is saved first and
restored afterwards, also on errors.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import torch

from app.bench import device as devmod
from app.bench import host, torch_state
from app.bench.environment import describe_environment
from app.bench.report import (
    BatchScalingSuite,
    BenchReport,
    ConvSuite,
    KernelSuite,
    MatmulSuite,
    MemorySuite,
    PeakMemorySuite,
    Speedup,
    TransferSuite,
    apply_peaks_in_place,
    normalize_peaks,
)
from app.bench.suites import (
    batch_scaling,
    conv,
    kernels,
    matmul,
    memory,
    peak_memory,
    transfer,
)
from app.bench.suites.common import (
    LLAMA3_8B_LAYERS,
    CnnConfig,
    Context,
    ConvLayer,
    KernelConfig,
    Profile,
    Shape3,
    TransformerConfig,
)
from app.bench.timing import TimingConfig
from app.bench.tips import generate_tips
from app.vocab import MEASURED_PRECISIONS

SUITES: tuple[str, ...] = (
    "matmul",
    "conv",
    "memory",
    "transfer",
    "batch_scaling",
    "peak_memory",
    "kernels",
)
PROFILES: tuple[str, ...] = ("quick", "standard")

_RESNET_LAYERS = (
    ConvLayer("stem_7x7_s2", 3, 224, 64, 7, 2, 3),
    ConvLayer("stage1_3x3", 64, 56, 64, 3, 1, 1),
    ConvLayer("stage2_3x3", 128, 28, 128, 3, 1, 1),
    ConvLayer("stage3_3x3", 256, 14, 256, 3, 1, 1),
    ConvLayer("stage4_3x3", 512, 7, 512, 3, 1, 1),
    ConvLayer("expand_1x1", 256, 14, 1024, 1, 1, 0),
)
_LAYER = {ly.name: ly for ly in _RESNET_LAYERS}


def _llama_gemms(ms: tuple[int, ...], layers: int = len(LLAMA3_8B_LAYERS)) -> tuple[Shape3, ...]:
    """(M, N, K) for each token count in ``ms`` and each of the first ``layers`` layers."""
    return tuple((m, n, k) for m in ms for n, k in LLAMA3_8B_LAYERS[:layers])


_CPU_QUICK_KERNELS = KernelConfig(
    # decode-skinny, a square and a Llama-3-8B projection at decode and short prefill sizes
    gemm_shapes=((1, 1024, 1024), (16, 1024, 1024), (512, 512, 512), (1, 4096, 4096)),
    gemm_precisions=("fp32", "bf16"),
    attention_bhd=(1, 8, 64),
    prefill_contexts=(128, 512),
    decode_contexts=(512, 2048),
    dtypes=("fp32",),
    elementwise_numel=(1 << 22,),
    norm_shapes=((2048, 1024),),
    embedding_shapes=((32000, 1024, 2048),),
)
_CPU_STANDARD_KERNELS = KernelConfig(
    gemm_shapes=(
        (1, 1024, 1024),
        (8, 1024, 1024),
        (16, 1024, 1024),
        (1024, 1024, 1024),
        (2048, 2048, 2048),
        *_llama_gemms((1, 16, 256), layers=2),
    ),
    gemm_precisions=("fp32", "bf16"),
    attention_bhd=(1, 32, 128),
    prefill_contexts=(256, 1024, 2048),
    decode_contexts=(1024, 4096, 8192),
    dtypes=("fp32", "bf16"),
    elementwise_numel=(1 << 22, 1 << 25),
    norm_shapes=((2048, 4096), (8192, 4096)),
    embedding_shapes=((32000, 4096, 2048),),
)
_ACCEL_QUICK_KERNELS = KernelConfig(
    gemm_shapes=((4096, 4096, 4096), *_llama_gemms((1, 16, 4096))),
    gemm_precisions=("bf16", "fp8"),
    attention_bhd=(1, 32, 128),
    prefill_contexts=(1024, 4096),
    decode_contexts=(1024, 8192, 32768),
    dtypes=("bf16",),
    elementwise_numel=(1 << 26,),
    norm_shapes=((16384, 4096),),
    embedding_shapes=((128256, 4096, 16384),),
    collective_bytes=(1 << 20, 1 << 26),
)
_ACCEL_STANDARD_KERNELS = KernelConfig(
    gemm_shapes=(
        (2048, 2048, 2048),
        (8192, 8192, 8192),
        *_llama_gemms((1, 4, 8, 16, 64, 256, 1024, 4096, 16384)),
    ),
    gemm_precisions=("fp32", "tf32", "fp16", "bf16", "fp8"),
    attention_bhd=(1, 32, 128),
    prefill_contexts=(512, 1024, 2048, 4096, 8192, 16384),
    decode_contexts=(512, 2048, 8192, 32768, 131072),
    dtypes=("bf16", "fp16"),
    elementwise_numel=(1 << 20, 1 << 24, 1 << 28),
    norm_shapes=((4096, 4096), (16384, 4096), (65536, 8192)),
    embedding_shapes=((128256, 4096, 4096), (128256, 4096, 65536)),
    collective_bytes=tuple(1 << p for p in range(16, 31, 2)),
)

_CPU_QUICK = Profile(
    name="quick",
    timing=TimingConfig(
        warmup_s=0.015, min_warmup_calls=3, block_s=0.02, n_blocks=5, min_blocks=3, max_total_s=0.2
    ),
    global_warmup_s=0.2,
    matmul_reference=(1024, 1024, 1024),
    matmul_search=((512, 512, 512), (1536, 1536, 1536)),
    matmul_emulated=(256, 256, 256),
    conv_batch=4,
    conv_layers=(_LAYER["stage2_3x3"], _LAYER["expand_1x1"]),
    conv_precisions=("fp32", "bf16"),
    memory_min_bytes=64 << 20,
    cnn=CnnConfig(channels=64, bottleneck=16, hw=16),
    transformer=TransformerConfig(d_model=128, heads=4, ff=512, seq=64),
    batches=(1, 2, 4, 8, 16, 32),
    batch_precisions=("auto",),
    batch_step_cap_s=0.1,
    batch_timing=TimingConfig(
        warmup_s=0.01, min_warmup_calls=3, block_s=0.015, n_blocks=5, min_blocks=3, max_total_s=0.15
    ),
    peak_memory_batches=(4, 32),
    memory_max_bytes=256 << 20,
    kernels=_CPU_QUICK_KERNELS,
    budget_s=16.0,
)

_CPU_STANDARD = Profile(
    name="standard",
    timing=TimingConfig(
        warmup_s=0.1, min_warmup_calls=3, block_s=0.1, n_blocks=5, min_blocks=3, max_total_s=1.0
    ),
    global_warmup_s=0.5,
    matmul_reference=(2048, 2048, 2048),
    matmul_search=((1024, 1024, 1024), (4096, 4096, 1024), (1024, 4096, 4096), (3072, 3072, 3072)),
    matmul_emulated=(512, 512, 512),
    matmul_single_thread=True,
    conv_batch=8,
    conv_layers=_RESNET_LAYERS,
    conv_precisions=("fp32", "bf16"),
    memory_min_bytes=256 << 20,
    cnn=CnnConfig(channels=256, bottleneck=64, hw=14),
    transformer=TransformerConfig(d_model=256, heads=4, ff=1024, seq=128),
    batches=(1, 2, 4, 8, 16, 32, 64),
    batch_precisions=("fp32", "bf16"),
    batch_step_cap_s=0.5,
    batch_timing=TimingConfig(
        warmup_s=0.03, min_warmup_calls=3, block_s=0.05, n_blocks=5, min_blocks=3, max_total_s=0.5
    ),
    peak_memory_batches=(8, 64),
    kernels=_CPU_STANDARD_KERNELS,
    budget_s=240.0,  # the standard goal is 5 minutes in all
)

_ACCEL_QUICK = Profile(
    name="quick",
    timing=TimingConfig(
        warmup_s=0.025, min_warmup_calls=3, block_s=0.02, n_blocks=5, min_blocks=3, max_total_s=0.3
    ),
    global_warmup_s=0.5,
    matmul_reference=(4096, 4096, 4096),
    # an H200 took 55 s over this profile with twice the shapes and rows (autotuning and
    # first calls cost more on a big GPU than the timed blocks): fewer of each, plus budget_s
    matmul_search=((8192, 8192, 1024), (8192, 8192, 8192)),
    matmul_emulated=(1024, 1024, 1024),
    conv_batch=32,
    conv_layers=(_LAYER["stage2_3x3"], _LAYER["expand_1x1"]),
    conv_precisions=("fp32", "fp16", "bf16"),
    memory_min_bytes=256 << 20,
    transfer_sizes=tuple(1 << p for p in (16, 20, 24, 26)),
    transfer_headline=64 << 20,
    cnn=CnnConfig(channels=256, bottleneck=64, hw=28),
    transformer=TransformerConfig(d_model=1024, heads=16, ff=4096, seq=256),
    batches=(1, 2, 4, 8, 16, 32, 64),
    batch_precisions=("auto",),
    batch_step_cap_s=0.5,
    peak_memory_batches=(8, 32),
    kernels=_ACCEL_QUICK_KERNELS,
    budget_s=16.0,
)

_ACCEL_STANDARD = Profile(
    name="standard",
    timing=TimingConfig(
        warmup_s=0.05, min_warmup_calls=3, block_s=0.05, n_blocks=7, min_blocks=5, max_total_s=1.0
    ),
    global_warmup_s=1.0,
    matmul_reference=(8192, 8192, 8192),
    matmul_search=(
        (4096, 4096, 4096),
        (2048, 2048, 2048),
        (16384, 8192, 1024),
        (8192, 8192, 4096),
        (1024, 10240, 5120),
        (8192, 16384, 8192),
        (6144, 6144, 6144),
        (12288, 12288, 4096),
    ),
    matmul_emulated=(2048, 2048, 2048),
    conv_batch=64,
    conv_layers=_RESNET_LAYERS,
    conv_precisions=("fp32", "tf32", "fp16", "bf16"),
    memory_min_bytes=1 << 30,
    transfer_sizes=tuple(1 << p for p in range(12, 31, 2)),
    transfer_headline=256 << 20,
    cnn=CnnConfig(channels=256, bottleneck=64, hw=56),
    transformer=TransformerConfig(d_model=2048, heads=16, ff=8192, seq=1024),
    batches=(1, 2, 4, 8, 16, 32, 64, 128, 256),
    batch_precisions=("fp32", "auto"),
    batch_step_cap_s=1.0,
    peak_memory_batches=(8, 32),
    kernels=_ACCEL_STANDARD_KERNELS,
    budget_s=240.0,  # the standard goal is 5 minutes in all
)


def get_profile(name: str, accelerator: bool) -> Profile:
    table = {
        ("quick", False): _CPU_QUICK,
        ("standard", False): _CPU_STANDARD,
        ("quick", True): _ACCEL_QUICK,
        ("standard", True): _ACCEL_STANDARD,
    }
    try:
        return table[(name, accelerator)]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}: use one of {', '.join(PROFILES)}") from None


# ---------------------------------------------------------------------------------------
# derived figures
# ---------------------------------------------------------------------------------------


def compute_speedups(report: BenchReport) -> list[Speedup]:
    """Low-precision ÷ fp32 ratios from matmul (best shape), conv aggregates and batch
    curves (best samples/s)."""
    out: list[Speedup] = []
    if report.matmul:
        bp = report.matmul.by_precision
        base = bp.get("fp32")
        if base is not None and base.best.ok and base.best.value:
            for p in MEASURED_PRECISIONS[1:]:  # each against fp32
                s = bp.get(p)
                if s is not None and s.best.ok and s.best.value:
                    out.append(
                        Speedup(source="matmul", precision=p, ratio=s.best.value / base.best.value)
                    )
    if report.conv:
        for mode in ("forward", "forward_backward"):
            aggs = {a.precision: a for a in report.conv.aggregates if a.mode == mode}
            base_a = aggs.get("fp32")
            if base_a is None or not base_a.tflops.ok or not base_a.tflops.value:
                continue
            for p, a in aggs.items():
                if p != "fp32" and a.tflops.ok and a.tflops.value:
                    out.append(
                        Speedup(
                            source=f"conv_{mode}",
                            precision=p,
                            ratio=a.tflops.value / base_a.tflops.value,
                        )
                    )
    if report.batch_scaling:
        curves = report.batch_scaling.curves
        for c in curves:
            if c.precision == "fp32" or not c.max_samples_per_s:
                continue
            base_c = next(
                (
                    x
                    for x in curves
                    if x.workload == c.workload
                    and x.mode == c.mode
                    and x.precision == "fp32"
                    and x.max_samples_per_s
                ),
                None,
            )
            if base_c is not None and base_c.max_samples_per_s:
                out.append(
                    Speedup(
                        source=f"batch_{c.workload}_{c.mode}",
                        precision=c.precision,
                        ratio=c.max_samples_per_s / base_c.max_samples_per_s,
                    )
                )
    return out


def _global_warmup(ctx: Context, seconds: float) -> None:
    """Bring clocks and thread pools to a steady state before the first measurement."""
    if seconds <= 0:
        return
    dev = ctx.torch_device
    n = 2048 if ctx.is_accelerator else 512
    dtype = torch.float32
    if ctx.is_accelerator:
        runnable, native, _ = devmod.precision_support(ctx.device, "bf16")
        if runnable and native:
            dtype = torch.bfloat16
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    end = time.perf_counter() + seconds
    while True:
        for _ in range(4):
            torch.mm(a, b)
        ctx.sync()
        if time.perf_counter() >= end:
            break


_WEIGHTS = {
    "matmul": 0.15,
    "conv": 0.15,
    "memory": 0.1,
    "transfer": 0.1,
    "batch_scaling": 0.2,
    "peak_memory": 0.05,
    "kernels": 0.3,
}

_RUNNERS: dict[str, Callable[[Context], Any]] = {
    "matmul": matmul.run,
    "conv": conv.run,
    "memory": memory.run,
    "transfer": transfer.run,
    "batch_scaling": batch_scaling.run,
    "peak_memory": peak_memory.run,
    "kernels": kernels.run,
}

_SUITE_TYPES: dict[str, type] = {
    "matmul": MatmulSuite,
    "conv": ConvSuite,
    "memory": MemorySuite,
    "transfer": TransferSuite,
    "batch_scaling": BatchScalingSuite,
    "peak_memory": PeakMemorySuite,
    "kernels": KernelSuite,
}


def run_benchmarks(
    profile: str | Profile = "quick",
    device: str = "auto",
    peaks: dict[str, float] | None = None,
    progress: Callable[[str, float], None] | None = None,
    suites: Sequence[str] | None = None,
) -> BenchReport:
    """Measure the device and return a validated report.

    ``peaks`` (precision → dense TFLOPS, ``bandwidth_gbs`` → GB/s, optional
    ``host_link_gbs``) enables the rejection rule (> 1.15 × peak is a measurement error) and
    the efficiency ratios. ``progress(step, fraction)`` is called as suites advance, with
    fraction in 0..1, ending with ``("done", 1.0)``. ``suites`` selects a subset of
    :data:`SUITES` (the others are recorded as skipped). ``profile`` may also be a
    :class:`Profile` instance (tests use tiny ones).
    """
    t_start = time.perf_counter()
    selected = list(SUITES) if suites is None else list(suites)
    unknown = [s for s in selected if s not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite(s) {unknown}: choose from {', '.join(SUITES)}")
    resolved = devmod.resolve_device(device)
    backend = devmod.backend_of(resolved)
    prof = profile if isinstance(profile, Profile) else get_profile(profile, backend != "cpu")
    peak_map = normalize_peaks(peaks)

    def emit(step: str, fraction: float) -> None:
        if progress is not None:
            progress(step, round(max(0.0, min(1.0, fraction)), 4))

    emit("environment", 0.0)
    total_w = sum(_WEIGHTS[s] for s in selected) or 1.0
    warnings: list[str] = []
    results: dict[str, Any] = {}
    with torch_state.preserved_state():
        if backend == "cpu":
            usable = host.usable_cores()
            if torch.get_num_threads() > usable:
                warnings.append(
                    f"torch threads reduced from {torch.get_num_threads()} to "
                    f"{usable} usable cores for the run"
                )
                torch.set_num_threads(usable)
        env = describe_environment(resolved)
        ctx = Context(
            device=resolved,
            backend=backend,
            sync=devmod.synchronizer(resolved),
            profile=prof,
            peaks=peak_map,
            warnings=warnings,
        )
        emit("warm-up", 0.01)
        _global_warmup(ctx, prof.global_warmup_s)
        t_suites = time.perf_counter()
        done_w = 0.0
        for name in SUITES:
            if name not in selected:
                results[name] = _SUITE_TYPES[name](status="skipped", reason="not selected")
                continue
            w = _WEIGHTS[name]
            base = 0.02 + 0.97 * done_w / total_w
            span = 0.97 * w / total_w

            def sub(step: str, f: float, base: float = base, span: float = span) -> None:
                emit(step, base + span * f)

            ctx.progress = sub
            sub(name.replace("_", " "), 0.0)
            t0 = time.perf_counter()
            if prof.budget_s is not None:
                # this suite's share of what is left, so time saved earlier carries over
                left_w = sum(_WEIGHTS[s] for s in selected if s not in results)
                left_s = prof.budget_s - (t0 - t_suites)
                ctx.deadline = t0 + max(0.0, left_s) * w / left_w
            try:
                results[name] = _RUNNERS[name](ctx)
            except Exception as exc:
                devmod.empty_cache(resolved)
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                results[name] = _SUITE_TYPES[name](
                    status="failed", reason=tb[:500], duration_s=time.perf_counter() - t0
                )
            done_w += w
    report = BenchReport(
        profile=prof.name,
        environment=env,
        warnings=warnings,
        **results,
    )
    report.precision_speedups = compute_speedups(report)
    if peak_map:
        apply_peaks_in_place(report, peak_map)
    report.tips = generate_tips(report)
    report.duration_s = time.perf_counter() - t_start
    report = BenchReport.model_validate(report.model_dump())
    emit("done", 1.0)
    return report
