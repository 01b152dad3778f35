"""data/offers/purchase.yaml: every price is dated and sourced, reaches the offers API as it is
written, and is what a buy question pays under ``purchase_basis: auto``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from app.catalog.loader import read_catalog
from app.domain.cost import (
    GpuOffers,
    RentalPolicy,
    Usage,
    choose_purchase,
    launch_is_stale,
    price_configuration,
)
from app.offers.loader import purchase_offers_from_catalog, read_seed_purchase_offers
from tests.support import load_benchmark

DATA = Path(__file__).resolve().parents[2] / "data"
DOC = yaml.safe_load((DATA / "offers" / "purchase.yaml").read_text(encoding="utf-8"))
ROWS: list[dict[str, Any]] = DOC["prices"]
CATALOG = {
    g["slug"]
    for f in (DATA / "gpus").glob("*.yaml")
    for g in yaml.safe_load(f.read_text(encoding="utf-8"))["gpus"]
}


def _id(row: dict[str, Any]) -> str:
    return f"{row['gpu']}-{row['condition']}"


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_every_row_names_a_catalog_card_a_condition_a_date_and_a_source(
    row: dict[str, Any],
) -> None:
    assert row["gpu"] in CATALOG
    assert row["condition"] in ("new", "used", "market", "launch")
    assert row["usd"] > 0
    assert re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", row["as_of"]), row["as_of"]
    source = DOC["sources"][row["source"]]
    assert source["title"].strip() and source["url"].startswith("https://")


def test_the_loader_reads_every_row_with_its_source() -> None:
    loaded = read_seed_purchase_offers(DATA)
    assert [(o.gpu_slug, o.condition, o.usd, o.as_of) for o in loaded] == [
        (r["gpu"], r["condition"], float(r["usd"]), r["as_of"]) for r in ROWS
    ]
    for o, r in zip(loaded, ROWS, strict=True):
        assert DOC["sources"][r["source"]]["url"][:200] in o.source


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_every_row_is_a_purchase_offer_of_its_card(
    read_client: TestClient, row: dict[str, Any]
) -> None:
    items = read_client.get(
        "/api/v1/offers", params={"gpu": row["gpu"], "kind": "purchase", "limit": 50}
    ).json()["items"]
    url = DOC["sources"][row["source"]]["url"]
    assert any(
        o["condition"] == row["condition"] and o["usd"] == row["usd"]
        and o["as_of"] == row["as_of"] and url in o["source"]
        for o in items
    ), items  # fmt: skip


# every card's cheapest way to buy ResNet-50 training under purchase_basis auto
AUTO_BUY_CONSTRAINTS = {"acquisition": "buy", "purchase_basis": "auto"}
AUTO_BUY_RESNET = {
    "workload": {"preset": "resnet-50", "task": "training"},
    "constraints": AUTO_BUY_CONSTRAINTS,
    "objective": "cheapest",
    "limit": 500,
}


def _buy(client: TestClient, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return {row["gpu"]["slug"]: row for row in r.json()["recommendations"]}


# Cards that had no current price before these rows: the P40 and the 3060 12 GB had none, the
# 4060 Ti 16 GB only its 2023 launch price.
BUDGET_CARDS = ("tesla-p40", "rtx-3060-12gb", "rtx-4060-ti-16gb")


def test_auto_basis_buys_the_budget_cards_at_their_sourced_price(read_client: TestClient) -> None:
    rows = _buy(read_client, AUTO_BUY_RESNET)
    for slug in BUDGET_CARDS:
        want = next(r for r in ROWS if r["gpu"] == slug)
        buy = rows[slug]["cost"]["buy"]
        assert (buy["condition"], buy["unit_usd"], buy["as_of"]) == (
            want["condition"], want["usd"], want["as_of"],
        ), slug  # fmt: skip


def test_llama_70b_at_home_for_3000_lists_two_used_3090s_and_two_p40s(
    read_client: TestClient,
) -> None:
    """The question issue 23 could not answer: 70B at 4 bits on a $3,000 budget."""
    rows = _buy(
        read_client,
        {
            "workload": {"preset": "llama-3-70b", "task": "inference", "quantization": "q4_k_m"},
            "constraints": {
                "acquisition": "buy", "purchase_basis": "auto", "max_purchase_usd": 3000,
                "allow_4bit": True,
            },
            "objective": "cheapest",
            "limit": 50,
        },
    )  # fmt: skip
    assert rows, "some configuration fits the budget"
    assert all(r["cost"]["buy"]["usd"] <= 3000 for r in rows.values())
    p40 = next(r for r in ROWS if r["gpu"] == "tesla-p40")
    assert rows["tesla-p40"]["num_gpus"] >= 2  # 24 GB each: one card cannot hold 70B
    assert rows["tesla-p40"]["cost"]["buy"]["condition"] in ("used", "market")
    assert rows["tesla-p40"]["cost"]["buy"]["usd"] == pytest.approx(
        p40["usd"] * rows["tesla-p40"]["num_gpus"]
    )
    pair = rows["rtx-3090"]
    # second-hand: a used price or the market's cheapest listings (new or used), said as such
    assert pair["num_gpus"] == 2 and pair["cost"]["buy"]["condition"] in ("used", "market")


# Cards whose only price was a launch price more than three years old (A4000 2021, RTX 6000 Ada
# 2022), or none at all (3090 Ti): 'auto' now buys them at a dated price, never at launch; the
# 3090 Ti's new price (July 2025) is more than six months older than its used listing (August
# 2026), so 'auto' pays the used one (cost.choose_purchase).
OLD_CARDS = (("rtx-a4000", "new"), ("rtx-6000-ada", "new"), ("rtx-3090-ti", "used"))


def test_auto_basis_buys_old_cards_at_their_dated_price_not_their_launch_price(
    read_client: TestClient,
) -> None:
    body = {
        "workload": {"preset": "resnet-50", "task": "training"},
        "objective": "cheapest",
        "limit": 500,
    }
    auto = _buy(read_client, {**body, "constraints": {"acquisition": "buy"}})
    launch = _buy(
        read_client, {**body, "constraints": {"acquisition": "buy", "purchase_basis": "launch"}}
    )
    for slug, condition in OLD_CARDS:
        want = _row(slug, condition)
        buy = auto[slug]["cost"]["buy"]
        assert (buy["condition"], buy["unit_usd"], buy["as_of"]) == (
            want["condition"], want["usd"], want["as_of"],
        ), slug  # fmt: skip
    # their launch prices are still there, by name only
    for slug, usd in (("rtx-a4000", 1000), ("rtx-6000-ada", 6799)):
        assert launch[slug]["cost"]["buy"]["condition"] == "launch"
        assert launch[slug]["cost"]["buy"]["unit_usd"] == usd


def test_a_launch_row_is_aged_like_a_catalog_launch_price(
    shipped_catalog: tuple[list[Any], Mapping[str, GpuOffers], Any],
) -> None:
    """The M4 Max entry is the 40-core-GPU, 128 GB configuration: its Mac Studio's launch price
    (March 2025) reaches the engine as a launch offer, which 'auto' uses until it is more than
    three years old."""
    want = next(r for r in ROWS if r["gpu"] == "apple-m4-max")
    offers = shipped_catalog[1]["apple-m4-max"]
    (launch,) = [o for o in offers.purchase if o.condition == "launch"]
    assert (launch.usd, launch.as_of) == (want["usd"], want["as_of"])
    assert launch.stale == launch_is_stale(want["as_of"], date.today())
    assert choose_purchase(list(offers.purchase), "auto") is (None if launch.stale else launch)
    assert launch_is_stale(want["as_of"], date(2028, 4, 1))
    assert not launch_is_stale(want["as_of"], date(2028, 3, 1))


# Prices added in the session of 2026-12-02, by card and condition: a dated new price where the
# only one was a launch price more than three years old (Quadro RTX 6000, RTX 2080) or there was
# none; GPU Poet best deals (market: listings new or used) for the RTX 4070 Super, L40S and A40;
# the Mac mini M4 32 GB's
# launch price (October 2024), current until it is three years old.
PRICED_2026_12 = (
    ("quadro-rtx-5000", "new"),
    ("quadro-rtx-6000", "new"),
    ("rtx-2080", "new"),
    ("tesla-p100-pcie-16gb", "new"),
    ("v100-sxm2-32gb", "new"),
    ("a40", "new"),
    ("a40", "market"),
    ("a100-pcie-40gb", "new"),
    ("rtx-4070-super", "market"),
    ("l40s", "market"),
    ("apple-m4", "launch"),
    # NVIDIA's own store price of August 2026 (the card had no price at all before)
    ("rtx-pro-6000-blackwell", "new"),
    # GPU Poet's May 2026 best deal: the 2023 launch price is more than three years old
    ("rtx-4060", "market"),
    # the lowest used eBay listing the compute-value project recorded on 2026-08-11 (none of
    # these had a current price before: no price, or a launch price more than three years old)
    ("titan-rtx", "used"),
    ("quadro-rtx-8000", "used"),
    ("rtx-a5500", "used"),
    ("radeon-pro-w7900", "used"),
    ("rtx-3070-ti", "used"),
    ("rtx-4060-ti-8gb", "used"),
    ("mi100", "used"),
    ("mi210", "used"),
    ("a100-pcie-80gb", "used"),
    # the same project's homelab catalog (2026-08-13): a used-market reference price of the Mac
    # Studio M2 Ultra 76-core GPU / 192 GB, the catalog entry's configuration (no price before)
    ("apple-m2-ultra", "used"),
    # 2026-12-03: Apple Certified Refurbished, the Mac mini M4 Pro 20-core GPU / 64 GB at $1,869
    # (2026-02-17), the catalog entry's configuration (no price before)
    ("apple-m4-pro", "used"),
)
# what 'auto' pays for each of those cards: a new price before a used one (cost.choose_purchase),
# but the A40's new price (one Amazon listing, 2025-06-09) is more than six months older than its
# market price (March 2026) and gives way to it
AUTO_PAYS = {slug: cond for slug, cond in reversed(PRICED_2026_12)} | {"a40": "market"}


def _row(slug: str, condition: str) -> dict[str, Any]:
    (row,) = [r for r in ROWS if r["gpu"] == slug and r["condition"] == condition]
    return row


# Used prices of cards that already had a dated new price (issue #23 names both cards): the
# lowest listing of each in the compute-value eBay snapshot of 2026-08-11. 'auto' pays the 4060 Ti
# 16 GB's new price (March 2026, within six months of the listing) and the 3090 Ti's used one
# (its new price, July 2025, is more than six months older). purchase_basis 'used' pays the 3090
# Ti's listing, but not the 4060 Ti's: $599.99 used is above its current $449 new price, which
# nobody pays, so 'used' pays the new price and says why (cost.choose_purchase).
USED_BESIDE_NEW = (("rtx-3090-ti", "used"), ("rtx-4060-ti-16gb", "used"))
AUTO_BESIDE_USED = {"rtx-3090-ti": "used", "rtx-4060-ti-16gb": "new"}
USED_PAYS = {"rtx-3090-ti": "used", "rtx-4060-ti-16gb": "new"}


@pytest.mark.parametrize(("slug", "condition"), PRICED_2026_12 + USED_BESIDE_NEW, ids="-".join)
def test_each_new_price_has_a_pinned_source_a_date_and_a_condition(
    slug: str, condition: str
) -> None:
    row = _row(slug, condition)
    source = DOC["sources"][row["source"]]
    assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", row["as_of"]), row["as_of"]
    # a repository file at a commit, never a moving branch
    assert re.search(r"github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/", source["url"]), source["url"]
    # the title names the figure it quotes, so a reader can check it against the file
    usd = float(row["usd"])
    assert f"${usd:,.2f}" in source["title"] or f"${usd:,.0f}" in source["title"], source


def test_auto_basis_buys_the_newly_priced_cards_at_their_sourced_price(
    read_client: TestClient,
) -> None:
    rows = _buy(read_client, AUTO_BUY_RESNET)
    assert AUTO_PAYS["a40"] == "market"
    for slug, condition in AUTO_PAYS.items():
        want = _row(slug, condition)
        if condition == "launch" and launch_is_stale(want["as_of"], date.today()):
            assert slug not in rows, slug  # aged out: no current price
            continue
        buy = rows[slug]["cost"]["buy"]
        assert (buy["condition"], buy["unit_usd"], buy["as_of"]) == (
            want["condition"], want["usd"], want["as_of"],
        ), slug  # fmt: skip


def test_used_pays_a_listing_below_new_and_auto_keeps_a_recent_new(
    read_client: TestClient,
) -> None:
    auto = _buy(read_client, AUTO_BUY_RESNET)
    used_body = {
        **AUTO_BUY_RESNET,
        "constraints": {**AUTO_BUY_CONSTRAINTS, "purchase_basis": "used"},
    }
    used = _buy(read_client, used_body)
    for slug, _condition in USED_BESIDE_NEW:
        paid, bought = _row(slug, AUTO_BESIDE_USED[slug]), _row(slug, USED_PAYS[slug])
        got_auto, got_used = auto[slug]["cost"]["buy"], used[slug]["cost"]["buy"]
        assert (got_auto["condition"], got_auto["unit_usd"], got_auto["as_of"]) == (
            paid["condition"], paid["usd"], paid["as_of"],
        ), slug  # fmt: skip
        assert (got_used["condition"], got_used["unit_usd"], got_used["as_of"]) == (
            bought["condition"], bought["usd"], bought["as_of"],
        ), slug  # fmt: skip
    said = used["rtx-4060-ti-16gb"]["cost"]["buy"]["note"]
    assert said == "new: no used price below new; used: $599.99 on 2026-08-11"


def _stale_launch_cards(offers: Mapping[str, GpuOffers]) -> list[str]:
    today = date.today()
    return sorted(
        slug
        for slug, o in offers.items()
        if any(p.condition == "launch" and launch_is_stale(p.as_of, today) for p in o.purchase)
    )


def test_no_launch_price_more_than_three_years_old_is_ever_what_auto_pays(
    shipped_catalog: tuple[list[Any], Mapping[str, GpuOffers], Any],
) -> None:
    """Every card of the shipped catalog, not a chosen few: a launch price more than three
    years old is flagged stale where offers are read, and 'auto' never pays it; a card with
    nothing else has no current price and says so."""
    offers = shipped_catalog[1]
    old = _stale_launch_cards(offers)
    assert {"rtx-2080-ti", "rtx-2070", "rtx-3090", "rtx-a4000"} <= set(old)
    no_price = []
    for slug in old:
        purchase = list(offers[slug].purchase)
        for p in purchase:
            if p.condition == "launch":
                assert p.stale == launch_is_stale(p.as_of, date.today()), (slug, p)
        chosen = choose_purchase(purchase, "auto")
        assert chosen is None or not chosen.stale, (slug, chosen)
        if chosen is None:
            no_price.append(slug)
            pricing = price_configuration(offers[slug], 1, RentalPolicy(), Usage())
            assert pricing.buy is None and pricing.buy_reason is not None
            assert pricing.buy_reason.startswith("no current price"), (slug, pricing.buy_reason)
        # asked for by name, the launch price is still there
        assert choose_purchase(purchase, "launch") is not None
    assert "rtx-2060-super" in no_price and "rtx-2080" not in no_price


def test_the_coverage_script_agrees_with_what_the_engine_pays(
    shipped_catalog: tuple[list[Any], Mapping[str, GpuOffers], Any],
) -> None:
    """benchmarks/purchase_coverage.py (the list of which cards have a current price) reads
    the data files itself; it must pick what the engine picks from the seeded offers."""
    bench = load_benchmark("purchase_coverage.py", "bench_purchase_coverage")
    offers = shipped_catalog[1]
    rows = bench.coverage(date.today(), (*bench.SEGMENTS, "datacenter"))
    assert len(rows) > 60
    for slug, _segment, _offers, pick in rows:
        engine = choose_purchase(list(offers[slug].purchase), "auto") if slug in offers else None
        got = None if pick is None else (pick.condition, pick.usd, pick.as_of)
        want = None if engine is None else (engine.condition, engine.usd, engine.as_of)
        assert got == want, slug


# Apple machines: a row priced at the catalog entry's own configuration (GPU cores and unified
# memory, as the entry's name states them), with the source naming both: Apple's launch price of
# that configuration (dated by its month), or a dated used price of it.
APPLE_ROWS = [r for r in ROWS if r["gpu"].startswith("apple-")]
APPLE_NAMES = {
    g["slug"]: g["name"]
    for g in yaml.safe_load((DATA / "gpus" / "apple.yaml").read_text(encoding="utf-8"))["gpus"]
}


@pytest.mark.parametrize("row", APPLE_ROWS, ids=_id)
def test_an_apple_price_is_the_catalog_configuration_dated_and_pinned(row: dict[str, Any]) -> None:
    cores, gb = re.fullmatch(r".*\((\d+)-core GPU, (\d+)GB\)", APPLE_NAMES[row["gpu"]]).groups()  # type: ignore[union-attr]
    title = DOC["sources"][row["source"]]["title"]
    url = DOC["sources"][row["source"]]["url"]
    assert row["condition"] in ("launch", "used"), row
    date_form = r"\d{4}-\d{2}" if row["condition"] == "launch" else r"\d{4}-\d{2}(-\d{2})?"
    assert re.fullmatch(date_form, row["as_of"]), row["as_of"]
    assert re.search(r"github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/", url), url
    assert f"{cores}-core GPU" in title and f"{gb} GB unified memory" in title, title
    assert f"${float(row['usd']):,.0f}" in title, title


def test_the_m3_ultra_launch_price_reaches_the_engine_until_it_is_three_years_old(
    shipped_catalog: tuple[list[Any], Mapping[str, GpuOffers], Any],
) -> None:
    """The Mac Studio M3 Ultra 80-core GPU / 512 GB: $9,499 in March 2025, current for 'auto'
    until March 2028."""
    want = _row("apple-m3-ultra", "launch")
    assert (want["usd"], want["as_of"]) == (9499, "2025-03")
    (launch,) = [
        o for o in shipped_catalog[1]["apple-m3-ultra"].purchase if o.condition == "launch"
    ]
    assert (launch.usd, launch.as_of) == (9499, "2025-03")
    assert not launch_is_stale(want["as_of"], date(2028, 3, 1))
    assert launch_is_stale(want["as_of"], date(2028, 4, 1))


LLAMA_70B_BUY: dict[str, Any] = {
    "workload": {"preset": "llama-3-70b", "task": "inference", "quantization": "q4_k_m"},
    "constraints": {
        "acquisition": "buy", "purchase_basis": "auto", "max_purchase_usd": 10000,
        "allow_4bit": True,
    },
    "objective": "cheapest",
    "limit": 100,
}  # fmt: skip


@pytest.mark.parametrize(("slug", "usd"), [("apple-m4-max", 3499), ("apple-m3-ultra", 9499)])
def test_a_70b_buy_question_names_a_priced_mac_or_says_only_figures_are_missing(
    read_client: TestClient, slug: str, usd: int
) -> None:
    """Both machines hold Llama 3 70B at 4 bits in one box (128 / 512 GB) and cost less than the
    $10,000 budget. The engine ranks a Mac at its launch price once the catalog has a compute
    figure for it; until then (M4 Max 40-core and M3 Ultra 80-core: no citable FP32 figure) the
    only reason it gives is the missing figure (the next test shows that the price and the
    memory then qualify)."""
    r = read_client.post("/api/v1/recommendations", json=LLAMA_70B_BUY)
    assert r.status_code == 200, r.text
    body = r.json()
    rows = {row["gpu"]["slug"]: row for row in body["recommendations"]}
    if slug in rows:
        buy = rows[slug]["cost"]["buy"]
        assert rows[slug]["num_gpus"] == 1
        assert (buy["condition"], buy["unit_usd"], buy["usd"]) == ("launch", usd, usd)
    else:
        (excluded,) = [e for e in body["excluded"] if e["slug"] == slug]
        assert excluded["code"] == "no_figures", excluded


def test_a_70b_buy_question_buys_the_m2_ultra_whole_at_its_dated_used_price(
    read_client: TestClient,
) -> None:
    """The Mac Studio M2 Ultra 76-core GPU / 192 GB has Apple's FP32 figure in the catalog and,
    since issue #23, a used price of that configuration (2026-08-13): one box holds Llama 3 70B
    at 4 bits and is bought whole at $4,899, the dated used price, under a $10,000 budget."""
    rows = _buy(read_client, LLAMA_70B_BUY)
    buy = rows["apple-m2-ultra"]["cost"]["buy"]
    assert rows["apple-m2-ultra"]["num_gpus"] == 1
    assert (buy["condition"], buy["unit_usd"], buy["usd"], buy["as_of"]) == (
        "used", 4899, 4899, "2026-08-13",
    )  # fmt: skip


def test_the_m4_pro_20_core_is_priced_at_its_dated_refurbished_price(
    shipped_catalog: tuple[list[Any], Mapping[str, GpuOffers], Any],
) -> None:
    """The catalog's apple-m4-pro (14-core CPU, 20-core GPU, 64 GB) had no price. Apple's
    refurbished store sold that Mac mini at $1,869 (last seen 2026-02-17): a refurbished machine
    is not new, so it is the entry's one used offer, its source saying refurbished, and the
    price 'auto' pays; there is no new or launch price to ask for by name."""
    purchase = list(shipped_catalog[1]["apple-m4-pro"].purchase)
    (offer,) = purchase
    assert (offer.condition, offer.usd, offer.as_of) == ("used", 1869, "2026-02-17")
    assert "Apple Certified Refurbished" in offer.source, offer.source
    assert "20-core GPU, 64 GB unified memory" in offer.source, offer.source
    assert choose_purchase(purchase, "auto") is offer
    assert choose_purchase(purchase, "new") is None
    assert choose_purchase(purchase, "launch") is None


def test_given_a_compute_figure_the_m3_ultra_is_bought_whole_at_its_launch_price(
    client: TestClient, admin: dict[str, str]
) -> None:
    """What the engine does with the M3 Ultra's price and memory once it can model the chip: the
    FP32 figure PATCHed here is a probe (the M2 Ultra's published 27.2 TFLOPS), not catalog
    data; the price and the 512 GB are the shipped ones. One box holds 70B at 4 bits, bought at
    $9,499 under a $10,000 budget and left out under $9,000."""
    r = client.patch("/api/v1/gpus/apple-m3-ultra", json={"fp32_tflops": 27.2}, headers=admin)
    assert r.status_code == 200, r.text
    rows = _buy(client, LLAMA_70B_BUY)
    buy = rows["apple-m3-ultra"]["cost"]["buy"]
    assert rows["apple-m3-ultra"]["num_gpus"] == 1
    assert (buy["condition"], buy["unit_usd"], buy["usd"], buy["as_of"]) == (
        "launch", 9499, 9499, "2025-03",
    )  # fmt: skip
    tight = {
        **LLAMA_70B_BUY,
        "constraints": {**LLAMA_70B_BUY["constraints"], "max_purchase_usd": 9000},
    }
    assert "apple-m3-ultra" not in _buy(client, tight)


def test_a_catalog_launch_price_is_dated_by_its_announcement_not_the_year_end() -> None:
    """A catalog launch price is dated by its source where that source is from the release year
    or before (the announcement that stated the price); a later article quoting an old price
    keeps the bare release year. Dated by the year alone, the RTX 4060's May 2023 price would
    count as current until 2027, past the three years 'auto' allows."""
    launch = {
        o.gpu_slug: o.as_of
        for o in purchase_offers_from_catalog(read_catalog(DATA))
        if o.condition == "launch"
    }
    assert launch["rtx-4060"] == "2023-05-18"  # PCGamesN, the day NVIDIA announced the price
    assert launch_is_stale(launch["rtx-4060"], date(2026, 12, 2))
    assert not launch_is_stale(launch["rtx-4060"], date(2026, 5, 1))
    # The Verge's December 2024 article on the B580 quotes the A750's 2022 price: still 2022
    assert launch["arc-a750"] == "2022"
    # a 2025 announcement stays current for three years
    assert launch["rtx-5090"] == "2025-01"
    assert not launch_is_stale(launch["rtx-5090"], date(2026, 12, 2))


def test_buy_price_is_what_auto_pays_or_says_why_there_is_none() -> None:
    from app.domain.cost import PurchaseOffer, buy_price

    launch = PurchaseOffer(999.0, "launch", "2018-08-20", "launch note", stale=True)
    used = PurchaseOffer(1207.0, "used", "2026-09", "market report")
    only_old = buy_price([launch])
    assert only_old is not None and only_old.offer is None and only_old.stale_launch == launch
    both = buy_price([launch, used])
    assert both is not None and both.offer == used and both.stale_launch is None
    assert buy_price([]) is None


def test_the_api_says_what_a_recommendation_pays_to_buy_a_card(read_client: TestClient) -> None:
    """GET /gpus/{slug}'s ``buy_at`` is the price 'auto' buys at — the new-old-stock listings
    filed for the RTX 20 cards, the GTX 1080 Ti and the Arc A750 included — while the catalog's
    own ``purchase_usd`` keeps its street-else-launch figure; a card with only a launch price
    more than three years old has none, and says why."""
    nos = [r for r in DOC["prices"] if r["source"] == "svi-newegg-2026-03"]
    assert {r["gpu"] for r in nos} >= {"rtx-2080-ti", "gtx-1080-ti", "arc-a750"}
    for row in nos:
        body = read_client.get(f"/api/v1/gpus/{row['gpu']}").json()
        buy = body["buy_at"]
        assert (buy["usd"], buy["condition"], buy["as_of"]) == (row["usd"], "new", row["as_of"])
        assert "siliconvalueindex" in buy["source"]
    old = read_client.get("/api/v1/gpus/rtx-2060-super").json()
    assert old["purchase_usd"] == old["launch_price_usd"] == 399
    assert old["buy_at"]["usd"] is None
    assert "more than 3 years old" in old["buy_at"]["note"] and "$399" in old["buy_at"]["note"]
    assert read_client.get("/api/v1/gpus/h200-sxm").json()["buy_at"] is None  # no price at all


def test_the_gpu_page_prices_a_card_as_auto_buys_it(read_client: TestClient) -> None:
    # the page once read "Price $999 to buy" for a 2080 Ti: its 2018 launch price
    def card(slug: str) -> str:
        html = read_client.get(f"/gpus/{slug}").text
        found = re.search(r"data-buy-card>(.*?)</div></div>", html, re.S)
        assert found is not None
        return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())

    old = card("rtx-2060-super")
    assert "no current price" in old and "more than 3 years old" in old
    assert old.split("Price")[1].split()[0] == "—"
    used = [
        o
        for o in read_client.get("/api/v1/offers?gpu=rtx-3090&kind=purchase").json()["items"]
        if o["condition"] in ("used", "market")
    ]
    assert used and f"${used[0]['usd']:,.0f}" in card("rtx-3090")
