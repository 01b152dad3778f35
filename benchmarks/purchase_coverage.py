"""Which purchase prices each card people buy has, and what ``purchase_basis: auto`` pays.

Lists every consumer, workstation, laptop and Apple (soc) entry of data/gpus/*.yaml with its
purchase offers (the catalog's street and launch prices, and data/offers/purchase.yaml): the
condition, price, date and source of each, and the one 'auto' picks, or "no current price"
where it picks none (a launch price more than three years old is not current).

    PYTHONPATH=. python benchmarks/purchase_coverage.py [--missing] [--today YYYY-MM-DD]
"""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path

from app.catalog.loader import read_catalog
from app.domain.cost import PurchaseOffer, choose_purchase, launch_is_stale
from app.offers.loader import purchase_offers_from_catalog, read_seed_purchase_offers

DATA = Path(__file__).resolve().parents[1] / "data"
SEGMENTS = ("consumer", "workstation", "laptop", "soc")


def coverage(
    today: date, segments: tuple[str, ...] = SEGMENTS
) -> list[tuple[str, str, list[PurchaseOffer], PurchaseOffer | None]]:
    """(slug, segment, offers, auto's choice) of every card in ``segments``, in catalog order."""
    entries = [e for e in read_catalog(DATA) if e.segment in segments]
    by_slug: dict[str, list[PurchaseOffer]] = {e.slug: [] for e in entries}
    for p in purchase_offers_from_catalog(entries) + read_seed_purchase_offers(DATA):
        if p.gpu_slug in by_slug:
            stale = p.condition == "launch" and launch_is_stale(p.as_of, today)
            by_slug[p.gpu_slug].append(
                PurchaseOffer(p.usd, p.condition, p.as_of, p.source, stale=stale)
            )
    return [
        (e.slug, e.segment, by_slug[e.slug], choose_purchase(by_slug[e.slug], "auto"))
        for e in entries
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--missing", action="store_true", help="only cards with no current price")
    ap.add_argument("--today", type=date.fromisoformat, default=date.today())
    ap.add_argument("--datacenter", action="store_true", help="datacenter cards too")
    args = ap.parse_args()
    rows = coverage(args.today, SEGMENTS + (("datacenter",) if args.datacenter else ()))
    for slug, segment, offers, pick in rows:
        if args.missing and pick is not None:
            continue
        head = f"{slug} ({segment})"
        auto = (
            f"auto: {pick.condition} ${pick.usd:,.0f} ({pick.as_of})"
            if pick
            else "auto: NO CURRENT PRICE"
        )
        print(f"{head:40} {auto}")
        for o in offers:
            flag = " [launch > 3 years old]" if o.stale else ""
            print(f"    {o.condition:6} ${o.usd:>9,.2f}  {o.as_of:10}{flag}  {o.source[:90]}")
    missing = [slug for slug, _, _, pick in rows if pick is None]
    print(f"\n{len(rows) - len(missing)} of {len(rows)} have a current price; none: {missing}")


if __name__ == "__main__":
    main()
