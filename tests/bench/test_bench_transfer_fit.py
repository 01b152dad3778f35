"""The transfer fit from measured rows (pure: no device needed)."""

from __future__ import annotations

from app.bench.report import Figure, TransferRow
from app.bench.suites.transfer import fit_rows


def row(size: int, seconds: float, memory: str = "pinned") -> TransferRow:
    fig = Figure(value=size / seconds / 1e9, unit="GB/s", median_time_s=seconds)
    return TransferRow(
        direction="h2d",
        memory=memory,
        size_bytes=size,
        figure=fig,
    )


def test_tiny_sizes_still_give_a_pinned_fit() -> None:
    rows = [row(1 << 12, 10.4e-6), row(1 << 16, 10.1e-6)]
    fit = fit_rows(rows, headline=1 << 16)
    assert fit is not None and fit.memory == "pinned"
    assert fit.bandwidth_is_lower_bound
    assert fit.headline_size_bytes == 1 << 16
    assert fit.bandwidth_gbs == (1 << 16) / 10.1e-6 / 1e9


def test_a_resolved_sweep_is_a_plain_fit() -> None:
    rows = [row(s, 8e-6 + s / 25e9) for s in (1 << 16, 1 << 20, 1 << 24)]
    fit = fit_rows(rows, headline=1 << 20)
    assert fit is not None and not fit.bandwidth_is_lower_bound
    assert abs(fit.bandwidth_gbs - 25.0) < 1e-6
    assert fit.headline_size_bytes == 1 << 20


def test_one_size_is_no_fit() -> None:
    assert fit_rows([row(1 << 16, 1e-5)], headline=1 << 16) is None
    failed = Figure.missing("GB/s", "failed", "boom")
    rows = [
        row(1 << 12, 1e-5),
        TransferRow(direction="h2d", memory="pinned", size_bytes=1 << 16, figure=failed),
    ]
    assert fit_rows(rows, headline=1 << 16) is None
