"""Which work-per-dollar figure a ranking row shows, and on which basis.

For "either" the row's cost is the cheaper allowed way in: a bought figure for a purchase over
the user's budget, beside a verdict that says "rent", told the reader the opposite of the row.
"""

from __future__ import annotations

from app.recommend import schemas as rs

Basis = str  # "rented" | "bought"


def row_per_usd(
    r: rs.Recommendation, acquisition: str, constraints: rs.ConstraintsIn | None
) -> tuple[float | None, Basis | None]:
    """The row's work per dollar and the word for its basis, or (None, None)."""
    cost = r.cost
    rent, buy = cost.samples_per_usd_rent, cost.samples_per_usd_buy
    if acquisition == "rent":
        return (rent, "rented") if rent is not None else (None, None)
    if acquisition == "buy":
        return (buy, "bought") if buy is not None else (None, None)
    cons = constraints or rs.ConstraintsIn()
    # a basis over the user's cap is not a way in this row offers
    if _over(cost.purchase_usd, cons.max_purchase_usd):
        buy = None
    if _over(cost.hourly_usd, cons.max_hourly_usd):
        rent = None
    if r.verdict is not None:
        # the verdict names the cheaper over the user's hours: the figure follows it
        if r.verdict.cheaper == "rent" and rent is not None:
            return rent, "rented"
        if r.verdict.cheaper == "buy" and buy is not None:
            return buy, "bought"
    if rent is None and buy is None:
        return None, None
    if buy is None or (rent is not None and rent >= buy):
        return rent, "rented"
    return buy, "bought"


def _over(price: float | None, cap: float | None) -> bool:
    return price is not None and cap is not None and price > cap
