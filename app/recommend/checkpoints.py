"""The persistent storage an instance type documents for a checkpoint that must outlive a
spot interruption (data/offers/checkpoint-storage.yaml): its throughput cap and source."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from app.shipped import yamlio
from app.shipped.rules import DATA_DIR


@cache
def _table(data_dir: Path) -> dict[tuple[str, str], tuple[float, str]]:
    """(provider, instance type) → (MBps cap, 'title (url)')."""
    doc = yamlio.safe_load(
        (data_dir / "offers" / "checkpoint-storage.yaml").read_text(encoding="utf-8")
    )
    sources = doc["sources"]
    out: dict[tuple[str, str], tuple[float, str]] = {}
    for item in doc["instances"]:
        ref = sources[item["source"]]
        key = (str(item["provider"]), str(item["instance_type"]))
        out[key] = (float(item["disk_mbps"]), f"{ref['title']} ({ref['url']})")
    return out


def disk_mbps(
    provider: str, instance_type: str, data_dir: Path = DATA_DIR
) -> tuple[float, str] | None:
    """The instance type's documented cap on persistent-disk throughput (MBps) and its
    source, or None where none is sourced."""
    return _table(data_dir).get((provider, instance_type))
