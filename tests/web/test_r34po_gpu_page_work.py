"""r34po: a GPU page's fit tables read the card, its offers and its calibration once, and
ask no misfit for the variations that would let it fit (advice the page never shows): each
of its ~85 estimates had re-read all three and re-estimated each misfit's variations, 1-3 s a
page. The figures and words the page shows are the estimate's own (orchestrate.fit_probe)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.catalog import service as catalog
from app.config import Settings
from app.db import session_scope
from app.recommend import orchestrate
from app.recommend import schemas as rs
from app.reports import service as reports
from app.web import catalog_pages


def _request(preset: str, **workload: Any) -> rs.EstimateRequest:
    return rs.EstimateRequest(
        workload=rs.WorkloadIn(preset=preset, **workload), gpu="rtx-4090", num_gpus=1
    )


def test_the_probe_gives_what_the_page_shows_as_the_estimate_does(
    read_client: TestClient, read_settings: Settings
) -> None:
    factory = read_client.app.state.session_factory  # type: ignore[attr-defined]
    with session_scope(factory) as session:
        probe = orchestrate.fit_probe(session, read_settings, "rtx-4090")
        for req in (
            _request("llama-3.1-8b", task="inference", precision="bf16", batch_size=1),
            _request("llama-3.1-70b", task="inference", precision="bf16", batch_size=1),
        ):
            full, quick = orchestrate.estimate_for(session, read_settings, req), probe(req)
            assert (full.result is None) == (quick.result is None)
            if full.result is not None and quick.result is not None:
                assert quick.result.throughput == full.result.throughput
                assert quick.result.precision == full.result.precision
            else:
                assert full.excluded is not None and quick.excluded is not None
                assert quick.excluded.reason == full.excluded.reason
                # the variations the full estimate tries for a misfit; the page shows none
                assert any(a.startswith("Fits with") for a in full.advice)
                assert not any(a.startswith("Fits with") for a in quick.advice)


def test_the_fit_tables_read_the_card_once(
    read_client: TestClient, read_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"get_spec": 0, "pooled_calibration": 0}

    def counted(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(catalog, "get_spec", counted("get_spec", catalog.get_spec))
    monkeypatch.setattr(
        reports, "pooled_calibration", counted("pooled_calibration", reports.pooled_calibration)
    )
    factory = read_client.app.state.session_factory  # type: ignore[attr-defined]
    with session_scope(factory) as session:
        rows, largest = catalog_pages._what_fits(session, read_settings, "rtx-4090")
    assert len(rows) > 10 and largest
    assert calls == {"get_spec": 1, "pooled_calibration": 1}
