"""Review 5 (enterprise server buyer): what a bought row past one server's worth of GPUs
must say (#6), that its electricity is the GPUs' power alone (#4), words in compat, facts
from the catalog."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import compat

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def _said(slug: str, n: int, buys: bool = True) -> tuple[str, ...]:
    return compat.purchase_caveats(GPUS[slug], n, buys=buys, rents=not buys)


def test_64_bought_pcie_datacenter_cards_say_8_servers_and_a_network() -> None:
    """64 MI210s had been priced as 64 cards with no word of servers or fabric."""
    for slug in ("mi210", "a100-pcie-80gb", "h200-nvl"):
        said = [x for x in _said(slug, 64) if "servers" in x and "cluster network" in x]
        assert len(said) == 1, slug
        assert "8 servers of up to 8" in said[0] and "is priced here" in said[0]
        assert "cards alone" in said[0]


def test_12_bought_h200_nvl_say_2_servers() -> None:
    said = [x for x in _said("h200-nvl", 12) if "cluster network" in x]
    assert len(said) == 1 and "2 servers of up to 8" in said[0]


def test_one_servers_worth_says_no_servers_caveat() -> None:
    assert not any("cluster network" in x for x in _said("h200-nvl", 8))
    assert not any("cluster network" in x for x in _said("mi210", 64, buys=False))


def test_64_rtx_pro_6000_no_longer_ask_for_a_host_with_64_slots() -> None:
    said = _said("rtx-pro-6000-blackwell", 64)
    assert not any("64 PCIe slots" in x for x in said)
    assert any("8 servers of up to 8" in x for x in said)
    # one server's worth keeps the rig's own words
    assert any("8 PCIe slots" in x for x in _said("rtx-pro-6000-blackwell", 8))


def test_bought_modules_past_a_server_say_the_network_is_not_priced() -> None:
    said = [x for x in _said("h100-sxm", 64) if "cluster network" in x]
    assert len(said) == 1 and "8 servers of 8" in said[0] and "not priced" in said[0]


def test_bought_datacenter_rows_say_electricity_is_gpu_power_only() -> None:
    """Energy is TDP × N (cost.rates): a lower bound for servers."""
    said = [x for x in _said("h100-sxm", 64) if x.startswith("electricity")]
    assert len(said) == 1
    assert "64× 700 W = 44,800 W" in said[0] and "lower bound" in said[0]
    # NVIDIA's DGX H100 rating stays in compat.gpu_power_caveat's docstring: one short phrase
    # on the row (review 25, #4)
    assert "cooling (PUE)" in said[0]
    # a rented row: nothing; one card and a desktop card say it too (every bought row that
    # counts energy, tests/domain/test_r25buy_owned_caveats.py)
    assert not any("electricity" in x for x in _said("h100-sxm", 64, False))
    assert any("board power alone (700 W)" in x for x in _said("h100-sxm", 1))
    assert any("board power alone" in x for x in _said("rtx-4090", 4))
