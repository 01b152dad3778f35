"""The recommender's offer table is built once and reused until an offer changes, in this
worker or another (two engines on one database stand for two workers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.offers import repository, service
from app.offers.models import CloudOfferRow, PurchaseOfferRow
from tests.support import two_workers_sessions


@pytest.fixture
def sessions(settings: Settings) -> Iterator[tuple[Session, Session]]:
    with two_workers_sessions(settings) as pair:
        yield pair


def _cheapest_h100_hour(offers: object) -> float:
    from app.domain.cost import GpuOffers

    assert isinstance(offers, GpuOffers)
    return min(o.usd_per_hour for o in offers.cloud)


def test_unchanged_offers_are_loaded_once(sessions: tuple[Session, Session]) -> None:
    one, _ = sessions
    first = service.gpu_offers(one)
    assert service.gpu_offers(one) is first
    assert len(first) >= 40 and sum(len(o.cloud) for o in first.values()) > 600
    with pytest.raises(TypeError):
        first["h100-sxm"] = first["h100-sxm"]  # type: ignore[index]  # shared: read-only


def test_offer_edits_by_another_worker_are_seen(sessions: tuple[Session, Session]) -> None:
    one, other = sessions
    before = service.gpu_offers(one)
    cheapest = _cheapest_h100_hour(before["h100-sxm"])

    row = repository.add_cloud(
        other,
        {
            "gpu_slug": "h100-sxm",
            "provider": "labcloud",
            "instance_type": "lab-1x",
            "accelerator": None,
            "gpus": 1,
            "usd_per_hour": cheapest / 2,
            "spot_usd_per_hour": None,
            "tier": "on-demand",
            "regions": 1,
            "as_of": "2026-11-30",
            "source": "test",
        },
    )
    other.commit()
    added = service.gpu_offers(one)
    assert _cheapest_h100_hour(added["h100-sxm"]) == pytest.approx(cheapest / 2)

    row.usd_per_hour = cheapest / 4
    other.commit()
    assert _cheapest_h100_hour(service.gpu_offers(one)["h100-sxm"]) == pytest.approx(cheapest / 4)

    other.delete(row)
    other.commit()
    assert _cheapest_h100_hour(service.gpu_offers(one)["h100-sxm"]) == pytest.approx(cheapest)

    purchase = other.scalars(select(PurchaseOfferRow).limit(1)).one()
    slug, usd = purchase.gpu_slug, purchase.usd
    purchase.usd = usd + 1.0
    other.commit()
    assert usd + 1.0 in {p.usd for p in service.gpu_offers(one)[slug].purchase}


def test_the_table_matches_the_offer_rows(sessions: tuple[Session, Session]) -> None:
    one, _ = sessions
    table = service.gpu_offers(one)
    rows = one.scalars(select(CloudOfferRow)).all()
    assert sum(len(o.cloud) for o in table.values()) == len(rows)
    # per GPU, cheapest per GPU-hour first (the engine keeps the first offer among equals)
    for offers in table.values():
        per_gpu = [o.usd_per_gpu_hour for o in offers.cloud]
        assert per_gpu == sorted(per_gpu)
