"""`gpu-advisor bench`'s table says what its marks mean (a lab admin's quick CPU run, thirty-
eighth session): "37.2 GFLOPS ~" had no key, the batch curves' note read "B90=1", and a
precision that does not apply showed the raw status "not_applicable"."""

from __future__ import annotations

from rich.console import Console

from app.bench import command
from app.bench.report import BatchCurve, BatchScalingSuite, BenchReport, Figure
from tests.bench.conftest import make_report


def _text(report: BenchReport) -> str:
    con = Console(record=True, width=100)
    con.print(command.summary_table(report, 100))
    return con.export_text()


def _with_curves(report: BenchReport) -> BenchReport:
    curves = [
        BatchCurve(workload="cnn_block", mode="train", precision="fp32", description="d", b90=4,
                   max_samples_per_s=83.6, best_tflops=0.5),
        BatchCurve(workload="transformer_block", mode="train", precision="fp32", description="d",
                   b90=None, max_samples_per_s=5.0, best_tflops=0.4),
    ]  # fmt: skip
    return report.model_copy(update={"batch_scaling": BatchScalingSuite(curves=curves)})


def test_batch_curves_say_b90_in_words() -> None:
    text = _text(_with_curves(make_report()))
    assert "B90" not in text
    assert "90 % of best from batch 4" in text
    assert "no batch within 90 % of best" in text


def test_a_noisy_mark_has_its_key_under_the_table() -> None:
    report = make_report()
    assert report.memory is not None and report.memory.triad is not None
    steady = _text(report)
    assert "~" not in steady  # no mark, no key
    noisy = report.memory.model_copy(
        update={"triad": report.memory.triad.model_copy(update={"noisy": True})}
    )
    text = _text(report.model_copy(update={"memory": noisy}))
    assert "4,100 GB/s ~" in text
    below = text[text.rindex("└") :]
    assert "~ timings spread over 10 %" in below


def test_a_status_reads_in_words() -> None:
    report = make_report()
    assert report.matmul is not None
    fp8 = report.matmul.by_precision["fp16"].model_copy(
        update={
            "precision": "fp8",
            "best": Figure(unit="TFLOPS", status="not_applicable", reason="no fp8 here"),
        }
    )
    matmul = report.matmul.model_copy(
        update={"by_precision": {**report.matmul.by_precision, "fp8": fp8}}
    )
    text = _text(report.model_copy(update={"matmul": matmul}))
    assert "not applicable" in text and "not_applicable" not in text
