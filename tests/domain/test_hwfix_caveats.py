"""What a bought server card must say when it goes into a desktop (review 4, #5), and what a
compute-capability-6.1 card must say about fp16: words in compat, facts from the catalog."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from tests.domain.fixtures import A100, GTX1080TI, RTX4090

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def test_the_form_factor_names_a_cpu_8_pin_power_input() -> None:
    card = replace(A100, form_factor="PCIe; 8-pin CPU (EPS12V) power")
    assert card.cpu_power_input
    assert replace(A100, form_factor="PCIe, EPS-12V power").cpu_power_input
    assert not replace(A100, form_factor="PCIe dual-slot").cpu_power_input
    assert not replace(A100, form_factor=None).cpu_power_input
    # the catalog says so of the boards whose briefs name the connector
    assert GPUS["tesla-p40"].cpu_power_input and GPUS["a100-pcie-40gb"].cpu_power_input
    assert not GPUS["rtx-3090"].cpu_power_input


def test_a_bought_p40_says_display_bios_and_power() -> None:
    p40 = GPUS["tesla-p40"]
    said = compat.purchase_caveats(p40, 1, buys=True, rents=False)
    desk = [x for x in said if "in a desktop:" in x]
    assert len(desk) == 1
    assert "no display output" in desk[0] and "Above 4G decoding" in desk[0]
    assert "8-pin CPU (EPS12V)" in desk[0]
    assert any("passively cooled" in x for x in said)  # the cooling caveat stays
    assert any("1/64" in x and "llama.cpp" in x for x in said)
    # rented: the provider's server holds it, nothing of this
    assert compat.purchase_caveats(p40, 1, buys=False, rents=True) == ()


def test_desktop_caveat_is_for_passive_datacenter_pcie_cards() -> None:
    t4 = GPUS["t4"]
    said = compat.desktop_caveat(t4, buys=True)
    assert said is not None and "EPS12V" not in said  # a 70 W slot-powered card
    assert compat.desktop_caveat(RTX4090, buys=True) is None  # a desktop card
    assert compat.desktop_caveat(GPUS["rtx-a6000"], buys=True) is None  # workstation, fans
    sxm = replace(A100, segment="datacenter", cooling="passive", form_factor="SXM4")
    assert compat.desktop_caveat(sxm, buys=True) is None  # a module: cooling_caveat says more


def test_slow_fp16_is_said_of_compute_capability_6_1_only() -> None:
    assert compat.half_precision_caveat(GTX1080TI, buys=True) is not None
    assert compat.half_precision_caveat(GTX1080TI, buys=False) is None
    p100 = GPUS["tesla-p100-pcie-16gb"]  # GP100 (6.0) runs fp16 at twice fp32
    assert compat.half_precision_caveat(p100, buys=True) is None
    assert compat.half_precision_caveat(RTX4090, buys=True) is None
