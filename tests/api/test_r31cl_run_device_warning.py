"""A run that asks a device its worker reported it lacks (cuda:0 of a CPU-only worker) is
queued with a warning saying so: it had been queued without a word and then failed."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient

from app.db import write_scope
from app.reports import repository


def _worker(client: TestClient, label: str, backend: str) -> None:
    session_factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with write_scope(session_factory) as s:
        repository.save_worker(
            s,
            {"label": label, "host": label, "backend": backend, "device_name": "x",
             "last_seen": datetime.now(UTC), "started_at": datetime.now(UTC)},
        )  # fmt: skip


def _start(client: TestClient, label: str, device: str) -> dict[str, str | None]:
    r = client.post("/api/v1/benchmark-runs", json={"label": label, "device": device})
    assert r.status_code == 202, r.text
    run: dict[str, str | None] = r.json()
    client.delete(f"/api/v1/benchmark-runs/{run['id']}")  # one run per label at a time
    return run


def test_a_gpu_run_on_a_cpu_only_worker_is_warned(client: TestClient) -> None:
    _worker(client, "cpu-box", "cpu")
    warning = _start(client, "cpu-box", "cuda:0")["warning"]
    assert warning is not None
    assert "cpu-box" in warning and "cuda:0" in warning and "will likely fail" in warning
    assert _start(client, "cpu-box", "mps")["warning"] is not None
    # what the worker can run is not warned about; xpu machines report "cpu" to the probe
    for device in ("auto", "cpu", "xpu"):
        assert _start(client, "cpu-box", device)["warning"] is None, device


def test_a_gpu_worker_takes_its_own_device_without_a_warning(client: TestClient) -> None:
    _worker(client, "amd-box", "rocm")
    assert _start(client, "amd-box", "cuda:1")["warning"] is None  # ROCm answers to cuda:N
    assert _start(client, "amd-box", "mps")["warning"] is not None
