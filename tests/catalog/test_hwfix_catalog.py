"""Catalog facts the purchase caveats and the topology read (reviews 2 and 4)."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_catalog

DATA = Path(__file__).resolve().parents[2] / "data"
CATALOG = {g.slug: g for g in read_catalog(DATA)}


def _pcie_card(form_factor: str | None) -> bool:
    ff = (form_factor or "").lower()
    return ff.startswith("pcie") and "module" not in ff


def test_every_datacenter_pcie_card_says_how_it_is_cooled_with_a_source() -> None:
    """A30, A10, A2, A16, L40, V100 PCIe, H100 NVL, H200 NVL and MI210 were bought with no
    cooling caveat: the field was missing. Every datacenter PCIe card in the catalog is sold
    passively cooled (its vendor's datasheet or product brief)."""
    cards = [g for g in CATALOG.values() if g.segment == "datacenter" and _pcie_card(g.form_factor)]
    assert len(cards) >= 18  # the filter still finds the cards it is about
    missing = [g.slug for g in cards if g.cooling != "passive"]
    assert missing == []
    unsourced = [g.slug for g in cards if "cooling" not in g.field_sources]
    assert unsourced == []


def test_the_rtx_3090_bridge_bandwidth_is_sourced() -> None:
    g = CATALOG["rtx-3090"]
    assert g.interconnect == "NVLink 3 (2-way bridge)"
    assert g.interconnect_gbs == 112.5
    assert g.field_sources["interconnect_gbs"] == "nv-ga102-wp"


def test_a_cpu_8_pin_power_input_cites_its_source() -> None:
    for slug in ("tesla-p40", "a100-pcie-40gb", "a40"):
        g = CATALOG[slug]
        assert "8-pin CPU (EPS12V)" in (g.form_factor or ""), slug
        assert "form_factor" in g.field_sources, slug
