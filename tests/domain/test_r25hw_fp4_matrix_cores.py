"""Which GPUs run FP4 math in hardware (compat.fp4_matrix_cores): NVIDIA Blackwell and AMD
CDNA 4 (MI355X: MXFP4 at twice its FP8 rate per CU), not CDNA 3 or Hopper."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain.compat import fp4_matrix_cores
from tests.domain.fixtures import H100

MI355X = dataclasses.replace(
    H100, slug="mi355x", name="MI355X", vendor="amd", architecture="CDNA 4",
    compute_capability="gfx950", backends=("rocm",),
)  # fmt: skip


@pytest.mark.parametrize(
    ("vendor", "cc", "native"),
    [
        ("amd", "gfx950", True),  # CDNA 4: MXFP4/MXFP6 matrix cores
        ("amd", "gfx942", False),  # CDNA 3 (MI300X/MI325X): FP8 at most
        ("amd", "gfx90a", False),
        ("nvidia", "10.0", True),  # B200
        ("nvidia", "12.0", True),  # RTX 50
        ("nvidia", "9.0", False),  # H100
        ("intel", None, False),
    ],
)
def test_fp4_matrix_cores(vendor: str, cc: str | None, native: bool) -> None:
    gpu = dataclasses.replace(MI355X, vendor=vendor, compute_capability=cc)
    assert fp4_matrix_cores(gpu) is native
