"""Honest readiness, 503 when the database is away, a locked and explicit migrate + seed,
deletions of shipped GPUs that stay deleted, only web links as sources."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import make_engine
from app.main import create_app
from app.system import migrate
from tests.support import ROOT, lab_card


def test_health_is_503_when_the_schema_is_behind(client: TestClient, settings: Settings) -> None:
    assert client.get("/api/v1/health").status_code == 200
    engine = make_engine(settings.database_url)
    cfg = migrate.alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0003")
    engine.dispose()
    deadline = time.monotonic() + 15  # the verdict is re-checked every second
    while (r := client.get("/api/v1/health")).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "degraded" and body["checks"]["schema"].startswith("failed")
    assert body["error"]["details"]["field"] == "schema"


def test_health_is_503_when_the_disk_is_full(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"min_free_disk_bytes": 10**18}))
    with TestClient(app) as c:
        r = c.get("/api/v1/health")
        assert r.status_code == 503 and r.json()["checks"]["run_disk"].startswith("failed")
    app.state.engine.dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_database_unavailable_is_503_with_the_error_shape(tmp_path: Path, kind: str) -> None:
    # a directory is no SQLite file; nothing listens on port 1
    url = f"sqlite:///{tmp_path}" if kind == "sqlite" else "postgresql://postgres@127.0.0.1:1/x"
    settings = Settings(database_url=url, migrate_on_start=False, seed_on_start=False)
    app = create_app(settings)
    with TestClient(app) as c:
        r = c.get("/api/v1/gpus")
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "database_unavailable"
        assert r.headers["retry-after"]
        page = c.get("/gpus")
        assert page.status_code == 503 and "text/html" in page.headers["content-type"]
        health = c.get("/api/v1/health")
        assert health.status_code == 503 and health.json()["checks"]["database"].startswith(
            "failed"
        )
    app.state.engine.dispose()


def test_deleted_shipped_gpu_stays_deleted(client: TestClient, settings: Settings,
                                           admin: dict[str, str]) -> None:  # fmt: skip
    assert client.delete("/api/v1/gpus/h100-sxm", headers=admin).status_code == 204
    migrate.prepare(settings)  # what `gpu-advisor db upgrade` does at the next deploy
    assert client.get("/api/v1/gpus/h100-sxm").status_code == 404
    # re-adding it on purpose is allowed and survives the next seed as a user row
    again = client.post("/api/v1/gpus", json=lab_card(slug="h100-sxm"), headers=admin)
    assert again.status_code == 201
    migrate.prepare(settings)
    assert client.get("/api/v1/gpus/h100-sxm").json()["name"] == "Lab Card 48GB"


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "data:text/html,x", " javascript:x", "ftp://x"]
)
def test_only_web_links_as_sources(client: TestClient, admin: dict[str, str], url: str) -> None:
    card = lab_card(sources=[{"id": "ds", "title": "Datasheet", "url": url}])
    r = client.post("/api/v1/gpus", json=card, headers=admin)
    assert r.status_code == 422
    assert r.json()["error"]["details"]["field"] == "sources.0.url"


def test_two_processes_upgrading_at_once_both_succeed(database_url: str) -> None:
    env = {**os.environ, "GPU_ADVISOR_DATABASE_URL": database_url}
    cmd = [sys.executable, "-m", "app.cli", "db", "upgrade"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT) for _ in range(2)]  # fmt: skip
    outputs = [p.communicate(timeout=240)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    engine = make_engine(database_url)
    assert migrate.current_revision(engine) == migrate.head_revision()
    engine.dispose()


def test_start_up_loads_the_catalog_before_the_first_request(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So that the first request finds it loaded (app.main._lifespan)."""
    from app.catalog import repository, service

    service._specs.clear()
    reads: list[int] = []
    rows = repository.rows_for_specs

    def counted(session: Any) -> Any:
        reads.append(1)
        return rows(session)

    monkeypatch.setattr(repository, "rows_for_specs", counted)
    with TestClient(create_app(settings)) as client:
        assert reads == [1]
        body = {"workload": {"preset": "resnet-50"}, "limit": 1}
        assert client.post("/api/v1/recommendations", json=body).status_code == 200
        assert reads == [1]  # the first request found it loaded


def test_start_up_without_an_answering_database_leaves_the_caches_to_the_first_request(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    from app.recommend import orchestrate

    def refuse(*_: object) -> None:
        raise OperationalError("SELECT 1", {}, Exception("database is away"))

    monkeypatch.setattr(orchestrate, "warm", refuse)
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/v1/health").status_code == 200
