"""Plain-word tips drawn from a benchmark report."""

from __future__ import annotations

from app.bench.report import BatchCurve, BenchReport, ConvRow, Figure, Speedup

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


# A ratio of two figures of which one spread over 10 % (``Figure.noisy``) is told as the range
# its p10/p90 allow, not as one number: a shared 2-core CPU's run read "bf16 training is
# 110.2× faster" from a bf16 step timed between 2 and 8 ms that the same machine ran in 20 to
# 340 ms a minute later. The tip's advice follows the range: where it straddles 1×, it
# cannot say which is faster.
Span = tuple[float, float]


def _rate_span(a: Figure, base: Figure) -> Span | None:
    """The range of a ÷ base when either figure is noisy (p10 ÷ p90 .. p90 ÷ p10), else None."""
    if not (a.noisy or base.noisy):
        return None
    a_lo, a_hi = a.p10 or a.value, a.p90 or a.value
    b_lo, b_hi = base.p10 or base.value, base.p90 or base.value
    if not (a_lo and a_hi and b_lo and b_hi):
        return None
    return (a_lo / b_hi, a_hi / b_lo)


def _speedup_span(report: BenchReport, sp: Speedup) -> Span | None:
    """The range of ``sp``'s ratio where a figure behind it was measured unsteadily."""
    if sp.source == "matmul" and report.matmul is not None:
        s, base = (report.matmul.by_precision.get(p) for p in (sp.precision, sp.baseline))
        return _rate_span(s.best, base.best) if s and base else None
    if sp.source.startswith("conv_") and report.conv is not None:
        mode = sp.source.removeprefix("conv_")
        aggs = {a.precision: a for a in report.conv.aggregates if a.mode == mode}
        a, b = aggs.get(sp.precision), aggs.get(sp.baseline)
        return _rate_span(a.tflops, b.tflops) if a and b else None
    if sp.source.startswith("batch_") and report.batch_scaling is not None:
        best: dict[str, Figure] = {}
        for c in report.batch_scaling.curves:
            if f"batch_{c.workload}_{c.mode}" == sp.source and c.points:
                top = max(c.points, key=lambda pt: pt.samples_per_s.value or 0.0)
                best[c.precision] = top.samples_per_s
        a_fig, b_fig = best.get(sp.precision), best.get(sp.baseline)
        return _rate_span(a_fig, b_fig) if a_fig and b_fig else None
    return None


def _times_span(r: float, span: Span | None) -> str:
    """_times, or the range a noisy ratio allows: 24–130× faster, between 2.0× slower and
    3.0× faster."""
    if span is None:
        return _times(r)
    lo, hi = span
    if lo >= 1:
        return f"{_x(lo)}–{_x(hi)}× faster"
    if hi <= 1:
        return f"{_x(1 / hi)}–{_x(1 / lo)}× slower"
    return f"between {_x(1 / lo)}× slower and {_x(hi)}× faster"


def _x(v: float) -> str:
    """A factor at the precision a range of them deserves: 1.3, 24, 131."""
    return f"{v:.1f}" if v < 10 else f"{v:.0f}"


def _plain(r: float, span: Span | None, digits: int) -> str:
    """A ratio as a plain factor (0.9×), or the range a noisy one allows (0.62–1.4×)."""
    if span is None:
        return f"{r:.{digits}f}×"
    return f"{span[0]:.{digits}f}–{span[1]:.{digits}f}×"


_UNSTEADY = "timings spread over 10 %: close other programs and rerun for one figure"


def _precision_tip(
    precision: str,
    where: str,
    dev_type: str,
    r: float,
    native: bool,
    training: list[Speedup],
    spans: dict[str, Span | None],
) -> str:
    autocast = f'torch.autocast(device_type="{dev_type}", dtype={_AUTOCAST_DTYPE[precision]})'
    span = spans.get("matmul")
    if not native:
        return (
            f"{precision} is not native {where}: matmuls run at {r:.2f}× the fp32 "
            f"speed (emulated), so keep fp32 rather than {precision} here"
        )
    if training:
        # the slowest training measurement decides: a tip must not promise what a step lost
        worst = min(training, key=lambda s: s.ratio)
        wspan = spans.get(worst.source)
        step = (
            f"{_training_name(worst.source)} measured {_times_span(worst.ratio, wspan)} than fp32"
        )
        if wspan is not None and wspan[0] < 1 < wspan[1]:
            return (
                f"{precision} against fp32 {where} was timed too unsteadily to say which "
                f"trains faster ({step}; {_UNSTEADY})"
            )
        noted = f"; {_UNSTEADY}" if wspan is not None else ""
        if worst.ratio < 0.8:
            if r >= 1.2:
                return (
                    f"{precision} matmuls alone are {_times_span(r, span)} than fp32 {where}, "
                    f"but a training step disagrees: {step}; keep fp32 for training here" + noted
                )
            return (
                f"{precision} is slower than fp32 {where} ({step}{noted}): keep fp32 for training"
            )
        if worst.ratio >= 1.2:
            return (
                f"{precision} training is {_times_span(worst.ratio, wspan)} than fp32 {where} "
                f"({_training_name(worst.source)}, the slowest training measurement{noted}): "
                f"train with {autocast}"
            )
        return (
            f"{precision} trains about as fast as fp32 {where} ({step}{noted}): mixed precision "
            "halves activation memory but does not save time"
        )
    if span is not None and span[0] < 1 < span[1]:
        return (
            f"{precision} matmuls against fp32 {where} were timed too unsteadily to say which "
            f"is faster ({_times_span(r, span)}; {_UNSTEADY})"
        )
    noted = f"; {_UNSTEADY}" if span is not None else ""
    if r >= 1.2:
        return (
            f"{precision} is {_times_span(r, span)} than fp32 {where} (matmuls; no training "
            f"step was measured{noted}): train with {autocast}"
        )
    if r >= 0.8:
        return (
            f"{precision} runs about as fast as fp32 {where} ({_plain(r, span, 1)}{noted}): "
            "mixed precision halves activation memory but does not save time"
        )
    return (
        f"{precision} is slower than fp32 {where} ({_plain(r, span, 2)}{noted}): "
        "keep fp32 for speed"
    )


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
        spans = {x.source: _speedup_span(report, x) for x in (sp, *training)}
        tips.append(_precision_tip(precision, where, dev_type, sp.ratio, native, training, spans))
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
    span = _layout_span(c.rows, a.precision)
    if span is not None and span[0] < 1 < span[1]:
        return [
            f"channels_last against the default NCHW layout was timed too unsteadily to say "
            f"which is faster ({a.precision}, training: {_times_span(r, span)}; {_UNSTEADY})"
        ]
    noted = f"; {_UNSTEADY}" if span is not None else ""
    if r >= 1.1:
        return [
            f"channels_last convolutions are {_times_span(r, span)} here ({a.precision}, "
            f"training{noted}): model = model.to(memory_format=torch.channels_last) and the "
            "same for the inputs"
        ]
    if r <= 1 / 1.1:
        inverse = None if span is None else (1 / span[1], 1 / span[0])
        return [
            f"the default NCHW layout is {_times_span(1 / r, inverse)} "
            f"than channels_last here ({a.precision}, training{noted}): keep the default memory "
            "format"
        ]
    return []


def _layout_span(rows: list[ConvRow], precision: str) -> Span | None:
    """The range of channels_last ÷ NCHW (Σ FLOPs ÷ Σ time over the layers, as the
    aggregates are) where a training row behind it was noisy; None when none was."""
    sel = [
        r for r in rows if r.precision == precision and r.mode == "forward_backward" and r.figure.ok
    ]
    if not any(r.figure.noisy for r in sel):
        return None

    def rate(layout: str, which: str) -> float | None:
        lr = [r for r in sel if r.layout == layout]
        times = [r.flops / v for r in lr if (v := getattr(r.figure, which) or r.figure.value)]
        return sum(r.flops for r in lr) / sum(times) if lr and len(times) == len(lr) else None

    cl_lo, cl_hi = rate("channels_last", "p10"), rate("channels_last", "p90")
    nc_lo, nc_hi = rate("nchw", "p10"), rate("nchw", "p90")
    if not (cl_lo and cl_hi and nc_lo and nc_hi):
        return None
    return (cl_lo / nc_hi, cl_hi / nc_lo)


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
