"""A device report's chart tooltips write figures as the pages do (three significant
figures, whole from 1,000): Python's ",.4g" wrote a fast card's 123,456 samples/s as
"1.235e+05" and a CPU's 11.04 with four figures beside the table's three."""

from __future__ import annotations

from app.bench.report import BenchReport
from app.web.device_pages import _report_charts
from tests.reports.factory import figure, gpu_report


def _point(batch: int, samples_per_s: float) -> dict[str, object]:
    return {"batch": batch, "flops": 4_000_000_000, "step_time": figure(batch / samples_per_s, "s"),
            "samples_per_s": figure(samples_per_s, "samples/s"),
            "tflops": figure(1.0, "TFLOPS")}  # fmt: skip


def test_batch_chart_titles_are_three_significant_figures_never_exponents() -> None:
    curve = {"workload": "cnn_block", "mode": "forward", "precision": "bf16",
             "description": "ResNet bottleneck", "points": [_point(256, 123_456.0),
                                                            _point(1, 11.04)]}  # fmt: skip
    bench = BenchReport.model_validate(
        gpu_report() | {"batch_scaling": {"status": "ok", "curves": [curve]}}
    )
    chart = str(_report_charts(bench, None)["batch_chart"])
    assert "batch 256: 123,456 samples/s" in chart
    assert "batch 1: 11 samples/s" in chart
    assert "e+05" not in chart and "11.04" not in chart
