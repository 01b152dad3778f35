"""r31: a tip's speed-up from figures that spread over 10 % is told as the range their p10/p90
allow, and one whose range straddles 1× says it cannot tell: a shared 2-core CPU's quick run
had read "bf16 training is 110.2× faster than fp32" and "channels_last convolutions are
72.4× faster" from bf16 steps timed between 2 and 8 ms that the same machine ran in 20 to
340 ms a minute later."""

from __future__ import annotations

from app.bench.report import ConvAggregate, ConvRow, ConvSuite, Figure
from app.bench.runner import compute_speedups
from app.bench.tips import generate_tips
from tests.bench.conftest import make_report

FLOPS = 2_774_532_096  # stage2_3x3 at batch 4, forward + backward


def _f(value: float, p10: float, p90: float, noisy: bool) -> Figure:
    return Figure(value=value, unit="TFLOPS", p10=p10, p90=p90, noisy=noisy, n_blocks=3,
                  iters_per_block=1, median_time_s=FLOPS / (value * 1e12))  # fmt: skip


def _conv(bf16_cl: Figure, bf16_nchw: Figure, fp32_cl: Figure, fp32_nchw: Figure) -> ConvSuite:
    rows = [
        ConvRow(
            layer="stage2_3x3",
            precision=p,
            mode="forward_backward",
            layout=layout,
            flops=FLOPS,
            figure=f,
        )
        for p, layout, f in (
            ("bf16", "channels_last", bf16_cl),
            ("bf16", "nchw", bf16_nchw),
            ("fp32", "channels_last", fp32_cl),
            ("fp32", "nchw", fp32_nchw),
        )
    ]
    aggs = [
        ConvAggregate(
            precision=p,
            mode="forward_backward",
            tflops=cl,
            tflops_nchw=nc.value,
            tflops_channels_last=cl.value,
            faster_layout="channels_last",
        )
        for p, cl, nc in (("bf16", bf16_cl, bf16_nchw), ("fp32", fp32_cl, fp32_nchw))
    ]
    return ConvSuite(rows=rows, aggregates=aggs)


def _tips(conv: ConvSuite) -> str:
    report = make_report()
    report.conv = conv
    report.precision_speedups = compute_speedups(report)
    return "\n".join(generate_tips(report))


def test_the_reviewed_runs_noisy_ratios_are_ranges() -> None:
    # the figures of the run (TFLOPS: median, p10, p90)
    text = _tips(
        _conv(
            _f(1.2607, 0.33689, 1.37636, True),
            _f(0.017418, 0.011779, 0.039798, True),
            _f(0.011436, 0.010511, 0.014098, True),
            _f(0.0069394, 0.0057789, 0.0084065, True),
        )
    )
    assert "110.2×" not in text and "72.4×" not in text
    assert "bf16 training is 24–131× faster than fp32" in text
    assert "channels_last convolutions are 8.5–117× faster" in text
    assert text.count("close other programs and rerun for one figure") >= 2


def test_a_noisy_ratio_that_straddles_one_says_it_cannot_tell() -> None:
    text = _tips(
        _conv(
            _f(0.030, 0.010, 0.040, True),
            _f(0.020, 0.015, 0.025, False),
            _f(0.020, 0.015, 0.025, False),
            _f(0.020, 0.015, 0.025, False),
        )
    )
    assert "bf16 against fp32 here was timed too unsteadily to say which trains faster" in text
    assert "train with torch.autocast" not in text
    assert "channels_last against the default NCHW layout was timed too unsteadily" in text


def test_steady_figures_keep_one_number() -> None:
    text = _tips(
        _conv(
            _f(0.60, 0.59, 0.61, False),
            _f(0.30, 0.295, 0.305, False),
            _f(0.20, 0.198, 0.202, False),
            _f(0.10, 0.099, 0.101, False),
        )
    )
    assert "bf16 training is 3.0× faster than fp32 here" in text
    assert "channels_last convolutions are 2.0× faster here (bf16, training)" in text
    assert "rerun for one figure" not in text
