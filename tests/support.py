"""Shared test helpers: the real server in a child process, and a GPU entry to post."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from sqlalchemy import create_engine, func, select

from app.catalog.schemas import GpuCreate
from app.domain.cost import PurchaseOffer, launch_is_stale
from app.shipped import yamlio

ROOT = Path(__file__).resolve().parent.parent


def lab_card(**changes: Any) -> dict[str, Any]:
    """A valid catalog entry for POST /api/v1/gpus; tests change what they are about."""
    return {
        "slug": "lab-card",
        "name": "Lab Card 48GB",
        "vendor": "nvidia",
        "architecture": "Ada Lovelace",
        "segment": "workstation",
        "memory_gb": 48,
        "memory_bandwidth_gbs": 960,
        "fp32_tflops": 91.1,
        "backends": ["cuda"],
        "launch_price_usd": 1234,
        "sources": [{"id": "ds", "title": "Datasheet", "url": "https://example.org/ds"}],
    } | changes


def load_benchmark(script: str, name: str) -> ModuleType:
    """benchmarks/<script> (a script people run) loaded as module ``name``, so the floors the
    tests hold are computed by the same code."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / script)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def llm_training_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an LLM training file (llm_pretrain.yaml, finetune_throughput.yaml), once
    what both hold is checked: sources pinned to a GitHub commit, and every row naming a
    source, a model shape the file gives and a catalog GPU."""
    from app.catalog.loader import read_gpu_specs

    doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    for src in doc["sources"].values():
        assert src["url"].startswith("https://github.com/") and src["commit"] in src["url"]
    for row in doc["rows"]:
        assert row["source"] in doc["sources"] and row["model"] in doc["models"], row
        assert row["gpu_slug"] in slugs, row
    return list(doc["rows"])


def seeded_purchase_offers(
    catalog: list[GpuCreate], data: Path, today: date
) -> dict[str, list[PurchaseOffer]]:
    """The shipped purchase offers by card, read the way `gpu-advisor db seed` reads them (the
    catalog's prices, then data/offers/purchase.yaml) and each launch price aged on ``today``
    as the service ages it (offers.service.purchase_offers_by_gpu)."""
    from app.offers.loader import purchase_offers_from_catalog, read_seed_purchase_offers

    rows = [*purchase_offers_from_catalog(catalog), *read_seed_purchase_offers(data)]
    out: dict[str, list[PurchaseOffer]] = {}
    for o in rows:
        stale = o.condition == "launch" and launch_is_stale(o.as_of, today)
        out.setdefault(o.gpu_slug, []).append(
            PurchaseOffer(o.usd, o.condition, o.as_of, o.source, stale=stale, note=o.note)
        )
    return out


@contextmanager
def browser_page(
    browser: Any, watch: Any, server: str, viewport: Any, timeout_ms: float = 60_000
) -> Iterator[Any]:
    """A page of its own browser context at ``viewport`` on the live server, watched for
    console errors and foreign requests (tests/web/test_browser.py's Watch); the context is
    closed when the test is done."""
    context = browser.new_context(base_url=server, viewport=viewport)
    try:
        pg = watch.attach(context.new_page())
        pg.set_default_timeout(timeout_ms)
        yield pg
    finally:
        context.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def live_server(
    env: dict[str, str],
    log: Path,
    timeout_s: float = 90,
    command: list[str] | None = None,
    cwd: Path = ROOT,
) -> Iterator[str]:
    """`gpu-advisor serve` on a free port with ``env``; yields its base URL once healthy.
    ``command`` replaces ``python -m app.cli`` (e.g. an installed ``gpu-advisor``)."""
    port = free_port()
    argv = [*(command or [sys.executable, "-m", "app.cli"]), "serve", "--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited: {log.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not become healthy in {timeout_s:g} s")
                time.sleep(0.3)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def two_workers_sessions(settings: Any) -> Iterator[tuple[Any, Any]]:
    """Two sessions on two engines over one migrated database: two workers sharing it (the
    caches' tests: what one worker writes, the other must see)."""
    from app.db import make_engine, make_session_factory, session_scope
    from app.main import prepare_database

    prepare_database(settings)
    engines = [make_engine(settings.database_url) for _ in range(2)]
    factories = [make_session_factory(e) for e in engines]
    try:
        with session_scope(factories[0]) as one, session_scope(factories[1]) as other:
            yield one, other
    finally:
        for e in engines:
            e.dispose()


def assert_scored(
    s: Any, n: int, median: float, bias: tuple[float, float], spearman: float
) -> None:
    """A scored regime (benchmarks/accuracy.py's score): its row count, median ratio error at
    most ``median``, bias (measured ÷ predicted) within ``bias`` and Spearman at least
    ``spearman``."""
    assert s.n == n
    assert s.median_ratio <= median, s.median_ratio
    assert bias[0] <= s.bias <= bias[1], s.bias
    assert s.spearman >= spearman, s.spearman


def assert_prices_every_row(accuracy: ModuleType, data_dir: Path, path: Path, n: int) -> None:
    """The engine gives each of ``path``'s ``n`` rows a finite, positive prediction."""
    import math

    rows, skipped = accuracy.evaluate_heldout(data_dir, [path])
    assert not skipped and len(rows) == n
    assert all(math.isfinite(r.predicted) and r.predicted > 0 for r in rows)


def held_out_source_urls(data: Path) -> set[str]:
    """Every source URL the held-out files (``data``/heldout_*.yaml) cite: a tuning file must
    share none of them."""

    return {
        src["url"]
        for p in data.glob("heldout_*.yaml")
        for src in (yamlio.safe_load(p.read_text(encoding="utf-8")).get("sources") or {}).values()
        if isinstance(src, dict) and "url" in src
    }


def stored_rows(database_url: str, model: type[Any]) -> int:
    """Rows of ``model``'s table, counted in the database itself (not through the API or a
    page): what a refused or concurrent write left behind, on SQLite or PostgreSQL."""
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as conn:
            return int(conn.scalar(select(func.count()).select_from(model)) or 0)
    finally:
        engine.dispose()


def preset_step_ops(preset: str, task: str, batch: int) -> list[Any]:
    """The operator path's ops of one step of ``preset`` (bf16, flash attention, 2-byte
    activations) at ``batch``, as shipped (perf.step_ops); skips the test where the data has
    no such preset, and is empty where the model has no operator table."""
    import pytest

    from app.domain import perf
    from app.domain.workload import WorkloadSpec
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = ROOT / "data"
    presets = load_presets(data)
    if preset not in presets:
        pytest.skip(f"no {preset} preset")
    work = WorkloadSpec(
        task=task,
        model=presets[preset].model,
        precision="bf16",
        batch_size=batch,
        efficiency=load_efficiency(data),
    )
    return perf.step_ops(work, True, 2.0) or []


def lazy_and_full(
    monkeypatch: Any, req: Any, gpus: Any, rules: Any, offers: Any
) -> tuple[Any, Any]:
    """A request's answer as the service gives it (``_lazy``: bounded, columns, proofs) and as
    evaluating every configuration gives it, both dumped: what the fast paths must equal."""
    from app.recommend import service

    fast = service.recommend(req, gpus, rules, offers=offers).model_dump()
    monkeypatch.setattr(service, "_lazy", lambda _r: False)
    full = service.recommend(req, gpus, rules, offers=offers).model_dump()
    return fast, full


def recommend_with(catalog: Any, body: dict[str, Any]) -> Any:
    """The service's answer to a request body, on the ``shipped_catalog`` fixture's
    (GPUs, offers, rules)."""
    from app.recommend import schemas, service

    req = schemas.RecommendationRequest.model_validate(body)
    return service.recommend(req, catalog[0], catalog[2], offers=catalog[1])


def summary_of(response: Any) -> Any:
    """The answer's verdict as the service writes it (orchestrate.recommend_for), under the
    shipped framework rules' setup notes."""
    from app.domain.compat import setup_notes
    from app.recommend.summary import answer_summary
    from app.shipped.rules import load_rules

    return answer_summary(response, setup_notes(load_rules()))


# GPT-2 XL pretrained on 10 B tokens (batch 512 of 1,024), the job two audits asked of
# session 44 (a fine-tuning recipe's checkpointing, a deadline answer's memory words)
GPT2_XL_PRETRAIN = {
    "preset": "gpt2-xl",
    "task": "training",
    "seq_len": 1024,
    "batch_size": 512,
    "dataset_samples": 10_000_000,
    "epochs": 1,
}
