"""r26: no batch-size tip from a falling, noisy or unphysical batch curve; the fit flags a
negative intercept; peak memory keeps the time budget."""

from __future__ import annotations

import time

from app.bench.report import BatchCurve, BatchPoint, BatchScalingSuite, Figure
from app.bench.suites import peak_memory
from app.bench.suites.batch_scaling import fit_problem
from app.bench.suites.common import Context
from app.bench.tips import generate_tips
from tests.bench.conftest import make_report, make_tiny_profile


def _pt(batch: int, sps: float, noisy: bool = False) -> BatchPoint:
    t = batch / sps
    return BatchPoint(
        batch=batch,
        flops=1,
        step_time=Figure(value=t, unit="s", noisy=noisy),
        samples_per_s=Figure(value=sps, unit="samples/s", noisy=noisy),
        tflops=Figure(value=1e-3, unit="TFLOPS"),
    )


def _tips(points: list[BatchPoint], b90: int, t0: float | None = None) -> str:
    report = make_report()
    curve = BatchCurve(workload="cnn_block", mode="train", precision="fp32", description="t",
                       points=points, b90=b90, fit_t0_s=t0)  # fmt: skip
    report.batch_scaling = BatchScalingSuite(curves=[curve])
    return "\n".join(generate_tips(report))


def test_a_falling_curve_gives_no_batch_tip() -> None:
    # the review's run: 68.9 samples/s at batch 1, 17.2 (noisy) at batch 2, t0 = -0.086 s
    text = _tips([_pt(1, 68.9), _pt(2, 17.2, noisy=True)], b90=1, t0=-0.086)
    assert "reaches 90 %" not in text
    assert "too unsteadily to say which batch size is enough" in text
    text = _tips([_pt(1, 68.9), _pt(2, 17.2), _pt(4, 70.0)], b90=1)
    assert "reaches 90 %" not in text and "throughput fell to 17.2" in text


def test_a_negative_intercept_alone_gives_no_batch_tip() -> None:
    text = _tips([_pt(1, 60.0), _pt(2, 64.0), _pt(4, 66.0)], b90=1, t0=-0.01)
    assert "reaches 90 %" not in text and "negative fixed time" in text
    sound = _tips([_pt(1, 60.0), _pt(2, 64.0), _pt(4, 66.0)], b90=1, t0=0.01)
    assert "batch 1 reaches 90 % of peak throughput" in sound


def test_the_fit_flags_what_is_not_physical() -> None:
    assert "negative" in (fit_problem(-0.086, 0.05) or "")
    assert "negative" in (fit_problem(0.01, -0.001) or "")
    assert fit_problem(0.01, 0.002) is None


def test_peak_memory_out_of_time_is_skipped_with_a_note(monkeypatch: object) -> None:
    ctx = Context(device="cpu", backend="cpu", sync=lambda: None, profile=make_tiny_profile())
    ctx.deadline = time.perf_counter() - 1.0
    started = time.perf_counter()
    suite = peak_memory.run(ctx)
    assert time.perf_counter() - started < 1.0  # no child process started
    assert suite.status == "skipped" and not suite.points
    assert any(w.startswith("peak memory skipped: the profile's time budget") for w in ctx.warnings)


def test_peak_memory_children_wait_no_longer_than_the_budget_allows() -> None:
    ctx = Context(device="cpu", backend="cpu", sync=lambda: None, profile=make_tiny_profile())
    assert peak_memory._child_wait_s(ctx) == peak_memory.CHILD_TIMEOUT_S
    ctx.deadline = time.perf_counter() + 0.5
    assert peak_memory._child_wait_s(ctx) == peak_memory.MIN_CHILD_WAIT_S
    ctx.deadline = time.perf_counter() + 10.0
    assert 9.0 < peak_memory._child_wait_s(ctx) <= 10.0
