"""Device names as drivers print them, matched to catalog entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.reports.matching import match_device

SPECS = read_gpu_specs(Path(__file__).resolve().parents[2] / "data")


@pytest.mark.parametrize(
    ("name", "gib", "expected"),
    [
        ("NVIDIA GeForce RTX 4090", 23.6, "rtx-4090"),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", 15.7, "rtx-4090-laptop"),
        ("NVIDIA GeForce RTX 4060 Ti", 15.6, "rtx-4060-ti-16gb"),
        ("NVIDIA GeForce RTX 4060 Ti", 7.6, "rtx-4060-ti-8gb"),
        ("NVIDIA A100-SXM4-80GB", 79.2, "a100-sxm4-80gb"),
        ("NVIDIA A100-PCIE-40GB", 39.4, "a100-pcie-40gb"),
        ("NVIDIA GeForce RTX 3080 Ti", 11.7, "rtx-3080-ti"),
        ("Tesla T4", 14.6, "t4"),
    ],
)
def test_known_names(name: str, gib: float, expected: str) -> None:
    gpu = match_device(name, gib, SPECS)
    assert gpu is not None and gpu.slug == expected


def test_unknown_device_matches_nothing() -> None:
    assert match_device("Some Future Accelerator 9000", 64, SPECS) is None
    assert match_device("cpu", None, SPECS) is None
