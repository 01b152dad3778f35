"""A GeForce or TITAN card's production row says what NVIDIA's GeForce driver licence and its
memory leave out; a datacenter card, or another vendor's consumer card, says nothing of it."""

from __future__ import annotations

import dataclasses

from app.domain import compat
from tests.domain.fixtures import H100, MI300X, RTX4090, T4


def test_geforce_cards_carry_the_licence_and_ecc_caveat() -> None:
    said = compat.geforce_caveat(RTX4090)
    assert said is not None
    assert "No Datacenter Deployment" in said and "§2.1.3" in said
    assert "without ECC by default" in said


def test_datacenter_and_other_vendors_cards_do_not() -> None:
    assert compat.geforce_caveat(H100) is None
    assert compat.geforce_caveat(T4) is None
    # a consumer Radeon is not under NVIDIA's GeForce licence
    radeon = dataclasses.replace(MI300X, name="Radeon RX 7900 XTX", segment="consumer")
    assert compat.geforce_caveat(radeon) is None
