"""Plain-word tips drawn from a benchmark report."""

from __future__ import annotations

from app.bench.report import BatchCurve, BenchReport, Speedup

_NAMES = {"cnn_block": "CNN block", "transformer_block": "transformer block"}
_AUTOCAST_DTYPE = {"bf16": "torch.bfloat16", "fp16": "torch.float16"}


def _mib(n: float) -> str:
    if abs(n) >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    return f"{n / (1 << 20):.1f} MiB"


def _speedup(report: BenchReport, source: str, precision: str) -> Speedup | None:
    return next(
        (s for s in report.precision_speedups if s.source == source and s.precision == precision),
        None,
    )


def _device_type(report: BenchReport) -> str:
    return report.environment.device.split(":")[0]


def _training_speedups(report: BenchReport, precision: str) -> list[Speedup]:
    """What a training step measured at this precision against fp32: the conv forward +
    backward and the batch curves' train mode. A tip about training follows these, not the
    matmul ratio: on CPUs bf16 matmuls can be fast while a whole step is far slower."""
    return [
        s
        for s in report.precision_speedups
        if s.precision == precision
        and (
            s.source == "conv_forward_backward"
            or (s.source.startswith("batch_") and s.source.endswith("_train"))
        )
    ]


_TRAINING_NAMES = {"conv_forward_backward": "conv forward+backward"}


def _training_name(source: str) -> str:
    if source in _TRAINING_NAMES:
        return _TRAINING_NAMES[source]
    workload = source.removeprefix("batch_").removesuffix("_train")
    return f"{_NAMES.get(workload, workload)} training"


def _times(r: float) -> str:
    """A ratio as people say it: 6.0× faster, 12× slower."""
    if r >= 1:
        return f"{r:.1f}× faster"
    slower = 1 / r if r > 0 else float("inf")
    return f"{slower:.1f}× slower" if slower < 10 else f"{slower:.0f}× slower"


def _precision_tip(
    precision: str, where: str, dev_type: str, r: float, native: bool, training: list[Speedup]
) -> str:
    autocast = f'torch.autocast(device_type="{dev_type}", dtype={_AUTOCAST_DTYPE[precision]})'
    if not native:
        return (
            f"{precision} is not native {where}: matmuls run at {r:.2f}× the fp32 "
            f"speed (emulated), so keep fp32 rather than {precision} here"
        )
    if training:
        # the slowest training measurement decides: a tip must not promise what a step lost
        worst = min(training, key=lambda s: s.ratio)
        step = f"{_training_name(worst.source)} measured {_times(worst.ratio)} than fp32"
        if worst.ratio < 0.8:
            if r >= 1.2:
                return (
                    f"{precision} matmuls alone are {_times(r)} than fp32 {where}, but a "
                    f"training step disagrees: {step}; keep fp32 for training here"
                )
            return f"{precision} is slower than fp32 {where} ({step}): keep fp32 for training"
        if worst.ratio >= 1.2:
            return (
                f"{precision} training is {_times(worst.ratio)} than fp32 {where} "
                f"({_training_name(worst.source)}, the slowest training measurement): "
                f"train with {autocast}"
            )
        return (
            f"{precision} trains about as fast as fp32 {where} ({step}): mixed precision "
            "halves activation memory but does not save time"
        )
    if r >= 1.2:
        return (
            f"{precision} is {r:.1f}× faster than fp32 {where} (matmuls; no training step "
            f"was measured): train with {autocast}"
        )
    if r >= 0.8:
        return (
            f"{precision} runs about as fast as fp32 {where} ({r:.1f}×): mixed "
            "precision halves activation memory but does not save time"
        )
    return f"{precision} is slower than fp32 {where} ({r:.2f}×): keep fp32 for speed"


def _precision_tips(report: BenchReport) -> list[str]:
    tips: list[str] = []
    backend = report.environment.backend
    where = "on this CPU" if backend == "cpu" else "here"
    matmul = report.matmul
    dev_type = _device_type(report)
    for precision in ("bf16", "fp16"):
        sp = _speedup(report, "matmul", precision)
        if sp is None:
            continue
        summary = matmul.by_precision.get(precision) if matmul else None
        native = bool(summary and summary.native)
        training = _training_speedups(report, precision)
        tips.append(_precision_tip(precision, where, dev_type, sp.ratio, native, training))
    tf = _speedup(report, "matmul", "tf32")
    if tf is not None and tf.ratio >= 1.5:
        tips.append(
            f"TF32 makes fp32 matmuls {tf.ratio:.1f}× faster here: "
            'torch.set_float32_matmul_precision("high") if ~3 significant digits are '
            "enough for your model"
        )
    return tips


def _transfer_tips(report: BenchReport) -> list[str]:
    t = report.transfer
    if t is None or t.status != "ok":
        return []
    if t.kind == "unified":
        return [
            "memory is unified on this machine: host↔device copies are memory copies in "
            "RAM and pin_memory=True does not apply"
        ]
    r = t.pinned_over_pageable_h2d
    if r is None:
        return []
    if r >= 1.15:
        return [
            f"pinned memory moves data {r:.1f}× faster here: use pin_memory=True in your "
            "DataLoader (and .to(device, non_blocking=True))"
        ]
    return [
        f"pinned and pageable host memory move data at about the same speed here "
        f"({r:.1f}×): pin_memory=True gains little on this machine"
    ]


def _conv_tips(report: BenchReport) -> list[str]:
    c = report.conv
    if c is None:
        return []
    aggs = [
        a
        for a in c.aggregates
        if a.mode == "forward_backward" and a.tflops_nchw and a.tflops_channels_last
    ]
    if not aggs:
        return []
    # prefer the fastest precision's training row: that is what people will run
    a = max(aggs, key=lambda x: x.tflops.value or 0.0)
    assert a.tflops_nchw is not None and a.tflops_channels_last is not None
    r = a.tflops_channels_last / a.tflops_nchw
    if r >= 1.1:
        return [
            f"channels_last convolutions are {r:.1f}× faster here ({a.precision}, "
            "training): model = model.to(memory_format=torch.channels_last) and the same "
            "for the inputs"
        ]
    if r <= 1 / 1.1:
        return [
            f"the default NCHW layout is {1 / r:.1f}× faster than channels_last here "
            f"({a.precision}, training): keep the default memory format"
        ]
    return []


def _batch_tips(report: BenchReport) -> list[str]:
    b = report.batch_scaling
    if b is None:
        return []
    tips: list[str] = []
    for curve in b.curves:
        if curve.mode != "train" or not curve.points or curve.b90 is None:
            continue
        largest = curve.points[-1].batch
        name = _NAMES.get(curve.workload, curve.workload)
        if len(curve.points) == 1:
            # one point compares nothing: it says neither "enough" nor "still rising"
            if curve.stopped:
                tips.append(
                    f"the {name} ({curve.precision} training) was measured at batch "
                    f"{largest} only ({curve.stopped}): this run cannot tell which "
                    "batch size is enough"
                )
            continue
        unsound = _unsound_curve(curve)
        if unsound is not None:
            tips.append(
                f"the {name} ({curve.precision} training) batch curve was measured too "
                f"unsteadily to say which batch size is enough ({unsound}): close other "
                "programs and rerun"
            )
            continue
        if curve.b90 == largest:
            tips.append(
                f"throughput of the {name} ({curve.precision} training) was still "
                f"rising at batch {largest}, the largest tried: use the largest batch "
                "that fits in memory"
            )
        else:
            tips.append(
                f"batch {curve.b90} reaches 90 % of peak throughput for the {name} "
                f"({curve.precision} training); larger batches add little speed"
            )
    return tips


# A later batch whose throughput falls below this share of an earlier one's makes the curve
# falling, not saturating: B90 read off it would name the batch before the fall.
_FALL = 0.9


def _unsound_curve(curve: BatchCurve) -> str | None:
    """Why a batch curve cannot carry a batch-size tip, or None: a point whose timing was
    noisy, a throughput that falls as the batch grows, or a fit that is not physical
    (batch_scaling.fit_problem: a negative fixed time). A CNN at 68.9 samples/s at batch 1
    and 17.2 (noisy) at batch 2 had given "batch 1 reaches 90 % of peak throughput"."""
    noisy = [p.batch for p in curve.points if p.step_time.noisy or p.samples_per_s.noisy]
    if noisy:
        return f"timings spread over 10 % at batch {', '.join(str(b) for b in noisy)}"
    best = 0.0
    for p in curve.points:
        v = p.samples_per_s.value or 0.0
        if best > 0 and v < _FALL * best:
            return f"throughput fell to {v:.3g} samples/s at batch {p.batch}"
        best = max(best, v)
    if curve.fit_note is not None or (curve.fit_t0_s is not None and curve.fit_t0_s < 0):
        return "the step times fit a negative fixed time"
    return None


def _memory_tips(report: BenchReport) -> list[str]:
    pm = report.peak_memory
    if pm is None or pm.per_sample_bytes is None or pm.fixed_bytes is None:
        return []
    if pm.per_sample_bytes <= 0:
        return []
    return [
        f"a training step of the test transformer block needs about "
        f"{_mib(max(pm.fixed_bytes, 0.0))} plus {_mib(pm.per_sample_bytes)} per sample: "
        "activations grow linearly with the batch (activation checkpointing trades "
        "compute for that memory)"
    ]


def _efficiency_tips(report: BenchReport) -> list[str]:
    tips: list[str] = []
    effs = report.summary_efficiencies()
    low = {k: v for k, v in effs.items() if k != "bandwidth_gbs" and v < 0.5}
    if low:
        k, v = min(low.items(), key=lambda kv: kv[1])
        tips.append(
            f"{k} matmul reaches only {v:.0%} of the catalog peak: check clocks, power "
            "limits and other processes using the device, then rerun"
        )
    bw = effs.get("bandwidth_gbs")
    if bw is not None and bw < 0.6:
        tips.append(
            f"memory bandwidth reaches only {bw:.0%} of the catalog figure: check "
            "other processes and power settings"
        )
    return tips


def _quality_tips(report: BenchReport) -> list[str]:
    tips: list[str] = []
    figs = report.measurements()
    ok = [f for f in figs if f.ok]
    noisy = [f for f in ok if f.noisy]
    if ok and len(noisy) / len(ok) > 0.2:
        tips.append(
            f"{len(noisy)} of {len(ok)} measurements were noisy (spread over 10 %): "
            "close other programs and rerun for steadier numbers"
        )
    # a rejection is per figure (a batch point's TFLOPS can exceed the peak, its step time not)
    rejected = [f for _, f in report.figures() if f.status == "rejected"]
    if rejected:
        tips.append(
            f"{len(rejected)} figure(s) exceeded the known peak by more than 15 % and "
            "were rejected as measurement errors"
        )
    env = report.environment
    if env.backend == "cpu":
        tips.append(
            f"this run measured the CPU only: torch {env.torch_version} sees no CUDA, "
            "ROCm, MPS or XPU device"
        )
        if env.torch_threads and env.cpu_usable_cores and env.torch_threads > env.cpu_usable_cores:
            tips.append(
                f"torch uses {env.torch_threads} threads on {env.cpu_usable_cores} usable "
                "cores: set torch.set_num_threads to the core count to avoid "
                "oversubscription"
            )
    return tips


def generate_tips(report: BenchReport) -> list[str]:
    """Tips in order of usefulness: precision, data movement, layout, batch, memory,
    efficiency against the catalog, measurement quality."""
    tips: list[str] = []
    for part in (
        _precision_tips,
        _transfer_tips,
        _conv_tips,
        _batch_tips,
        _memory_tips,
        _efficiency_tips,
        _quality_tips,
    ):
        tips.extend(part(report))
    return tips
