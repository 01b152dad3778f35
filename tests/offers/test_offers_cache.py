"""The recommender's offer table is built once and reused until an offer changes, in this
worker or another (two engines on one database stand for two workers)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog import service as catalog
from app.config import Settings
from app.domain import evaluate as ev
from app.domain.cost import OfferBook
from app.domain.rent_from import inconsistency
from app.offers import repository, service
from app.offers.models import CloudOfferRow, PurchaseOfferRow
from app.recommend import schemas as s
from app.recommend import service as recommend
from app.shipped.rules import load_rules
from tests.support import two_workers_sessions


@pytest.fixture
def sessions(settings: Settings) -> Iterator[tuple[Session, Session]]:
    with two_workers_sessions(settings) as pair:
        yield pair


def _lab_h100(usd_per_hour: float, accelerator: str | None) -> dict[str, Any]:
    """One on-demand H100 offer of a test provider at ``usd_per_hour``."""
    return {
        "gpu_slug": "h100-sxm",
        "provider": "labcloud",
        "instance_type": "lab-1x",
        "accelerator": accelerator,
        "gpus": 1,
        "usd_per_hour": usd_per_hour,
        "spot_usd_per_hour": None,
        "tier": "on-demand",
        "regions": 1,
        "as_of": "2026-11-30",
        "source": "test",
    }


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

    row = repository.add_cloud(other, _lab_h100(cheapest / 2, accelerator=None))
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
    # every row but those whose prices contradict each other (never ranked nor rented)
    usable = [r for r in rows if inconsistency(r.usd_per_hour, r.spot_usd_per_hour) is None]
    assert len(usable) < len(rows)  # the snapshot's swapped RunPod L40S rows
    assert sum(len(o.cloud) for o in table.values()) == len(usable)
    # per GPU, cheapest per GPU-hour first (the engine keeps the first offer among equals)
    for offers in table.values():
        per_gpu = [o.usd_per_gpu_hour for o in offers.cloud]
        assert per_gpu == sorted(per_gpu)


def _h100_pricing(session: Session, settings: Settings, constraints: Mapping[str, object]) -> Any:
    """One request's context over the offers snapshot as of now, and H100's pricing at 1 GPU."""
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference"}, "constraints": constraints}
    )
    work, _ = recommend.resolve_workload(req.workload)
    rules = load_rules(settings.data_dir)
    ctx = recommend._context(work, req, "balanced", rules, None, offers=service.gpu_offers(session))
    h100 = catalog.get_spec(session, "h100-sxm", field="gpu")
    return ctx, ev._offer_pricing(ev.Configuration(h100, 1), 1, ctx)


def test_prices_are_kept_with_their_offers_snapshot(
    sessions: tuple[Session, Session], settings: Settings
) -> None:
    one, other = sessions
    rent: dict[str, object] = {"acquisition": "rent"}
    first_ctx, first = _h100_pricing(one, settings, rent)
    assert isinstance(first_ctx.offers, OfferBook)
    # another request with an equal policy (a new object) reads the snapshot's priced table
    again_ctx, again = _h100_pricing(one, settings, rent)
    assert again_ctx.offers is first_ctx.offers and again_ctx.rental is not first_ctx.rental
    assert again is first
    # another policy has a table of its own
    _, lambda_only = _h100_pricing(one, settings, rent | {"providers": ["lambda"]})
    assert lambda_only is not first and lambda_only.rent.offer.provider == "lambda"

    # a changed offer is a new snapshot (new stamp), priced afresh
    cheapest = first.rent.offer.usd_per_hour
    # a provider's catalog row (an accelerator named), so rentable
    repository.add_cloud(other, _lab_h100(cheapest / 2, accelerator="H100-SXM"))
    other.commit()
    changed_ctx, changed = _h100_pricing(one, settings, rent)
    assert changed_ctx.offers is not first_ctx.offers
    assert changed is not first
    assert changed.rent.offer.provider == "labcloud"
    assert changed.rent.usd_per_hour == pytest.approx(cheapest / 2)
