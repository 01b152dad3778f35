"""The 8-bit KV cache tip ("halves the cache, so one replica holds twice the requests") is given
only where twice the slots could change what carries the load: Llama 3.3 70B on 4 H200s at 64
clients held 594 requests and was told it all the same, beside the tip that the cache holds far
more requests than the load."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.domain.serving import ServingConfig, ServingResult
from app.domain.workload import ServingSpec
from app.recommend.serving import kv8_can_matter

TIP = "8-bit KV cache"


def _result(
    *,
    replicas: int = 1,
    gpus: int = 1,
    slots: int = 100,
    pool_gb: float = 40.0,
    weights_gb: float = 30.0,
    kv_gb: float = 0.5,
    copies: float = 1.0,
) -> ServingResult:
    return ServingResult(
        config=ServingConfig(gpus, replicas, "bf16", "bf16", "vllm"),
        fits=True,
        reason=None,
        weights_gb_per_gpu=weights_gb,
        kv_pool_gb_per_gpu=pool_gb,
        activations_gb_per_gpu=1.0,
        framework_gb_per_gpu=0.5,
        kv_gb_per_request=kv_gb,
        max_concurrency=slots,
        ttft_ms=100.0,
        ttft_p95_ms=200.0,
        itl_ms=20.0,
        itl_p95_ms=30.0,
        output_tokens_per_s=1000.0,
        input_tokens_per_s=1000.0,
        max_output_tokens_per_s=2000.0,
        requests_per_s=None,
        saturated=False,
        prefill_share=0.2,
        bottleneck="memory bandwidth",
        compute_precision="bf16",
        curve=(),
        kv_copies=copies,
    )


def _clients(n: float) -> ServingSpec:
    return ServingSpec(prompt_tokens=1000, output_tokens=300, concurrent_requests=n)


def test_slots_more_than_half_filled_make_the_tip() -> None:
    # 2 replicas of 35 slots at 50 clients: 25 each, over half, so twice the slots lets one
    # replica hold all 50
    assert kv8_can_matter(_result(replicas=2, slots=35), _clients(50))
    # 2 replicas of 70: 25 each, under half; one replica already holds 50 at 16 bits
    assert not kv8_can_matter(_result(replicas=2, slots=70), _clients(50))


def test_a_rate_load_queues_for_slots_so_the_tip_stays() -> None:
    spec = ServingSpec(prompt_tokens=1000, output_tokens=300, requests_per_s=2.0)
    assert kv8_can_matter(_result(slots=1000), spec)


def test_half_the_group_counts_only_where_8_bits_is_what_makes_it_hold() -> None:
    # 4 GPUs with 10 GB of pool beyond their weights: half the group has 10 GB a GPU for the
    # cache. 64 clients at 0.5 GB need 16 GB a GPU there at 16 bits, 8 at 8 bits: the tip
    r = _result(gpus=4, slots=500, pool_gb=40.0, weights_gb=30.0)
    assert kv8_can_matter(r, _clients(64))
    # 24 clients need 6 GB a GPU there already at 16 bits: the smaller group needs no fp8
    assert not kv8_can_matter(r, _clients(24))
    # weights that fill a GPU twice over leave the half group no pool, at any KV precision
    assert not kv8_can_matter(_result(gpus=8, slots=354, pool_gb=40, weights_gb=84), _clients(64))


def test_a_latent_cache_on_every_gpu_is_not_split_by_the_half_group() -> None:
    # MLA: each of the 4 GPUs holds the whole cache (copies 4). On 2 GPUs each still holds it
    # whole: 64 × 0.5 = 32 GB a GPU at 16 bits, 16 at 8, against a 20 GB pool
    r = _result(gpus=4, slots=500, pool_gb=60.0, weights_gb=40.0, copies=4.0)
    assert kv8_can_matter(r, _clients(64))
    # split as a GQA cache would be, 16 GB a GPU at 16 bits would already fit: no tip
    assert not kv8_can_matter(_result(gpus=4, slots=500, pool_gb=60.0, weights_gb=40.0),
                              _clients(64))  # fmt: skip


def _serving_tips(client: TestClient, gpu: str, n: int, clients: int) -> list[str]:
    body = {
        "workload": {"preset": "llama-3.3-70b", "task": "serving", "runtime": "vllm",
                     "serving": {"concurrent_requests": clients, "prompt_tokens": 1000,
                                 "output_tokens": 1000}},
        "gpu": gpu, "num_gpus": n,
    }  # fmt: skip
    r = client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    return list(r.json()["result"]["tips"])


def test_the_answer_drops_the_tip_where_the_cache_holds_the_load_many_times(
    read_client: TestClient,
) -> None:
    roomy = _serving_tips(read_client, "h200-sxm", 4, 64)
    assert any("far more requests than the load" in t for t in roomy)
    assert not any(TIP in t for t in roomy)
    # the same group at a load that fills most of its slots keeps it
    assert any(TIP in t for t in _serving_tips(read_client, "h100-sxm", 4, 200))
