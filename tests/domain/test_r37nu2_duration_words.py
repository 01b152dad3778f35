"""One way to say a length of time (figures.duration) and a user's own limit
(figures.limit_duration); a caveat names the hardware, not PyTorch's device string.

An answer had said "907.7 days" in its verdict beside "2.5 years" for the same time in a
variation, and "Finish within 24 h: nothing finishes within 24.0 h"; a caveat read "QLoRA
(bitsandbytes 4-bit) on mps is experimental"."""

from __future__ import annotations

import pytest

from app.domain.compat import hardware_on
from app.domain.evaluate import Limits, deadline, hours_text
from app.domain.figures import duration, limit_duration


@pytest.mark.parametrize(
    ("hours", "said"),
    [
        (1e-6, "0.0036 s"),
        (30 / 3600, "30 s"),
        (0.75, "45 min"),
        (1.5, "1.5 h"),
        (29.0, "29 h"),
        (18.84, "18.8 h"),
        (24 * 46.2, "46.2 days"),
        (24 * 907.7, "2.49 years"),  # had been "907.7 days" in the verdict
        (8766 * 2.5, "2.5 years"),
    ],
)
def test_every_duration_reads_one_way(hours: float, said: str) -> None:
    assert duration(hours) == said
    assert hours_text(hours) == said  # the engine's words are the same rule


def test_units_change_at_a_minute_an_hour_two_days_and_a_year() -> None:
    assert duration(59 / 3600) == "59 s" and duration(61 / 3600) == "1 min"
    assert duration(0.99) == "59 min" and duration(1.0) == "1 h"
    assert duration(47.0) == "47 h" and duration(48.0) == "2 days"
    assert duration(24 * 364.0) == "364 days"
    assert duration(8766.0) == "1 year"  # never "1 years"
    assert duration(8766.0 * 1.5) == "1.5 years"


def test_a_tiny_time_keeps_two_figures_in_any_magnitude() -> None:
    assert duration(1e-300) == "3.6e-297 s"  # a deadline near zero, not 300 digits


@pytest.mark.parametrize(
    ("hours", "said"),
    [
        (24.0, "24 h"),  # had read "24.0 h"
        (36, "36 h"),
        (48.0, "2 days"),  # the form's "2 days"
        (168.0, "7 days"),
        (100.0, "100 h"),
        (2.75, "2.75 h"),
        (0.5, "30 min"),
        (0.01, "0.01 h"),  # the form's "Finish within (hours)": as typed
    ],
)
def test_a_users_limit_reads_as_they_wrote_it(hours: float, said: str) -> None:
    assert limit_duration(hours) == said


def test_the_deadline_exclusion_says_the_limit_as_written() -> None:
    out = deadline(29.04, Limits(max_hours=24.0))
    assert out is not None
    assert out.reason == "takes 29 h, more than the 24 h asked"
    assert deadline(23.0, Limits(max_hours=24.0)) is None


@pytest.mark.parametrize(
    ("vendor", "backend", "said"),
    [
        ("apple", "mps", "Apple GPUs (MPS)"),
        ("amd", "rocm", "AMD GPUs (ROCm)"),
        ("nvidia", "cuda", "NVIDIA GPUs (CUDA)"),
        ("intel", "xpu", "Intel GPUs (XPU)"),
        ("intel", "hpu", "Intel Gaudi (HPU)"),
        ("apple", None, "Apple GPUs"),
    ],
)
def test_a_caveat_names_the_hardware_then_the_backend(
    vendor: str, backend: str | None, said: str
) -> None:
    assert hardware_on(vendor, backend) == said
