"""r30 review: the p95 ITL note read "(281 ms, not 28.4)", its second time without a unit;
both times now carry theirs."""

from __future__ import annotations

from app.domain.serving import STALL_PERCENTILE_SHARE, _Point, _stall_note


def test_both_times_carry_their_unit() -> None:
    point = _Point(
        itl=0.0284, itl_p95=0.281, ttft=0.4, ttft_p95=0.6, rate=1.0, batch=16.0,
        prefill_share=0.1, bound="memory bandwidth",
        stall_share=1.6 * STALL_PERCENTILE_SHARE, stall_s=0.281,
    )  # fmt: skip
    note = _stall_note(point)
    assert note is not None and "(281 ms, not 28.4 ms)" in note
