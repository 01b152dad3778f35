"""Encoder serving (issue 21): an embedding server's dynamic batcher around the engine's own
forward pass (app/domain/serving_encoder.py), at its lowest layer, against a step function
whose every figure is known, then against the engine and one public measurement."""

from __future__ import annotations

import dataclasses

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain import serving_encoder as se
from app.domain.serving import NEAR_CAPACITY
from app.domain.workload import ServingSpec, WorkloadSpec
from app.shipped.rules import DATA_DIR, load_efficiency
from app.vocab import ENCODER_SERVING_RUNTIMES
from tests.domain.fixtures import BERT_LARGE

TEI = se.RUNTIMES["tei"]
INFINITY = se.RUNTIMES["infinity"]
ST = se.RUNTIMES["sentence-transformers"]

FIXED_S, PER_TOKEN_S = 0.005, 1e-6  # a batch: 5 ms, plus 1 µs a token it computes


def linear(batch: int, tokens: int) -> float:
    return FIXED_S + PER_TOKEN_S * batch * tokens


def test_batch_caps_are_the_runtimes_defaults() -> None:
    # TEI counts tokens (--max-batch-tokens 16384), infinity and ST count sentences (32)
    assert se.batch_cap(TEI, se.EncoderLoad(449)) == 16384 // 449 == 36
    assert se.batch_cap(TEI, se.EncoderLoad(1000)) == 16
    assert se.batch_cap(TEI, se.EncoderLoad(20000)) == 1  # one sequence still runs
    assert se.batch_cap(INFINITY, se.EncoderLoad(449)) == 32
    assert se.batch_cap(ST, se.EncoderLoad(100)) == 32
    # vLLM's pooling runner: 32768 tokens a step, at most 256 sequences
    pooling = se.RUNTIMES["vllm-pooling"]
    assert se.batch_cap(pooling, se.EncoderLoad(449)) == 32768 // 449 == 72
    assert se.batch_cap(pooling, se.EncoderLoad(64)) == 256
    assert set(se.RUNTIMES) == set(ENCODER_SERVING_RUNTIMES)


def test_clients_within_one_batch_ride_it_together() -> None:
    r = se.evaluate(linear, TEI, se.EncoderLoad(500, concurrent_requests=8))
    t = linear(8, 500)
    assert r.latency_ms == pytest.approx(t * 1e3)
    assert r.requests_per_s == pytest.approx(8 / t)
    assert r.batch == 8 and r.notes == ()


def test_clients_beyond_the_cap_queue_by_littles_law() -> None:
    n, cap = 100, 16384 // 500  # 32 a batch
    r = se.evaluate(linear, TEI, se.EncoderLoad(500, concurrent_requests=n))
    rate = cap / linear(cap, 500)
    assert r.requests_per_s == pytest.approx(rate)
    assert r.latency_ms == pytest.approx(n / rate * 1e3)
    assert r.latency_p95_ms == pytest.approx(4 * linear(cap, 500) * 1e3)  # 4th batch
    assert r.max_requests_per_s == pytest.approx(rate)
    assert "queue" in r.notes[0]


def test_a_rate_load_waits_for_the_running_batch_and_misses_near_capacity() -> None:
    sat = 32 / linear(32, 500)
    light = se.evaluate(linear, TEI, se.EncoderLoad(500, requests_per_s=0.05 * sat))
    assert light.load_share == pytest.approx(0.05)
    # a lone sequence's batch, plus a little wait for the one running
    assert linear(1, 500) * 1e3 < light.latency_ms < 1.5 * linear(2, 500) * 1e3  # type: ignore[operator]
    assert se.meets(light, 100.0) == (True, [])
    busy = se.evaluate(linear, TEI, se.EncoderLoad(500, requests_per_s=0.9 * sat))
    assert busy.batch > light.batch and busy.latency_ms > light.latency_ms  # type: ignore[operator]
    ok, misses = se.meets(busy, None)
    assert not ok and f"> {100 * NEAR_CAPACITY:.0f} %" in misses[0]
    past = se.evaluate(linear, TEI, se.EncoderLoad(500, requests_per_s=1.01 * sat))
    assert past.latency_ms is None and past.requests_per_s is None
    assert se.meets(past, None) == (False, ["cannot carry the load"])
    assert "beyond" in past.notes[0]


def test_padding_costs_the_batchs_longest_unpadded_the_mean() -> None:
    spread = se.EncoderLoad(200, concurrent_requests=16, longest_tokens=512)
    even = se.EncoderLoad(200, concurrent_requests=16)
    tei, inf = se.evaluate(linear, TEI, spread), se.evaluate(linear, INFINITY, spread)
    assert tei.latency_ms == pytest.approx(linear(16, 200) * 1e3)
    assert inf.latency_ms == pytest.approx(linear(16, 512) * 1e3)
    assert "pads" in inf.notes[-1]
    # at one length the two batchers cost the same
    assert se.evaluate(linear, INFINITY, even).latency_ms == pytest.approx(
        se.evaluate(linear, TEI, even).latency_ms
    )


def test_a_request_of_many_inputs_is_many_sequences_and_costs_by_embedding() -> None:
    load = se.EncoderLoad(449, concurrent_requests=4, inputs=256)
    r = se.evaluate(linear, TEI, load)
    per_seq = 36 / linear(36, 449)
    assert r.embeddings_per_s == pytest.approx(per_seq)
    assert r.requests_per_s == pytest.approx(per_seq / 256)
    # $3.6/h at 1 embedding/s would be $1,000 a million
    one = dataclasses.replace(r, requests_per_s=1.0 / 256, max_requests_per_s=2.0 / 256)
    assert one.usd_per_million(3.6) == pytest.approx(1000.0)
    assert one.usd_per_million(3.6, saturated=True) == pytest.approx(500.0)


def test_sentence_transformers_runs_requests_one_after_another() -> None:
    load = se.EncoderLoad(449, concurrent_requests=10, inputs=256)
    r = se.evaluate(linear, ST, load)
    service = 8 * linear(32, 449)  # 256 sentences as 8 batches of 32
    assert r.latency_ms == pytest.approx(10 * service * 1e3)
    assert r.requests_per_s == pytest.approx(1 / service)
    # requests of one sentence: each its own batch, where a batcher across clients runs the
    # ten together
    single = se.EncoderLoad(449, concurrent_requests=10)
    alone, batched = se.evaluate(linear, ST, single), se.evaluate(linear, INFINITY, single)
    assert alone.requests_per_s == pytest.approx(1 / linear(1, 449))
    assert batched.requests_per_s == pytest.approx(10 / linear(10, 449))


def test_plan_adds_replicas_until_a_rate_is_within_the_margin() -> None:
    sat = 32 / linear(32, 500)
    load = se.EncoderLoad(500, requests_per_s=2.5 * sat)
    r = se.plan(linear, TEI, load, latency_ms=None)
    assert r.replicas == 4  # 2.5 ÷ 3 = 0.83 > 0.8; 2.5 ÷ 4 = 0.63
    assert se.meets(r, None)[0]
    # concurrent clients within one batch: a second replica does not help the target
    few = se.plan(linear, TEI, se.EncoderLoad(500, concurrent_requests=1), latency_ms=1.0)
    assert few.replicas == 1 and not se.meets(few, 1.0)[0]


GPUS = {g.name: g for g in read_gpu_specs(DATA_DIR)}
BGE_LARGE = WorkloadSpec(  # BAAI/bge-large-en-v1.5 is BERT-large's shape
    task="inference",
    model=BERT_LARGE,
    precision="fp16",
    batch_size=1,
    seq_len=449,
    efficiency=load_efficiency(),
)


def test_the_step_is_the_engines_batch_inference_under_the_runtimes_kernels() -> None:
    l4 = GPUS["NVIDIA L4"]
    step = se.engine_step(l4, BGE_LARGE, TEI)
    job = dataclasses.replace(BGE_LARGE, batch_size=36, runtime="torch-compile")
    assert step(36, 449) == pytest.approx(perf.estimate(l4, job).step_time_s)
    eager = se.engine_step(l4, BGE_LARGE, INFINITY)(32, 449)
    assert eager > step(32, 449)  # TEI's fused norms and epilogues
    assert se.fits(l4, BGE_LARGE, TEI, se.EncoderLoad(449)) is None


def test_a_full_batch_that_does_not_fit_says_so() -> None:
    big = dataclasses.replace(TEI, batch_tokens=4_000_000)
    why = se.fits(GPUS["NVIDIA L4"], BGE_LARGE, big, se.EncoderLoad(8192))
    assert why is not None and "lower tei's batch limit" in why


# michaelfeil/infinity docs/docs/benchmarking.md (infinity 0.0.25, TEI 0.6, 1 × NVIDIA L4,
# BAAI/bge-large-en-v1.5, a request = 256 sentences / 115,000 tokens, clients in parallel):
# requests/s × 256 = sentences/s at saturation. Read against, not tuned on.
PUBLISHED_L4 = {"tei": 0.54 * 256, "infinity-compile": 0.51 * 256}


@pytest.mark.parametrize("name", ["tei", "infinity-compile"])
def test_saturated_l4_within_a_fifth_of_the_published_benchmark(name: str) -> None:
    rt = TEI if name == "tei" else dataclasses.replace(INFINITY, kernels="torch-compile")
    load = se.EncoderLoad(115_000 // 256, concurrent_requests=8, inputs=256)
    r = se.evaluate(se.engine_step(GPUS["NVIDIA L4"], BGE_LARGE, rt), rt, load)
    assert r.embeddings_per_s is not None
    assert 0.8 < r.embeddings_per_s / PUBLISHED_L4[name] < 1.2


def test_the_decoder_serving_load_reads_as_an_encoders() -> None:
    spec = ServingSpec(
        prompt_tokens=300,
        output_tokens=1,
        requests_per_s=50.0,
        prompt_tokens_spread=200,
        ttft_ms_target=250.0,
        target_percentile="p95",
    )
    load = se.load_of(spec, inputs=4)
    assert (load.tokens, load.requests_per_s, load.inputs) == (300, 50.0, 4)
    assert load.padded_to(INFINITY) == 500 and load.padded_to(TEI) == 300
    assert se.latency_target(spec) == (250.0, True)
    assert se.load_of(dataclasses.replace(spec, prompt_tokens_spread=None)).longest_tokens is None
