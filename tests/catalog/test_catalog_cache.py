"""The catalog is mapped once and reused until it changes, in this worker or another."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import inspect
from sqlalchemy.orm import Session

from app.catalog import repository, service
from app.catalog.schemas import GpuCreate, GpuPatch
from app.config import Settings
from tests.support import lab_card, two_workers_sessions


@pytest.fixture
def sessions(settings: Settings) -> Iterator[tuple[Session, Session]]:
    with two_workers_sessions(settings) as pair:
        yield pair


def test_an_unchanged_catalog_is_mapped_once(sessions: tuple[Session, Session]) -> None:
    one, _ = sessions
    first = service.all_specs(one)
    again = service.all_specs(one)
    assert len(first) == len(again) > 30
    assert all(a is b for a, b in zip(first, again, strict=True))  # the same frozen specs


def test_edits_by_another_worker_are_seen(sessions: tuple[Session, Session]) -> None:
    one, other = sessions
    before = {g.slug: g for g in service.all_specs(one)}
    card = GpuCreate.model_validate(lab_card())
    service.create_gpu(other, card)
    other.commit()
    assert "lab-card" in {g.slug for g in service.all_specs(one)}

    service.patch_gpu(other, "rtx-4090", GpuPatch.model_validate({"memory_bandwidth_gbs": 1100}))
    other.commit()
    after = {g.slug: g for g in service.all_specs(one)}
    assert after["rtx-4090"].memory_bandwidth_gbs == 1100
    assert before["rtx-4090"].memory_bandwidth_gbs != 1100

    service.delete_gpu(other, "lab-card")
    other.commit()
    assert "lab-card" not in {g.slug for g in service.all_specs(one)}


def test_the_engine_rows_leave_sources_and_notes_unread(
    sessions: tuple[Session, Session],
) -> None:
    one, _ = sessions
    rows = repository.rows_for_specs(one)
    unloaded = inspect(rows[0]).unloaded
    assert {"sources", "field_sources", "notes"} <= unloaded
    assert "memory_bandwidth_gbs" not in unloaded


def test_the_per_card_terms_are_kept_with_the_catalog_snapshot(
    sessions: tuple[Session, Session], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """orchestrate hands the engine the catalog's per-card terms (fleet.Catalog) kept with the
    catalog snapshot: the same for the next request, a new one (with the edited spec) once
    another worker edits the catalog, and none for a request of one device report's own."""
    from app.recommend import orchestrate
    from app.recommend import schemas as s
    from app.recommend import service as engine

    one, other = sessions
    given: list[Any] = []
    recommend = engine.recommend

    def spy(*args: object, **kwargs: object) -> object:
        given.append(kwargs.get("catalog"))
        return recommend(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "recommend", spy)
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference"}, "limit": 3}
    )
    orchestrate.recommend_for(one, settings, req)
    orchestrate.recommend_for(one, settings, req)
    first, again = given
    assert first is not None and first is again and first.snapshots  # made once, kept
    service.patch_gpu(other, "rtx-4090", GpuPatch.model_validate({"memory_bandwidth_gbs": 1100}))
    other.commit()
    orchestrate.recommend_for(one, settings, req)
    edited = given[-1]
    assert edited is not None and edited is not first
    assert next(g for g in edited.gpus if g.slug == "rtx-4090").memory_bandwidth_gbs == 1100
    from app.domain.calibration import Calibration

    own = orchestrate._Device(Calibration(source="device report 1"))
    monkeypatch.setattr(orchestrate, "_device", lambda *_a: own)
    orchestrate.recommend_for(one, settings, req.model_copy(update={"device_report_id": 1}))
    assert given[-1] is None  # its calibration is this request's own
