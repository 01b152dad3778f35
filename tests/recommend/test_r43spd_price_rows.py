"""A balanced answer's prices of the catalog's cards read from columns kept with the catalog's
snapshot (fleet.price_rows, fleet.count_rates: issue 21's speed) are what ev.price_columns
reads card by card, to the last bit: at every count, under each acquisition, an electricity
price, rows with a configuration of their own, a table of prices filled by either first, and
the columns found again by the next request under the same policy."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import fleet
from app.recommend import schemas as s
from app.recommend import service


@pytest.fixture
def catalog(shipped_catalog: Any) -> Any:
    gpus, offers, rules = shipped_catalog
    book = offers if isinstance(offers, costs.OfferBook) else costs.OfferBook(offers)
    return sorted(gpus, key=lambda g: g.slug), book, rules


def _ctx(catalog: Any, book: Any, body: dict[str, Any]) -> Any:
    _, _, rules = catalog
    req = s.RecommendationRequest.model_validate(body)
    work, _ = service.resolve_workload(req.workload)
    return service._context(work, req, req.objective, rules, None, offers=book)


BODIES = [
    {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4}},
    {
        "workload": {"preset": "llama-3-70b", "task": "inference", "batch_size": 16},
        "constraints": {"acquisition": "buy", "electricity_usd_per_kwh": 0.31},
    },
    {
        "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 1},
        "constraints": {"acquisition": "rent"},
    },
]


@pytest.mark.parametrize("body", BODIES, ids=["either", "buy-power", "rent"])
def test_price_rows_are_price_columns(body: dict[str, Any], catalog: Any) -> None:
    gpus, book, rules = catalog
    rng = random.Random(str(body))
    ctx = _ctx(catalog, book, body)
    assert ev.price_table(ctx) is not None
    cat = fleet.Catalog(tuple(gpus), rules, None)
    snap = fleet.snapshot(cat, ctx)
    cards = np.array([i for i in range(len(gpus)) if rng.random() < 0.8], np.intp)
    counts = np.array([rng.choice([1, 1, 2, 3, 4, 8]) for _ in cards], np.int64)
    configs: list[ev.Configuration | None] = [
        ev.Configuration(gpus[i], int(n)) if rng.random() < 0.1 else None
        for i, n in zip(cards.tolist(), counts.tolist(), strict=True)
    ]
    own = [j for j, c in enumerate(configs) if c is not None]
    assert own and len(own) < len(cards)
    # the card-by-card pass on a context of its own (its table filled by the pass itself)
    fresh = _ctx(catalog, costs.OfferBook(dict(book.items())), body)
    want_known, flat = ev.price_columns(
        configs, [gpus[i] for i in cards.tolist()], counts.tolist(), fresh
    )
    want = np.array(flat, np.float64).reshape(len(cards), 4)
    for _ in range(2):  # made, then found again by the next request under the same policy
        again = _ctx(catalog, book, body)
        known, rates = fleet.price_rows(snap, again, cards, counts, configs, own)
        assert known.tolist() == want_known
        np.testing.assert_array_equal(rates, want)  # NaN in the same places, floats equal
    assert len(snap.rates) == len(set(counts.tolist()))


def test_prices_of_copies_stay_the_requests_own(catalog: Any) -> None:
    """Copies over a dataset are priced apart from the shared table (ev._offer_pricing): no
    columns, every row priced as ev.price_columns prices it."""
    gpus, book, rules = catalog
    body = {"workload": {"preset": "resnet-50", "task": "inference", "batch_size": 64}}
    ctx = _ctx(catalog, book, body)
    assert ev.price_table(ctx) is None
    snap = fleet.snapshot(fleet.Catalog(tuple(gpus), rules, None), ctx)
    cards = np.arange(len(gpus), dtype=np.intp)
    counts = np.full(len(gpus), 2, np.int64)
    configs: list[ev.Configuration | None] = [None] * len(gpus)
    known, rates = fleet.price_rows(snap, ctx, cards, counts, configs, [])
    fresh = _ctx(catalog, book, body)
    want_known, flat = ev.price_columns(configs, gpus, counts.tolist(), fresh)
    assert known.tolist() == want_known
    np.testing.assert_array_equal(rates, np.array(flat, np.float64).reshape(len(gpus), 4))
    assert snap.rates == []


@pytest.mark.parametrize("body", BODIES, ids=["either", "buy-power", "rent"])
def test_a_proofs_prices_from_the_columns_are_price_terms(
    body: dict[str, Any], catalog: Any
) -> None:
    """service._upfront_terms (an alternative's way in, which proves it dominated) read from
    the columns is ev.price_terms' purchase, per hour and horizon, at every count a card plans."""
    gpus, book, rules = catalog
    ctx = _ctx(catalog, book, body)
    snap = fleet.snapshot(fleet.Catalog(tuple(gpus), rules, None), ctx)
    seen = 0
    for row, gpu in enumerate(gpus):
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            continue
        for config in planned:
            terms = ev.price_terms(config, _ctx(catalog, book, body))
            want = None if terms is None else (terms[0], terms[1], terms[4])
            assert service._upfront_terms(config, (snap, row), ctx) == want
            seen += want is not None
    assert seen > 50
