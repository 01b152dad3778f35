"""Report schema: validation rejections, the peak-rejection rule, apply_peaks."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from app.bench.report import (
    PEAK_TOLERANCE,
    BenchReport,
    Figure,
    apply_peaks,
    check_peak,
    normalize_peaks,
)
from tests.bench.conftest import fig, make_report


@pytest.mark.parametrize(
    "value, unit, message",
    [
        (-1.0, "TFLOPS", "negative"),
        (math.nan, "TFLOPS", "NaN"),
        (math.inf, "GB/s", "infinite"),
        (100_001.0, "TFLOPS", "implausible"),
        (2e5, "GB/s", "implausible"),
    ],
)
def test_figure_rejects_implausible_values(value: float, unit: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Figure(value=value, unit=unit)


def test_figure_status_consistency() -> None:
    with pytest.raises(ValidationError, match="needs a value"):
        Figure(unit="TFLOPS", status="ok")
    with pytest.raises(ValidationError, match="needs a reason"):
        Figure(unit="TFLOPS", status="rejected")
    with pytest.raises(ValidationError, match="must not carry a value"):
        Figure(unit="TFLOPS", value=1.0, status="failed", reason="x")
    Figure.missing("GB/s", "not_applicable", "CPU only")


def test_report_validation_from_json_rejects_bad_numbers() -> None:
    data = make_report().model_dump(mode="json")
    data["matmul"]["by_precision"]["bf16"]["best"]["value"] = 1e9
    with pytest.raises(ValidationError, match="implausible"):
        BenchReport.model_validate(data)
    data = make_report().model_dump(mode="json")
    data["memory"]["best"]["value"] = -3
    with pytest.raises(ValidationError, match="negative"):
        BenchReport.model_validate(data)
    data = make_report().model_dump(mode="json")
    data["schema_version"] = 3
    with pytest.raises(ValidationError):
        BenchReport.model_validate(data)


def test_report_json_round_trip() -> None:
    r = make_report()
    again = BenchReport.model_validate_json(r.model_dump_json())
    assert again == r
    assert again.schema_version == 2


def test_check_peak_rejects_above_tolerance() -> None:
    ok = check_peak(fig(100.0), 100.0 / PEAK_TOLERANCE + 1)  # just within 1.15 × peak
    assert ok.ok and ok.efficiency is not None and ok.efficiency > 1.0
    bad = check_peak(fig(100.0), 80.0)  # 1.25 × peak
    assert bad.status == "rejected"
    assert bad.value is None
    assert bad.rejected_value == 100.0
    assert bad.reason and "exceeds" in bad.reason
    assert check_peak(fig(100.0), None) == fig(100.0)


def test_apply_peaks_fills_efficiency_and_match() -> None:
    r = make_report()
    out = apply_peaks(
        r,
        {"fp32": 67.0, "bf16": 989.0, "fp16": 989.0, "bandwidth": 4800.0},
        "h200-sxm",
        "NVIDIA H200 SXM",
        "name",
    )
    assert r.catalog_match is None  # original untouched
    assert out.catalog_match is not None and out.catalog_match.slug == "h200-sxm"
    bf16 = out.matmul.by_precision["bf16"].best  # type: ignore[union-attr]
    assert bf16.peak == 989.0
    assert bf16.efficiency == pytest.approx(790 / 989)
    assert out.matmul.rows[0].figure.efficiency == pytest.approx(790 / 989)  # type: ignore[union-attr]
    eff = out.summary_efficiencies()
    assert eff["bf16"] == pytest.approx(790 / 989)
    assert eff["bandwidth_gbs"] == pytest.approx(4300 / 4800)
    assert "fp16" not in eff  # emulated rows are not used for calibration
    assert out.summary_measured()["bf16"] == 790.0


def test_apply_peaks_rejects_impossible_results() -> None:
    out = apply_peaks(make_report(), {"bf16": 500.0, "bandwidth_gbs": 3000.0})
    best = out.matmul.by_precision["bf16"].best  # type: ignore[union-attr]
    assert best.status == "rejected" and best.value is None
    assert out.memory.best.status == "rejected"  # type: ignore[union-attr]
    assert "bf16" not in out.summary_efficiencies()


def test_normalize_peaks() -> None:
    assert normalize_peaks(
        {"bandwidth": 10, "pcie_gbs": 32, "fp32": 0, "bf16": None, "fp16": float("nan"), "tf32": 5}
    ) == {"bandwidth_gbs": 10.0, "host_link_gbs": 32.0, "tf32": 5.0}
