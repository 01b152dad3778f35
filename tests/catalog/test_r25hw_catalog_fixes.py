"""Catalog figures added in round 25 (helper hw), each with its source."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_catalog

DATA = Path(__file__).resolve().parents[2] / "data"
ENTRIES = {e.slug: e for e in read_catalog(DATA)}


def test_the_mi355x_entry_sources_its_fp4_rate() -> None:
    """The MXFP4 rate (twice FP8 per CU) that pricing native FP4 at twice fp8_tflops rests on,
    and vLLM's use of it on ROCm, are named sources of the entry."""
    entry = ENTRIES["mi355x"]
    assert {"rocm-xla-cdna4-mx", "vllm-rocm-supports-mx"} <= {s.id for s in entry.sources}
    assert "MXFP4" in (entry.notes or "") and "16384" in (entry.notes or "")
