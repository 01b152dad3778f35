"""Tips in plain words from synthetic reports."""

from __future__ import annotations

from app.bench.report import (
    BatchCurve,
    BatchPoint,
    BatchScalingSuite,
    BenchReport,
    Environment,
    Figure,
    MatmulRow,
    MatmulSuite,
    MatmulSummary,
    Speedup,
    TransferSuite,
)
from app.bench.tips import generate_tips


def f(v: float, unit: str = "TFLOPS") -> Figure:
    return Figure(value=v, unit=unit)


def curve(points: list[tuple[int, float]]) -> BatchCurve:
    pts = [
        BatchPoint(
            batch=b,
            flops=1,
            step_time=f(b / s, "s"),
            samples_per_s=f(s, "samples/s"),
            tflops=f(1.0),
        )
        for b, s in points
    ]
    return BatchCurve(
        workload="transformer_block",
        mode="train",
        precision="bf16",
        description="test",
        points=pts,
        b90=64,
    )


def _env(backend: str, device: str, name: str) -> Environment:
    return Environment(
        backend=backend,
        device=device,
        device_name=name,
        os="Linux",
        python_version="3.11",
        torch_version="2.13.0",
    )


def _matmul(fp32: float, bf16: float) -> MatmulSuite:
    by = {
        p: MatmulSummary(precision=p, native=True, reference=f(v), best=f(v))
        for p, v in (("fp32", fp32), ("bf16", bf16))
    }
    return MatmulSuite(by_precision=by)


def gpu_report() -> BenchReport:
    return BenchReport(
        profile="quick",
        environment=_env("cuda", "cuda:0", "GPU"),
        matmul=_matmul(10.0, 31.0),
        transfer=TransferSuite(kind="pcie", pinned_over_pageable_h2d=2.3),
        batch_scaling=BatchScalingSuite(
            curves=[curve([(16, 100.0), (32, 150.0), (64, 190.0), (128, 200.0)])]
        ),
        precision_speedups=[Speedup(source="matmul", precision="bf16", ratio=3.1)],
    )


def test_gpu_tips() -> None:
    tips = generate_tips(gpu_report())
    text = "\n".join(tips)
    assert (
        "pinned memory moves data 2.3× faster here: use pin_memory=True in your DataLoader" in text
    )
    assert (
        "bf16 is 3.1× faster than fp32 here (matmuls; no training step was measured): "
        "train with torch.autocast(" in text
    )
    assert "dtype=torch.bfloat16" in text
    assert "batch 64 reaches 90 % of peak throughput" in text


def test_cpu_tips_are_honest() -> None:
    env = Environment(
        backend="cpu",
        device="cpu",
        device_name="CPU",
        os="Linux",
        python_version="3.11",
        torch_version="2.13.0",
    )
    by = {
        "fp32": MatmulSummary(precision="fp32", native=True, reference=f(0.2), best=f(0.2)),
        "fp16": MatmulSummary(
            precision="fp16", native=False, note="emulated", reference=f(0.002), best=f(0.002)
        ),
        "bf16": MatmulSummary(precision="bf16", native=True, reference=f(0.1), best=f(0.1)),
    }
    report = BenchReport(
        profile="quick",
        environment=env,
        matmul=MatmulSuite(by_precision=by),
        transfer=TransferSuite(status="not_applicable", reason="CPU"),
        precision_speedups=[
            Speedup(source="matmul", precision="fp16", ratio=0.01),
            Speedup(source="matmul", precision="bf16", ratio=0.5),
        ],
    )
    text = "\n".join(generate_tips(report))
    assert "fp16 is not native on this CPU" in text
    assert "bf16 is slower than fp32 on this CPU" in text
    assert "pin_memory" not in text
    assert "CPU only" in text


def _noisy(v: float, unit: str) -> Figure:
    return Figure(value=v, unit=unit, noisy=True)


def test_a_noisy_batch_point_is_one_measurement_not_three() -> None:
    steady = [
        MatmulRow(precision="fp32", m=64, n=64, k=64, flops=1, role="search", figure=f(10.0))
        for _ in range(8)
    ]
    pts = [
        BatchPoint(
            batch=b,
            flops=1,
            step_time=_noisy(0.01, "s"),
            samples_per_s=_noisy(100.0 * b, "samples/s"),
            tflops=_noisy(1.0, "TFLOPS"),
        )
        for b in (1, 2)
    ]
    report = gpu_report()
    report.matmul = MatmulSuite(rows=steady)
    report.batch_scaling = BatchScalingSuite(
        curves=[
            BatchCurve(
                workload="cnn_block",
                mode="train",
                precision="bf16",
                description="t",
                points=pts,
                b90=2,
            )
        ]
    )
    # 2 noisy timings of 10: 20 %, not the 6 of 14 (43 %) that counting each view gives
    assert len(report.measurements()) == 10
    assert sum(x.noisy for x in report.measurements()) == 2
    assert not any("noisy" in t for t in generate_tips(report))
    report.matmul = MatmulSuite(rows=steady[:4])
    assert any("2 of 6 measurements were noisy" in t for t in generate_tips(report))


def test_one_point_says_nothing_about_the_batch_size() -> None:
    report = gpu_report()
    one = curve([(1, 50.0)])
    one.b90, one.stopped = 1, "step time 0.80 s at batch 1 exceeds the profile cap 0.5 s"
    report.batch_scaling = BatchScalingSuite(curves=[one])
    text = "\n".join(generate_tips(report))
    assert "reaches 90 %" not in text and "still rising" not in text
    assert "measured at batch 1 only (step time 0.80 s" in text
    one.stopped = None
    text = "\n".join(generate_tips(report))
    assert "batch 1" not in text


def cpu_report(speedups: list[Speedup]) -> BenchReport:
    return BenchReport(
        profile="quick",
        environment=_env("cpu", "cpu", "CPU"),
        matmul=_matmul(1.0, 6.0),
        precision_speedups=speedups,
    )


def test_training_tip_follows_the_training_step_not_the_matmul() -> None:
    # the quick CPU run: bf16 matmuls 6× faster, a conv training step 12× slower; the tip
    # said "train with torch.autocast(bfloat16)"
    report = cpu_report(
        [
            Speedup(source="matmul", precision="bf16", ratio=6.0),
            Speedup(source="conv_forward_backward", precision="bf16", ratio=0.086),
        ]
    )
    text = "\n".join(generate_tips(report))
    assert "torch.autocast" not in text
    assert (
        "bf16 matmuls alone are 6.0× faster than fp32 on this CPU, but a training step "
        "disagrees: conv forward+backward measured 12× slower than fp32; keep fp32 for "
        "training here" in text
    )


def test_training_tip_recommends_autocast_when_the_step_is_faster() -> None:
    report = cpu_report(
        [
            Speedup(source="matmul", precision="bf16", ratio=6.0),
            Speedup(source="conv_forward_backward", precision="bf16", ratio=1.9),
            Speedup(source="batch_transformer_block_train", precision="bf16", ratio=1.5),
        ]
    )
    text = "\n".join(generate_tips(report))
    # the slower of the two training measurements is the one quoted
    assert (
        "bf16 training is 1.5× faster than fp32 on this CPU (transformer block training, the "
        'slowest training measurement): train with torch.autocast(device_type="cpu"' in text
    )
