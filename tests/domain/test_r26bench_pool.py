"""r26: pooling counts machines, not uploads, and leaves noisy figures out."""

from __future__ import annotations

from app.domain.calibration import Measurement, pool


def _m(bf16: float, machine: str | None = None, noisy: frozenset[str] = frozenset()) -> Measurement:
    return Measurement("h100-sxm", "cuda", {"bf16": bf16}, machine, noisy)


def test_one_report_uploaded_three_times_is_one_machine() -> None:
    pooled = pool([_m(0.6, "a"), _m(0.6, "a"), _m(0.6, "a")], {"h100-sxm": "cuda"})
    assert pooled["h100-sxm"].count == 1
    two = pool([_m(0.6, "a"), _m(0.6, "a"), _m(0.7, "b")], {"h100-sxm": "cuda"})
    assert two["h100-sxm"].count == 2
    # a machine's reports are one vote: the median of its own, not three votes of 0.6
    assert abs(two["h100-sxm"].compute["bf16"] - 0.65) < 1e-9


def test_reports_without_identity_count_one_each() -> None:
    assert pool([_m(0.6), _m(0.62)], {})["h100-sxm"].count == 2


def test_noisy_figures_are_left_out_and_counted() -> None:
    pooled = pool([_m(0.6, "a"), _m(0.2, "b", frozenset({"bf16"}))], {})["h100-sxm"]
    assert pooled.compute["bf16"] == 0.6 and pooled.count == 1
    assert pooled.noisy_left_out == 1
