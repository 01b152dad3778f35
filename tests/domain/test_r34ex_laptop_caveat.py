"""A laptop GPU's row says its speed follows the power limit its laptop's maker set, with the
chip's Max-Q configuration from TechPowerUp (compat.laptop_caveat): bought, rented or neither,
since a student's laptop has no price. A desktop card says nothing of it."""

from __future__ import annotations

from dataclasses import replace

from app.domain import compat
from tests.domain.fixtures import RTX4090


def test_a_laptop_row_names_its_max_q_clock_and_the_share_of_speed() -> None:
    laptop = replace(
        RTX4090, slug="rtx-4060-laptop", name="NVIDIA GeForce RTX 4060 Laptop GPU",
        segment="laptop", tdp_w=115.0,
    )  # fmt: skip
    said = compat.laptop_caveat(laptop)
    assert said is not None
    assert "(115 W)" in said and "(35 W)" in said
    assert "1,470 MHz, not 1,890" in said
    assert "78 %" in said  # 1,470 / 1,890
    # a laptop chip without a Max-Q entry still says its power limit decides its speed
    other = replace(laptop, slug="some-laptop", tdp_w=None)
    plain = compat.laptop_caveat(other)
    assert plain is not None and "runs slower" in plain and "W)" not in plain


def test_a_desktop_card_says_nothing_of_a_power_limit() -> None:
    assert compat.laptop_caveat(RTX4090) is None


def test_every_shipped_laptop_has_a_max_q_entry(shipped_catalog) -> None:
    laptops = [g for g in shipped_catalog[0] if g.segment == "laptop" and g.vendor == "nvidia"]
    assert {g.slug for g in laptops} >= {"rtx-4060-laptop", "rtx-4070-laptop"}
    for g in laptops:
        ref, watts, mhz = compat.LAPTOP_MAX_Q[g.slug]
        # the reference boost is the catalog entry's own: its FP32 peak is SMs × 128 FP32
        # lanes × 2 FLOPs (an FMA) × that clock (Ampere and Ada GeForce SMs alike), so a
        # repeated clock that drifts from the entry fails here
        assert g.fp32_tflops is not None and g.sm_count
        assert abs(ref - g.fp32_tflops * 1e6 / (g.sm_count * 256)) < 1.0, g.slug
        assert mhz < ref
        assert g.tdp_w is None or watts < g.tdp_w
