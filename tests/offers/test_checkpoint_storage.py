"""data/offers/checkpoint-storage.yaml: every figure names a pinned source, and every
instance type it lists is one the shipped offers rent at a spot price."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from app.recommend import checkpoints
from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
DOC = yamlio.safe_load((ROOT / "data/offers/checkpoint-storage.yaml").read_text("utf-8"))


def test_every_source_is_pinned_and_dated() -> None:
    for key, ref in DOC["sources"].items():
        assert re.search(r"/blob/[0-9a-f]{40}/", ref["url"]), key
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", ref["read"]), key
    used = {item["source"] for item in DOC["instances"]}
    assert used == set(DOC["sources"])


def test_listed_instance_types_are_shipped_spot_offers() -> None:
    with (ROOT / "data/offers/skypilot-snapshot.csv").open(encoding="utf-8") as f:
        spot = {
            (row["cloud"], row["instance_type"]) for row in csv.DictReader(f)
            if row["spot_usd_per_hour_min"]
        }  # fmt: skip
    for item in DOC["instances"]:
        assert (item["provider"], item["instance_type"]) in spot, item
        assert item["disk_mbps"] > 0


def test_lookup() -> None:
    mbps, source = checkpoints.disk_mbps("azure", "Standard_NC24ads_A100_v4") or (0.0, "")
    assert mbps == 1000.0 and "nc-a100-v4-series.md" in source
    assert checkpoints.disk_mbps("runpod", "1x_H100-SXM_SECURE") is None
