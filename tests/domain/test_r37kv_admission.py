"""A serving runtime's KV admission rule is data (efficiency.KvAdmission): vLLM V1 and SGLang
allocate the cache on demand (a running request counted at its prompt + a share of its output),
TensorRT-LLM's default GUARANTEED_NO_EVICT reserves the whole prompt + output. A plan that runs
above the reserve-full count says it risks preemption (expert review, issue 21)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import efficiency
from app.domain import serving as sv
from app.domain.efficiency import usable_gb
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency
from benchmarks import serving_accuracy

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)
H100 = next(g for g in read_gpu_specs(DATA) if g.slug == "h100-sxm")
LLAMA8 = load_presets(DATA)["llama-3.1-8b"].model


def _planned(runtime: str, load: sv.ServingLoad) -> tuple[sv.ServingConfig, sv.RuntimeProfile]:
    """One H100 under ``runtime`` at the max_num_seqs a plan deploys (serving.planned_runtime)."""
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", runtime)
    rt = serving_accuracy.runtime_of(H100, runtime, TABLE)
    return cfg, sv.planned_runtime(H100, LLAMA8, cfg, load, rt, usable_gb(H100))


def _run(runtime: str, users: int, prompt: int = 1000, output: int = 1000) -> sv.ServingResult:
    load = sv.ServingLoad(prompt, output, concurrent_requests=users)
    cfg, rt = _planned(runtime, load)
    return sv.evaluate(H100, LLAMA8, cfg, load, runtime=rt, usable_gb=usable_gb(H100))


def test_each_runtime_carries_its_documented_admission_rule() -> None:
    assert TABLE.serving["vllm"].kv_admission == efficiency.KvAdmission("on_demand", 0.5)
    # SGLang: half the output held plus new_token_ratio's floor 0.7 x 0.14 of the other half
    sglang = TABLE.serving["sglang"].kv_admission
    assert sglang is not None and sglang.on_demand
    assert sglang.output_share == pytest.approx(0.5 + 0.5 * 0.7 * 0.14, abs=1e-3)
    assert TABLE.serving["tensorrt-llm"].kv_admission == efficiency.RESERVE_FULL
    # a runtime the data says nothing of reserves the whole request (the profile's default)
    cpp = sv.runtime_profile(TABLE, "llama.cpp")
    assert cpp.kv_admission == efficiency.RESERVE_FULL


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ({"policy": "lazy"}, "policy"),
        ({"policy": "reserve_full", "output_share": 0.5}, "whole output"),
        ({"policy": "on_demand", "output_share": 0.0}, "output_share"),
        ({"policy": "on_demand", "share": 0.5}, "unknown"),
    ],
)
def test_a_bad_admission_rule_is_refused_with_its_field(raw: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        efficiency._kv_admission("vllm", raw)


def test_on_demand_runs_the_requests_that_hold_prompt_plus_half_the_output() -> None:
    # Llama 3.1 8B on one H100 at 1,000 in / 1,000 out: the review's 224 whole requests
    res = _run("vllm", 256)
    full = res.reserve_full_concurrency
    assert full is not None and 215 <= full <= 230
    # the pool counted at 1,500 tokens a request, not 2,000: 4/3 as many, under max_num_seqs
    assert res.max_concurrency == pytest.approx(full * 2000 / 1500, abs=2)
    assert res.kv_held_gb == pytest.approx(res.kv_gb_per_request * 1500 / 2000, rel=1e-6)
    # 256 users all run: the first token is a prompt's time, not a queue's
    assert res.ttft_ms is not None and res.ttft_ms < 300
    # ... and the answer says they run above the whole-request count
    said = [n for n in res.notes if "preempts" in n]
    assert len(said) == 1 and f"above the {full}" in said[0] and "recomputes" in said[0]
    # the memory the running requests fill is what they hold on average
    assert res.kv_gb_per_gpu(256) == pytest.approx(256 * res.kv_held_gb)


def test_a_load_within_the_whole_request_count_carries_no_preemption_note() -> None:
    res = _run("vllm", 128)
    assert not [n for n in res.notes if "preempts" in n]


def test_guaranteed_no_evict_holds_only_whole_requests() -> None:
    # TensorRT-LLM's default policy: the running batch is the reserve-full count, and 256 users
    # beyond it queue for a slot (their first token waits), with no preemption to warn of
    res = _run("tensorrt-llm", 256)
    assert res.max_concurrency == res.reserve_full_concurrency
    assert res.kv_held_gb == res.kv_gb_per_request
    assert not [n for n in res.notes if "preempts" in n]
    assert any("wait for a slot" in n for n in res.notes)


def test_on_demand_still_needs_room_for_one_whole_request() -> None:
    # an answer as long as the pool: its average (prompt + half) fits, its end does not
    probe = _run("vllm", 1, 1000, 1000)
    pool_tokens = probe.reserve_full_concurrency or 0
    output = int(pool_tokens * 2000 * 1.3)
    res = _run("vllm", 1, 1000, output)
    assert not res.fits and res.max_concurrency == 0
    assert "no room for one request's KV cache" in (res.reason or "")


def test_trtllm_bench_bursts_keep_the_whole_request_count() -> None:
    # a run that states no capacity policy keeps the runtime's data default (trtllm-serve's
    # GUARANTEED_NO_EVICT): the whole-request count. The overview's tables state trtllm-bench's
    # MAX_UTILIZATION and are drained as bursts (tests/domain/test_r38kv2_lockstep.py)
    cfg = sv.ServingConfig(1, 1, "fp8", "fp8", "tensorrt-llm")
    bench = serving_accuracy.evaluate_one(
        H100, LLAMA8, cfg, 1000, 1000, None, TABLE, "trtllm-bench"
    )
    assert bench.kv_admission == efficiency.RESERVE_FULL
    bs, _ = serving_accuracy.trtllm_bench_settings(H100, LLAMA8, 1, "fp8", "fp8", 1000, 1000)
    full = bench.reserve_full_concurrency
    assert full is not None and bench.max_concurrency == full < bs
