"""Review 25 (a lab PI's buy-versus-rent read): what a bought row must say of the hardware
its price and electricity leave out (#1, #4) and of a used or market price (#3); words in
compat, facts from the shipped catalog and offers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest

from app.domain import compat, cost
from app.domain.gpu import GpuSpec
from app.vocab import CONDITIONS, SECOND_HAND_CONDITIONS
from tests.domain.fixtures import RTX4090

Catalog = tuple[list[GpuSpec], Mapping[str, cost.GpuOffers], object]


@pytest.fixture(scope="module")
def gpus(shipped_catalog: Catalog) -> dict[str, GpuSpec]:
    return {g.slug: g for g in shipped_catalog[0]}


@pytest.fixture(scope="module")
def paid(shipped_catalog: Catalog) -> dict[str, cost.PurchaseOffer]:
    """The price purchase basis 'auto' pays for each card that has one."""
    out = {}
    for slug, offers in shipped_catalog[1].items():
        chosen = cost.choose_purchase(list(offers.purchase), "auto")
        if chosen is not None:
            out[slug] = chosen
    return out


def _said(gpu: GpuSpec, n: int, buy: cost.PurchaseOffer | None, buys: bool = True) -> str:
    return " | ".join(compat.purchase_caveats(gpu, n, buys, not buys, buy))


# ---------------------------------------------------------------- #1: the host is not in the price


@pytest.mark.parametrize("slug", ["h200-nvl", "h100-pcie", "l40s", "a100-pcie-80gb"])
@pytest.mark.parametrize("n", [1, 4, 8])
def test_bought_datacenter_cards_say_the_server_is_not_in_the_price(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer], slug: str, n: int
) -> None:
    """4 H100 PCIe at $116,800 had passed a $150k budget with no word of the server."""
    said = _said(gpus[slug], n, paid.get(slug))
    what = f"the {n} cards alone" if n > 1 else "the card alone"
    assert f"the price and electricity are {what}" in said, said
    assert "the server (chassis, CPUs, memory, fans) and cooling (PUE) are not counted" in said
    # rented: the provider's server, nothing of this
    assert "not counted" not in _said(gpus[slug], n, paid.get(slug), buys=False)


def test_a_module_priced_alone_says_the_server_and_baseboard_are_not_in_it(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer]
) -> None:
    """The V100 SXM2's price is one module from Amazon ($2,592): no server, no baseboard."""
    v100 = paid["v100-sxm2-32gb"]
    assert not v100.server_share
    said = _said(gpus["v100-sxm2-32gb"], 8, v100)
    assert "the price and electricity are the 8 SXM2 modules alone (8× 300 W" in said, said
    assert "the server (baseboard, chassis" in said and "are not counted" in said


def test_a_server_share_price_says_nothing_of_a_missing_host(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer]
) -> None:
    """The H100 SXM is priced at a whole server's quote ÷ 8, host included: kept apart."""
    h100 = paid["h100-sxm"]
    assert h100.server_share  # the data's note carries data/offers/README.md's words
    for n in (1, 2, 8):
        said = _said(gpus["h100-sxm"], n, h100)
        # fewer than a server's 8 buy the whole server (compat.whole_server_caveat), said so
        whole = f"sold as whole 8-GPU servers: priced for 8 GPUs, {n} used"
        assert (whole in said) == (n < 8), said
        assert "the price and electricity" not in said and "server (" not in said
        assert "board power alone" in said  # its electricity is still the GPUs' alone
    # without the offer (the catalog's own price) a module's price is not said either way
    assert "the price" not in _said(gpus["h100-sxm"], 8, None)


def test_pcie_cards_past_one_server_leave_the_servers_to_the_servers_caveat(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer]
) -> None:
    said = compat.purchase_caveats(gpus["h100-pcie"], 16, True, False, paid["h100-pcie"])
    assert sum("cards alone" in x for x in said) == 1  # servers_caveat's, not twice


def test_the_rig_keeps_its_words_and_datacenter_cards_do_not_take_them(
    gpus: dict[str, GpuSpec],
) -> None:
    rig = _said(gpus["rtx-pro-6000-blackwell"], 8, None)
    assert "a host with 8 PCIe slots" in rig and "the server (" not in rig
    assert "8 PCIe slots" not in _said(gpus["h100-pcie"], 8, None)


# ---------------------------------------------------------------- #4: electricity is board power only


@pytest.mark.parametrize(
    ("slug", "n"), [("rtx-4090", 1), ("rtx-pro-6000-blackwell", 2), ("rtx-a6000", 1)]
)
def test_every_bought_row_counting_energy_says_it_is_board_power_alone(
    gpus: dict[str, GpuSpec], slug: str, n: int
) -> None:
    """Workstation and consumer rows had said nothing where datacenter rows did."""
    said = [x for x in compat.purchase_caveats(gpus[slug], n, True, False) if "electricity" in x]
    assert len(said) == 1, said
    assert "board power" in said[0] and "alone" in said[0] and "cooling (PUE)" in said[0]
    assert "host" in said[0] and "lower bound" in said[0]
    assert not compat.purchase_caveats(gpus[slug], n, False, True)  # rented: nothing


def test_one_datacenter_card_says_its_figure_and_the_server_draw() -> None:
    card = replace(RTX4090, segment="datacenter", tdp_w=350.0)
    said = compat.gpu_power_caveat(card, 1, buys=True)
    assert said is not None and "the GPU's board power alone (350 W)" in said
    assert "not the server's CPUs, memory, fans nor cooling (PUE)" in said


def test_a_rig_says_its_watts_once() -> None:
    card = replace(RTX4090, tdp_w=450.0)
    said = compat.owned_caveat(card, 8, buys=True)
    assert said is not None and said.count("3,600 W") == 1
    assert "board power alone" in said and "cooling (PUE)" in said


# ---------------------------------------------------------------- #3: a used or market price


def test_second_hand_conditions_are_conditions() -> None:
    assert set(SECOND_HAND_CONDITIONS) <= set(CONDITIONS)
    assert "new" not in SECOND_HAND_CONDITIONS and "launch" not in SECOND_HAND_CONDITIONS


@pytest.mark.parametrize(("slug", "condition"), [("h200-nvl", "market"), ("a30", "market")])
def test_a_market_price_says_it_may_be_second_hand(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer], slug: str, condition: str
) -> None:
    """H200 NVL at $36,300 and A30 at $2,150 are market figures beside new prices."""
    buy = paid[slug]
    assert buy.condition == condition
    said = _said(gpus[slug], 4, buy)
    assert "a market price (new or used)" in said
    assert "a second-hand card may have no warranty or vendor support" in said


def test_qualification_samples_are_said_where_the_data_says_so(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer]
) -> None:
    assert "qualification samples" in _said(gpus["h200-nvl"], 4, paid["h200-nvl"])
    assert "qualification" not in _said(gpus["a30"], 4, paid["a30"])


def test_a_used_price_says_so_and_a_new_one_does_not(
    gpus: dict[str, GpuSpec], paid: dict[str, cost.PurchaseOffer]
) -> None:
    used = paid["a100-pcie-80gb"]
    assert used.condition == "used"
    assert "a used price: a second-hand card may have" in _said(gpus["a100-pcie-80gb"], 8, used)
    new = paid["rtx-pro-6000-blackwell"]
    assert new.condition == "new"
    assert "second-hand" not in _said(gpus["rtx-pro-6000-blackwell"], 8, new)
    # rented rows pay no purchase price
    assert "second-hand" not in _said(gpus["a100-pcie-80gb"], 8, used, buys=False)
