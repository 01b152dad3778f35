"""The shipped catalog: size, coverage, sources, and known datasheet values so that a
typo cannot slip in."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from app.catalog.loader import read_catalog

DATA = Path(__file__).resolve().parents[2] / "data"
CATALOG = {g.slug: g for g in read_catalog(DATA)}


def test_at_least_80_gpus() -> None:
    assert len(CATALOG) >= 80


def test_vendors_and_segments_covered() -> None:
    vendors = Counter(g.vendor for g in CATALOG.values())
    assert set(vendors) == {"nvidia", "amd", "intel", "apple"}
    segments = {g.segment for g in CATALOG.values()}
    assert {"datacenter", "workstation", "consumer", "soc"} <= segments


@pytest.mark.parametrize(
    "slug",
    [
        "v100-sxm2-32gb", "t4", "a10", "a30", "a40", "a100-pcie-40gb", "a100-pcie-80gb",
        "a100-sxm4-40gb", "a100-sxm4-80gb", "l4", "l40", "l40s", "h100-pcie", "h100-sxm",
        "h100-nvl", "h200-sxm", "b200", "rtx-a6000", "rtx-6000-ada", "rtx-4060-ti-16gb",
        "rtx-3090", "rtx-3090-ti", "rtx-4090", "rtx-5090", "mi300x", "mi325x", "rx-7900-xtx",
        "radeon-pro-w7900", "gaudi2", "gaudi3", "arc-a770-16gb", "max-1550", "apple-m2-ultra",
    ],
)  # fmt: skip
def test_issue_named_models_present(slug: str) -> None:
    assert slug in CATALOG


@pytest.mark.parametrize(
    ("slug", "field", "expected", "rel"),
    [
        # NVIDIA H100 datasheet: BF16 1,979 TFLOPS "with sparsity" -> 989 dense.
        ("h100-sxm", "bf16_tflops", 989, 0.01),
        ("h100-sxm", "memory_bandwidth_gbs", 3350, 0.01),
        ("h100-sxm", "memory_gb", 80, 0),
        # A100 datasheet: 80GB SXM 2,039 GB/s; BF16 312 dense.
        ("a100-sxm4-80gb", "memory_bandwidth_gbs", 2039, 0.005),
        ("a100-sxm4-80gb", "bf16_tflops", 312, 0.01),
        ("a100-pcie-40gb", "memory_bandwidth_gbs", 1555, 0.01),
        # Ada whitepaper: RTX 4090 24 GB, 1008 GB/s, FP16 w/ FP32 accumulate 165.2 dense.
        ("rtx-4090", "memory_gb", 24, 0),
        ("rtx-4090", "memory_bandwidth_gbs", 1008, 0.005),
        ("rtx-4090", "fp16_tflops", 165.2, 0.01),
        ("rtx-3090", "memory_gb", 24, 0),
        ("rtx-4060-ti-16gb", "memory_gb", 16, 0),
        ("h200-sxm", "memory_gb", 141, 0),
        ("h200-sxm", "memory_bandwidth_gbs", 4800, 0.01),
        ("mi300x", "memory_gb", 192, 0),
        ("mi300x", "memory_bandwidth_gbs", 5300, 0.01),
        ("l4", "memory_gb", 24, 0),
        ("t4", "memory_gb", 16, 0),
    ],
)
def test_known_datasheet_values(slug: str, field: str, expected: float, rel: float) -> None:
    value = getattr(CATALOG[slug], field)
    assert value == pytest.approx(expected, rel=rel) if rel else value == expected


def test_every_entry_cites_locatable_sources() -> None:
    for gpu in CATALOG.values():
        assert gpu.sources, gpu.slug
        assert all(s.url or s.repo for s in gpu.sources), gpu.slug


def test_prices_are_dated_and_sourced() -> None:
    for gpu in CATALOG.values():
        for price in (gpu.street_price, gpu.cloud_price):
            if price is not None:
                assert price.as_of and price.source, gpu.slug


def test_variants_are_separate_entries() -> None:
    assert CATALOG["a100-sxm4-80gb"].memory_gb != CATALOG["a100-sxm4-40gb"].memory_gb
    assert CATALOG["h100-pcie"].memory_bandwidth_gbs < CATALOG["h100-sxm"].memory_bandwidth_gbs
    assert CATALOG["rtx-4060-ti-16gb"].memory_gb == 2 * CATALOG["rtx-4060-ti-8gb"].memory_gb


def test_geforce_half_precision_is_fp32_accumulate() -> None:
    # PyTorch accumulates fp16/bf16 in fp32; on GeForce that rate is half the marketing
    # fp16-accumulate figure. 4090: 330 (fp16 acc) vs 165 (fp32 acc).
    assert CATALOG["rtx-4090"].fp16_tflops is not None
    assert CATALOG["rtx-4090"].fp16_tflops < 200
