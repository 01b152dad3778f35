"""New user's walk (thirty-fifth session), the verdict's words:
- two RTX 5080s bought at a market price read "costs $2,466 to buy at its market price ... (below
  the new price, $1,623, 2026-09)": the total beside one card's new price, as if $2,466 were
  below $1,623. A note on one card's price now follows that card's price.
- asked to buy or rent, a pick the verdict rents was given a caveat on owning it ("the price and
  electricity are the card alone ... no host computer nor cooling")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from app.recommend import schemas as s
from app.recommend.summary import _caveat, _price

OWNED = (
    "the price and electricity are the card alone (450 W of board power, a lower bound): no "
    "host computer nor cooling (PUE)"
)
SECOND_HAND = (
    "a market price (new or used): a second-hand card may have no warranty or vendor support"
)


def _buy(usd: float, unit: float, note: str | None) -> s.BuyCostOut:
    return s.BuyCostOut(usd=usd, unit_usd=unit, condition="market", as_of="2026-09",
                        source="q", stale=True, note=note)  # fmt: skip


def _row(n: int, buy: s.BuyCostOut | None, rent: Any = None, cheaper: str | None = None,
         warnings: tuple[str, ...] = ()) -> s.Recommendation:  # fmt: skip
    row = SimpleNamespace(
        cost=SimpleNamespace(rent=rent, buy=buy), offer=None, serving=None, num_gpus=n,
        verdict=SimpleNamespace(cheaper=cheaper) if cheaper else None, warnings=list(warnings),
        gpu=SimpleNamespace(name="NVIDIA GeForce RTX 4090"), meets_latency_target=None,
        latency_ms=None, framework_status="supported",
        uncertainty=SimpleNamespace(basis="", factor_low=0.9, factor_high=1.1, low=0.23, high=0.28),
        throughput=SimpleNamespace(unit="images/s"),
    )  # fmt: skip
    return cast(s.Recommendation, row)


def _answer(acquisition: str) -> s.RecommendationResponse:
    answer = SimpleNamespace(
        acquisition=acquisition, warnings=[], what_if=None, deadline=None,
        workload=SimpleNamespace(latency_target_ms=None),
    )  # fmt: skip
    return cast(s.RecommendationResponse, answer)


def test_a_note_on_one_cards_price_follows_that_cards_price() -> None:
    note = "below the new price ($1,623, 2026-09)"
    said = _price(_row(2, _buy(2_466.0, 1_233.0, note)), "buy")
    assert said == (
        "costs $2,466 to buy at its market price (new or used listings) as of 2026-09 "
        "($1,233 a card, below the new price, $1,623, 2026-09)"
    ), said
    # one card: its price is the card's, said once
    one = _price(_row(1, _buy(1_233.0, 1_233.0, note)), "buy")
    assert one is not None and "a card" not in one
    assert one.endswith("(below the new price, $1,623, 2026-09)")


def test_a_rented_pick_is_not_warned_about_owning_it() -> None:
    rent = SimpleNamespace(usd_per_hour=0.23, spot=False, as_of="2026-11-30", job_usd=None)
    row = _row(1, _buy(2_470.0, 2_470.0, None), rent=rent, cheaper="rent",
               warnings=(OWNED, SECOND_HAND, "bf16 cannot run here: estimated at fp16"))  # fmt: skip
    assert _caveat(row, _answer("either"), frozenset()) == "bf16 cannot run here: estimated at fp16"
    # nothing else to say: the loose band, as for any pick
    bare = _row(1, _buy(2_470.0, 2_470.0, None), rent=rent, cheaper="rent",
                warnings=(OWNED, SECOND_HAND))  # fmt: skip
    assert _caveat(bare, _answer("either"), frozenset()) is None


def test_a_bought_pick_keeps_them() -> None:
    rent = SimpleNamespace(usd_per_hour=0.23, spot=False, as_of="2026-11-30", job_usd=None)
    row = _row(1, _buy(2_470.0, 2_470.0, None), rent=rent, cheaper="buy",
               warnings=(OWNED, SECOND_HAND))  # fmt: skip
    assert _caveat(row, _answer("either"), frozenset()) == OWNED
    assert _caveat(row, _answer("buy"), frozenset()) == OWNED
