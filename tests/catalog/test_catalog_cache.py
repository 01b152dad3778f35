"""The catalog is mapped once and reused until it changes, in this worker or another."""

from __future__ import annotations

from collections.abc import Iterator

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
