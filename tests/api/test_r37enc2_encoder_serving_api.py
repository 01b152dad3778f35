"""Task 'serving' of an encoder through the API (issue 21): BGE-large (BERT-large's shape:
24 layers, 1,024 wide, 16 heads; BAAI/bge-large-en-v1.5 config.json) behind TEI, ranked by the
one pipeline, its figures the domain batcher's (app/domain/serving_encoder.py) for the same card,
in an encoder's words; and the 422s that name the field."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.catalog.service import all_specs
from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.domain import serving_encoder as se
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from app.reports.service import catalog_calibration

# BAAI/bge-large-en-v1.5 config.json: BertModel, 24 layers, hidden 1024, 16 heads,
# intermediate 4096, vocab 30522, max_position_embeddings 512
BGE_LARGE = {
    "family": "encoder",
    "layers": 24,
    "hidden_size": 1024,
    "num_heads": 16,
    "params": 335e6,
    "intermediate_size": 4096,
    "vocab_size": 30522,
    "max_context": 512,
}
LOAD = {"concurrent_requests": 64, "prompt_tokens": 256, "ttft_ms_target": 200}


def _workload(**over: Any) -> dict[str, Any]:
    w: dict[str, Any] = {
        "model": BGE_LARGE,
        "task": "serving",
        "precision": "fp16",
        "serving": dict(LOAD),
    }
    return w | over


def _post(client: TestClient, workload: dict[str, Any], **cons: Any) -> Any:
    body = {
        "workload": workload,
        "constraints": {"acquisition": "rent", "max_gpus": 4} | cons,
        "objective": "cheapest",
    }
    return client.post("/api/v1/recommendations", json=body)


@pytest.fixture(scope="module")
def engine_inputs(read_settings: Settings) -> tuple[dict[str, GpuSpec], Calibration | None]:
    """The catalog and the pooled calibration the app ranks with (orchestrate.warm's)."""
    engine = make_engine(read_settings.database_url)
    with session_scope(make_session_factory(engine)) as session:
        gpus = all_specs(session)
        calibration = catalog_calibration(session, gpus)
    engine.dispose()
    return {g.slug: g for g in gpus}, calibration


def _domain(
    inputs: tuple[dict[str, GpuSpec], Calibration | None],
    slug: str,
    replicas: int,
    workload: dict[str, Any],
) -> se.EncoderResult:
    """The domain batcher's result for the same card, load and replicas."""
    work, _ = resolve_workload(s.WorkloadIn.model_validate(workload))
    assert work.serving is not None
    gpus, calibration = inputs
    rt = se.RUNTIMES[work.runtime]
    step = se.engine_step(gpus[slug], work, rt, calibration)
    return se.evaluate(step, rt, se.load_of(work.serving), replicas)


def test_bge_large_serving_ranks_rows_whose_figures_are_the_batchers(
    read_client: TestClient, engine_inputs: tuple[dict[str, GpuSpec], Calibration | None]
) -> None:
    r = _post(read_client, _workload())
    assert r.status_code == 200, r.text
    body = r.json()
    recs = body["recommendations"]
    assert recs and body["serving"]["met"]
    assert "latency ≤ 200 ms" in body["serving"]["message"]
    assert "TTFT" not in body["serving"]["message"]
    for rec in recs[:5]:
        sv = rec["serving"]
        assert sv["kind"] == "encoder" and sv["runtime"] == "tei"
        assert sv["itl_ms"] is None and rec["ms_per_output_token"] is None
        assert sv["gpus_per_replica"] == 1 and rec["num_gpus"] == sv["replicas"]
        assert rec["throughput"]["unit"] == "embeddings/s"
        dom = _domain(engine_inputs, rec["gpu"]["slug"], sv["replicas"], _workload())
        assert sv["ttft_ms"] == pytest.approx(dom.latency_ms)
        assert rec["latency_ms"] == pytest.approx(dom.latency_ms)
        assert sv["embeddings_per_s"] == pytest.approx(dom.embeddings_per_s)
        assert rec["throughput"]["value"] == pytest.approx(dom.embeddings_per_s)
        assert sv["batch_sequences"] == dom.batch_cap == 16384 // 256
        assert sv["ttft_ms"] <= 200
        assert sv["usd_per_million_embeddings"] == pytest.approx(
            dom.usd_per_million(sv["usd_per_hour"])
        )
        assert se.meets(dom, 200.0)[0]
    # cheapest first, by the hour
    hours = [rec["serving"]["usd_per_hour"] for rec in recs if rec["serving"]["usd_per_hour"]]
    assert hours == sorted(hours)


def test_constraints_still_apply(read_client: TestClient) -> None:
    r = _post(read_client, _workload(), num_gpus=2, vendors=["nvidia"])
    assert r.status_code == 200, r.text
    recs = r.json()["recommendations"]
    assert recs
    assert all(rec["num_gpus"] == 2 and rec["serving"]["replicas"] == 2 for rec in recs)
    assert all(rec["gpu"]["vendor"] == "nvidia" for rec in recs)
    capped = _post(read_client, _workload(), max_hourly_usd=1.0)
    assert capped.status_code == 200, capped.text
    for rec in capped.json()["recommendations"]:
        assert rec["serving"]["usd_per_hour"] <= 1.0


def test_a_latency_no_card_meets_says_what_to_relax(read_client: TestClient) -> None:
    w = _workload(serving=LOAD | {"ttft_ms_target": 0.01})
    r = _post(read_client, w)
    assert r.status_code == 200, r.text
    summary = r.json()["serving"]
    assert not summary["met"]
    assert any("serving.ttft_ms_target" in t for t in summary["relax"])


@pytest.mark.parametrize("runtime", ["infinity", "sentence-transformers", "vllm-pooling", "vllm"])
def test_each_embedding_server(read_client: TestClient, runtime: str) -> None:
    # a light load: sentence-transformers behind a plain server runs one request at a time
    light = LOAD | {"concurrent_requests": 8}
    r = _post(read_client, _workload(runtime=runtime, serving=light))
    assert r.status_code == 200, r.text
    recs = r.json()["recommendations"]
    assert recs
    want = "vllm-pooling" if runtime == "vllm" else runtime
    assert {rec["serving"]["runtime"] for rec in recs} == {want}


@pytest.mark.parametrize(
    ("workload", "field", "words"),
    [
        (_workload(runtime="sglang"), "workload.runtime", "serves decoder LLMs"),
        (_workload(quantization="awq"), "workload.quantization", "unquantised"),
        (_workload(precision="fp8"), "workload.precision", "fp8"),
        (
            _workload(serving={"prompt_tokens": 256}),
            "workload.serving.concurrent_requests",
            "give the load",
        ),
        (
            _workload(serving=LOAD | {"prompt_tokens": 600}),
            "workload.serving.prompt_tokens",
            "context of 512",
        ),
        (
            {
                "preset": "llama-3.1-8b",
                "task": "serving",
                "runtime": "tei",
                "serving": {"concurrent_requests": 4},
            },
            "workload.runtime",
            "embedding server",
        ),
        (
            _workload(task="inference", runtime="tei", serving=None),
            "workload.runtime",
            "task 'inference'",
        ),
    ],
)
def test_refusals_name_the_field(
    read_client: TestClient, workload: dict[str, Any], field: str, words: str
) -> None:
    r = _post(read_client, workload)
    assert r.status_code == 422, r.text
    text = r.text
    assert field in text and words in text


def test_output_fields_are_said_ignored(read_client: TestClient) -> None:
    w = _workload(serving=LOAD | {"output_tokens": 300, "itl_ms_target": 50})
    r = _post(read_client, w)
    assert r.status_code == 200, r.text
    warnings = " ".join(r.json()["warnings"])
    assert "serving.output_tokens, serving.itl_ms_target" in warnings and "ignored" in warnings


def test_estimate_of_one_card(
    read_client: TestClient, engine_inputs: tuple[dict[str, GpuSpec], Calibration | None]
) -> None:
    body = {"workload": _workload(), "gpu": "h100-sxm"}
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    res = r.json()["result"]
    assert res["serving"]["kind"] == "encoder"
    dom = _domain(engine_inputs, "h100-sxm", res["serving"]["replicas"], _workload())
    assert res["serving"]["ttft_ms"] == pytest.approx(dom.latency_ms)


def test_what_if_offers_an_encoders_own_levers(read_client: TestClient) -> None:
    body = {
        "workload": _workload(serving=LOAD | {"ttft_ms_target": 5}),
        "constraints": {"acquisition": "rent", "max_gpus": 2},
        "objective": "cheapest",
        "what_if": True,
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    said = " ".join(w["change"] for w in r.json()["what_if"])
    assert "32 concurrent requests instead of 64" in said
    assert "latency target twice as loose (10 ms)" in said
    assert "fp8" not in said and "KV" not in said and "4-bit" not in said
