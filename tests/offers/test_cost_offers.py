"""Pure: which offer a job rents, which price a purchase uses, buy versus rent."""

from __future__ import annotations

import pytest

from app.domain.cost import (
    CloudOffer,
    GpuOffers,
    OfferBook,
    PurchaseOffer,
    RentalPolicy,
    Usage,
    choose_offer,
    choose_purchase,
    price_configuration,
    price_replicas,
    usd_per_million_tokens,
    verdict,
)


def offer(provider: str, instance: str, gpus: int, usd: float, **kw: object) -> CloudOffer:
    values: dict[str, object] = {
        "spot_usd_per_hour": None, "tier": "on-demand", "as_of": "2026-11-30", "source": "test",
        "accelerator": "H100",
    } | kw  # fmt: skip
    return CloudOffer(provider, instance, gpus, usd, **values)  # type: ignore[arg-type]


NODE8 = offer("lambda", "gpu_8x_h100_sxm5", 8, 23.92)
ONE = offer("lambda", "gpu_1x_h100_sxm5", 1, 3.29)
MARKET2 = offer("vast", "2x-H100_SXM", 2, 3.60, tier="community")


def test_two_gpus_on_eight_gpu_nodes_pays_the_whole_node_and_says_so() -> None:
    choice = choose_offer([NODE8, ONE], 2)
    assert choice is not None
    assert choice.offer is NODE8 and choice.instances == 1
    assert choice.usd_per_hour == pytest.approx(23.92)  # not 2 × the 1-GPU price
    assert choice.gpus_paid == 8 and choice.gpus_used == 2
    assert choice.note is not None and "8-GPU" in choice.note and "use 2" in choice.note


def test_cheapest_suitable_offer_wins_and_single_gpu_prices_are_never_multiplied() -> None:
    choice = choose_offer([NODE8, ONE, MARKET2], 2)
    assert choice is not None and choice.offer is MARKET2 and choice.note is None
    assert choose_offer([ONE], 2) is None  # no 2-GPU shape: nothing is invented


def test_policy_filters_providers_tiers_and_spot() -> None:
    assert choose_offer([NODE8, MARKET2], 2, RentalPolicy(providers=("lambda",))).offer is NODE8  # type: ignore[union-attr]
    on_demand = RentalPolicy(tiers=("on-demand",))
    assert choose_offer([NODE8, MARKET2], 2, on_demand).offer is NODE8  # type: ignore[union-attr]
    spotty = offer("azure", "ND", 8, 30.0, spot_usd_per_hour=9.0)
    assert choose_offer([NODE8, spotty], 8).offer is NODE8  # type: ignore[union-attr]
    chosen = choose_offer([NODE8, spotty], 8, RentalPolicy(allow_spot=True))
    assert chosen is not None and chosen.offer is spotty and chosen.spot
    assert chosen.usd_per_hour == pytest.approx(9.0)
    spot_only = offer("x", "s", 8, 5.0, tier="spot")
    assert choose_offer([spot_only], 8) is None


def test_several_nodes_only_when_allowed() -> None:
    assert choose_offer([NODE8], 16) is None
    choice = choose_offer([NODE8], 12, RentalPolicy(multi_node=True))
    assert choice is not None and choice.instances == 2
    assert choice.usd_per_hour == pytest.approx(2 * 23.92)


def test_several_nodes_are_whole_servers_booked_as_one_cluster() -> None:
    # the estimate's multi-node terms assume 8-GPU servers: sixteen 1-GPU instances are not that
    many = RentalPolicy(multi_node=True)
    assert choose_offer([ONE, MARKET2], 16, many, node_gpus=8) is None
    choice = choose_offer([ONE, MARKET2, NODE8], 16, many, node_gpus=8)
    assert choice is not None and choice.offer is NODE8 and choice.instances == 2
    assert choice.note is not None and "one cluster" in choice.note
    assert "pays for" not in choice.note  # every GPU paid for is used
    priced = price_configuration(GpuOffers(cloud=(ONE,)), 16, many, Usage(), node_gpus=8)
    assert priced.rent is None
    assert (
        priced.rent_reason is not None
        and "whole 8-GPU servers side by side, which no offer rents" in priced.rent_reason
    )


def test_a_cluster_is_never_booked_from_community_or_marketplace_hosts() -> None:
    # 8 Vast community hosts had been booked as one InfiniBand cluster at 97 % scaling; they are
    # independent machines with no fabric between them
    many = RentalPolicy(multi_node=True)
    community = offer("vast", "8x-H100_SXM", 8, 12.0, tier="community")
    market = offer("shadeform", "8x-H100_SXM", 8, 13.0, tier="marketplace")
    assert choose_offer([community, market], 16, many, node_gpus=8) is None
    choice = choose_offer([community, market, NODE8], 16, many, node_gpus=8)
    assert choice is not None and choice.offer is NODE8 and choice.instances == 2
    # one instance of theirs is still rented whole for a job that fits it
    one = choose_offer([community, NODE8], 8, many, node_gpus=8)
    assert one is not None and one.offer is community and one.instances == 1


def test_purchase_basis_prefers_new_then_market_then_launch() -> None:
    launch = PurchaseOffer(1599, "launch", "2022", "launch")
    used = PurchaseOffer(1800, "used", "2026-09", "poet")
    older = PurchaseOffer(1700, "used", "2026-07", "poet-old")
    new = PurchaseOffer(2200, "new", "2026-10", "shop")
    assert choose_purchase([launch, used, older]) is used  # most recent market price
    assert choose_purchase([launch, used, new]) is new
    assert choose_purchase([launch]) is launch
    assert choose_purchase([]) is None


def test_verdict_compares_both_bases_over_the_users_usage() -> None:
    usage = Usage(hours_per_week=40, years=3, resale_fraction=0.25, electricity_usd_per_kwh=0.15)
    v = verdict(
        purchase_usd=2000.0, energy_usd_per_hour=0.0675, rent_usd_per_hour=0.40, usage=usage
    )
    hours = 40 * 52 * 3
    assert v.hours == hours
    assert v.buy_total_usd == pytest.approx(1500.0 + 0.0675 * hours)
    assert v.rent_total_usd == pytest.approx(0.40 * hours)
    assert v.cheaper == "buy"  # 1500 + 421 < 2496
    assert v.break_even_hours == pytest.approx(1500.0 / (0.40 - 0.0675))


def test_verdict_flips_with_usage() -> None:
    light = verdict(2000.0, 0.05, 0.40, Usage(hours_per_week=5, years=1))
    heavy = verdict(2000.0, 0.05, 0.40, Usage(hours_per_week=80, years=3))
    assert light.cheaper == "rent" and heavy.cheaper == "buy"
    cheap_rent = verdict(2000.0, 0.50, 0.40, Usage())
    assert cheap_rent.break_even_hours is None and cheap_rent.cheaper == "rent"


def test_cost_per_million_tokens() -> None:
    assert usd_per_million_tokens(3.6, 1000.0) == pytest.approx(1.0)
    assert usd_per_million_tokens(None, 1000.0) is None
    assert usd_per_million_tokens(3.6, 0.0) is None


# ---------------------------------------------------------------- serving: replicas on instances

NODE4 = offer("runpod", "4x_H100", 4, 12.0)


def test_replicas_pack_into_instances_and_a_group_never_spans_two() -> None:
    from app.domain.cost import choose_replica_offer

    # three 2-GPU replicas on 4-GPU nodes: two per node, two nodes, 2 GPUs paid and unused
    placed = choose_replica_offer([NODE4], 2, 3)
    assert placed is not None
    assert placed.choice.instances == 2 and placed.per_instance == 2
    assert placed.choice.usd_per_hour == pytest.approx(24.0)
    assert placed.choice.gpus_paid == 8 and placed.choice.gpus_used == 6
    assert placed.note is not None and "room for 1 more" in placed.note
    # one-GPU instances carry one-GPU replicas side by side, never a 2-GPU group
    ones = choose_replica_offer([ONE], 1, 3)
    assert ones is not None and ones.choice.instances == 3
    assert ones.note is not None and "pays for" not in ones.note  # every GPU paid for is used
    assert ones.choice.usd_per_hour == pytest.approx(3 * 3.29)
    assert choose_replica_offer([ONE], 2, 1) is None
    # the cheapest way: four 1-GPU replicas on one 8-GPU node beat four 1-GPU instances
    # only when the node is cheaper
    assert choose_replica_offer([ONE, NODE8], 1, 4).choice.offer is ONE  # type: ignore[union-attr]
    assert choose_replica_offer([ONE, NODE8], 1, 8).choice.offer is NODE8  # type: ignore[union-attr]


def test_replicas_on_several_instances_are_not_booked_as_a_cluster() -> None:
    """Replicas share nothing: several instances of them need a load balancer, not the fast
    cluster network a training job over several servers books (the row shows the replica
    placement's note in place of the offer's own)."""
    from app.domain.cost import choose_replica_offer

    ones = choose_replica_offer([ONE], 1, 3)
    assert ones is not None and ones.choice.instances == 3
    assert ones.choice.note is not None and "one cluster" in ones.choice.note
    assert ones.note is not None
    assert "one cluster" not in ones.note and "InfiniBand" not in ones.note
    assert "share nothing" in ones.note and "no cluster network" in ones.note
    # one instance holding every replica needs no word at all
    one_node = choose_replica_offer([NODE8], 1, 8)
    assert one_node is not None and one_node.choice.instances == 1 and one_node.note is None


def test_serving_pricing_keeps_both_bases_and_owning_matches_the_verdict() -> None:
    from app.domain.cost import GpuOffers, owned_usd_per_hour, price_replicas

    new = PurchaseOffer(30000.0, "new", "2026-10-01", "shop")
    usage = Usage(hours_per_week=40, years=3, resale_fraction=0.2)
    pricing, placed = price_replicas(GpuOffers((NODE4, ONE), (new,)), 2, 2, RentalPolicy(), usage)
    assert placed is not None and placed.choice.offer is NODE4 and placed.choice.instances == 1
    assert pricing.rent is placed.choice and pricing.purchase_usd == pytest.approx(4 * 30000)
    v = pricing.verdict(0.4)
    assert v is not None
    assert owned_usd_per_hour(4 * 30000, 0.4, usage) == pytest.approx(v.buy_total_usd / v.hours)
    none, _ = price_replicas(GpuOffers((ONE,), ()), 2, 1, RentalPolicy(), usage)
    assert none.rent is None and "2-GPU tensor-parallel group" in (none.rent_reason or "")
    assert not none.price_known


def test_a_named_purchase_basis_takes_only_that_basis_and_says_why_none() -> None:
    launch = PurchaseOffer(1599, "launch", "2022", "launch")
    used = PurchaseOffer(1800, "used", "2026-09", "poet")
    assert choose_purchase([launch, used], "launch") is launch
    assert choose_purchase([launch, used], "used") is used
    assert choose_purchase([launch, used], "new") is None
    assert choose_purchase([launch, used], "auto") is used
    offers = GpuOffers(purchase=(launch, used))
    priced = price_configuration(offers, 2, RentalPolicy(), Usage(), "launch")
    assert priced.purchase_usd == 2 * 1599 and priced.buy_reason is None
    none = price_configuration(offers, 2, RentalPolicy(), Usage(), "new")
    assert none.purchase_usd is None
    assert none.buy_reason is not None and "no new price" in none.buy_reason
    # a GPU without any purchase offer needs no reason beyond "unknown"
    assert price_configuration(GpuOffers(), 1, RentalPolicy(), Usage(), "new").buy_reason is None
    # serving configurations take the same basis
    served, _ = price_replicas(offers, 1, 2, RentalPolicy(), Usage(), "launch")
    assert served.purchase_usd == 2 * 1599


def test_replicas_follow_the_rental_policy() -> None:
    from app.domain.cost import choose_replica_offer

    spotty = offer("azure", "ND_H100_v5", 8, 98.0, spot_usd_per_hour=30.0)
    market = offer("vast", "4x-H100", 4, 8.0, tier="community")
    # on-demand only: the community host is left out, the spot price unused
    own = choose_replica_offer([spotty, market], 2, 3, RentalPolicy(tiers=("on-demand",)))
    assert own is not None and own.choice.offer is spotty and not own.choice.spot
    assert own.choice.usd_per_hour == pytest.approx(98.0)  # 3 groups of 2 in one 8-GPU node
    spot = choose_replica_offer([spotty], 2, 3, RentalPolicy(tiers=("on-demand",), allow_spot=True))
    assert spot is not None and spot.choice.spot and spot.choice.usd_per_hour == 30.0
    assert choose_replica_offer([spotty, market], 2, 3, RentalPolicy(providers=("gcp",))) is None
    # the community host is the cheapest when allowed: two 4-GPU instances for three groups
    cheap = choose_replica_offer([spotty, market], 2, 3)
    assert cheap is not None and cheap.choice.offer is market and cheap.choice.instances == 2


def test_a_quoted_price_is_shown_never_rented_even_when_it_is_the_cheapest() -> None:
    quoted = offer("vast", "1x RTX 4090 (per-GPU price)", 1, 0.136, accelerator=None, quoted=True)
    catalog = offer("vast", "1x-RTX_4090", 1, 0.40, tier="marketplace")
    assert choose_offer([quoted, catalog], 1) is not None
    assert choose_offer([quoted, catalog], 1).offer is catalog  # type: ignore[union-attr]
    pricing = price_configuration(GpuOffers(cloud=(quoted, catalog)), 1, RentalPolicy(), Usage())
    assert pricing.rent is not None and pricing.rent.offer is catalog
    assert pricing.seen == (quoted,)
    assert quoted.seen_text == "seen at $0.136/h per GPU on vast (test, 2026-11-30)"
    alone = price_configuration(GpuOffers(cloud=(quoted,)), 1, RentalPolicy(), Usage())
    assert alone.rent is None and not alone.price_known
    assert alone.rent_reason is not None and "no bookable cloud offer" in alone.rent_reason
    assert "$0.136" in alone.rent_reason
    served, placed = price_replicas(GpuOffers(cloud=(quoted,)), 1, 2, RentalPolicy(), Usage())
    assert placed is None and served.seen == (quoted,)
    assert served.rent_reason is not None and "no bookable" in served.rent_reason


def test_auto_never_prices_a_card_at_a_launch_price_more_than_three_years_old() -> None:
    from datetime import date

    from app.domain.cost import launch_is_stale

    today = date(2026, 12, 2)
    assert launch_is_stale("2018", today) and launch_is_stale("2023-11", today)
    assert not launch_is_stale("2024", today) and not launch_is_stale("2023-12", today)
    old = PurchaseOffer(999.0, "launch", "2018", "launch", stale=True)
    fresh = PurchaseOffer(1999.0, "launch", "2025", "launch")
    assert choose_purchase([old], "auto") is None
    assert choose_purchase([old], "launch") is old  # asked for by name, it is still there
    assert choose_purchase([old, fresh], "auto") is fresh
    pricing = price_configuration(GpuOffers(purchase=(old,)), 1, RentalPolicy(), Usage())
    assert pricing.buy is None and pricing.buy_reason is not None
    assert "no current price" in pricing.buy_reason and "2018" in pricing.buy_reason
    used = PurchaseOffer(350.0, "used", "2026-09", "market")
    assert choose_purchase([old, used], "auto") is used


def test_a_row_says_why_it_has_no_purchase_price() -> None:
    """A card whose only price is a stale launch price: 'auto' buys nothing, and the row's
    offer lines say why, as they say why nothing is rented."""
    from app.recommend.rows import offer_lines

    old = PurchaseOffer(999.0, "launch", "2018-08-20", "launch", stale=True)
    pricing = price_configuration(GpuOffers(purchase=(old,)), 1, RentalPolicy(), Usage(), "auto")
    said = [line for line in offer_lines(pricing) if line.startswith("No purchase:")]
    assert said == [f"No purchase: {pricing.buy_reason}."]
    assert said[0].startswith("No purchase: no current price") and "2018-08-20" in said[0]
    bought = price_configuration(GpuOffers(purchase=(old,)), 1, RentalPolicy(), Usage(), "launch")
    assert not any(line.startswith("No purchase") for line in offer_lines(bought))


def test_an_offer_book_keeps_one_price_table_per_policy_by_value() -> None:
    book = OfferBook({"h100-sxm": GpuOffers()})
    one = book.prices(RentalPolicy(providers=("lambda",)), Usage(), "auto")
    assert book.prices(RentalPolicy(providers=("lambda",)), Usage(), "auto") is one
    assert book.prices(RentalPolicy(), Usage(), "auto") is not one
    assert book.prices(RentalPolicy(providers=("lambda",)), Usage(), "new") is not one
    assert dict(book) == {"h100-sxm": GpuOffers()} and len(book) == 1
    for hours in range(OfferBook.TABLES):  # bounded: past TABLES policies, start afresh
        book.prices(RentalPolicy(), Usage(hours_per_week=float(hours)), "auto")
    assert book.prices(RentalPolicy(providers=("lambda",)), Usage(), "auto") is not one


def test_a_larger_instance_chosen_over_a_smaller_one_says_it_is_cheaper_not_the_only_one() -> None:
    """Vast's 2× RTX 3060 at $0.19/h beat its 1× at $0.20/h for one GPU; the note said vast
    'rents no smaller shape of this GPU', which its own 1× offer belied."""
    one = offer("vast", "1x-RTX_3060", 1, 0.20, tier="community")
    two = offer("vast", "2x-RTX_3060", 2, 0.19, tier="community")
    choice = choose_offer([one, two], 1)
    assert choice is not None and choice.offer is two and choice.smaller_offered
    assert choice.note is not None and "cheaper than the smaller instances" in choice.note
    alone = choose_offer([two], 1)
    assert alone is not None and not alone.smaller_offered
    assert alone.note is not None and "no smaller instance of this GPU is on offer" in alone.note


def test_a_street_best_deal_is_a_market_price_a_used_basis_takes() -> None:
    """The catalog's street prices are the cheapest eBay/Amazon listings, new or used: they had
    been labelled used. A "used" basis takes them (second-hand, mostly), "new" does not."""
    from app.catalog.loader import read_catalog
    from app.offers.loader import purchase_offers_from_catalog
    from app.shipped.rules import DATA_DIR

    street = {o.condition for o in purchase_offers_from_catalog(read_catalog(DATA_DIR))}
    assert "market" in street and "used" not in street
    market = PurchaseOffer(1207, "market", "2026-09", "poet")
    new = PurchaseOffer(1500, "new", "2026-09", "amazon")
    assert choose_purchase([market, new], "used") is market
    assert choose_purchase([market, new], "new") is new
    assert choose_purchase([market], "auto") is market


def test_a_quoted_price_names_its_source_by_the_head_of_its_title() -> None:
    """A seen price's words name the source (its title up to ": " or " ("), not the whole
    title, which the offers API keeps: the 70B answer page carried ~2.8 KB of titles."""
    long = "Serverless GPU Pricing Matrix 2026 (techbytes.app; prices verified on 2026-05-07)"
    quoted = offer("lambda", "1x H100", 1, 3.78, accelerator=None, quoted=True, source=long)
    assert quoted.seen_text == (
        "seen at $3.78/h per GPU on lambda (Serverless GPU Pricing Matrix 2026, 2026-11-30)"
    )
    path = "DS436/sanskrit-token RENTING_A_GPU.md: GPU rental prices read 2026-09-09"
    quoted = offer("vast", "1x 4090", 1, 0.282, accelerator=None, quoted=True, source=path)
    # a repository's file by the repository, not its path (the fortieth session's audit)
    assert "(a note in the repository DS436/sanskrit-token, 2026-11-30)" in quoted.seen_text
    # a title that only starts like one is left as written
    title = "AMD/ATI pricing notes for 2026: a blog"
    quoted = offer("vast", "1x 4090", 1, 0.282, accelerator=None, quoted=True, source=title)
    assert "(AMD/ATI pricing notes for 2026, 2026-11-30)" in quoted.seen_text


def test_a_quoted_price_at_a_bare_address_names_its_host_and_file() -> None:
    url = "https://github.com/DS436/sanskrit-token/blob/082eae39/experiments/RENTING_A_GPU.md"
    quoted = offer("paperspace", "1x A5000", 1, 1.38, accelerator=None, quoted=True, source=url)
    assert quoted.seen_text == (
        "seen at $1.38/h per GPU on paperspace (github.com/…/RENTING_A_GPU.md, 2026-11-30)"
    )
