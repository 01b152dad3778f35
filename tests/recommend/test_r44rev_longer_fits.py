"""One rule for both callers (what-if rows, an estimate's misfit): once a combined memory
change fits, its shorter-sequence variants are not tried; single changes always are."""

from __future__ import annotations

from app.recommend.misfit import ALL_AT_ONCE, longer_fits

LONG = f"{ALL_AT_ONCE} (sequence 1024, cross-entropy in 8 chunks)"
SHORT = f"{ALL_AT_ONCE} (sequence 512, cross-entropy in 8 chunks)"


def test_a_shorter_combined_change_is_skipped_once_a_longer_one_fits() -> None:
    assert longer_fits(SHORT, [LONG])
    assert longer_fits(SHORT, ["paged optimizer", LONG])


def test_nothing_is_skipped_before_a_combined_change_fits() -> None:
    assert not longer_fits(SHORT, [])
    assert not longer_fits(SHORT, ["sequence 1024 instead of 2048", "paged optimizer"])
    # a single change is tried whatever fitted before it
    assert not longer_fits("paged optimizer", [LONG])
