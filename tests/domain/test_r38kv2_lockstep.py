"""Requests started together under on-demand KV admission (serving.lockstep): their caches grow
in step, fill the pool at once, and the newest are preempted and prefilled again. The expected
count and recompute, the words a plan says them in, and the TensorRT-LLM policy a benchmark
states (efficiency.TRTLLM_CAPACITY_POLICIES; issue 21)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import burst, efficiency
from app.domain import serving as sv
from app.domain.efficiency import usable_gb
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency
from benchmarks import serving_accuracy

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)
H100 = next(g for g in read_gpu_specs(DATA) if g.slug == "h100-sxm")
LLAMA8 = load_presets(DATA)["llama-3.1-8b"].model


def _vllm(users: int) -> tuple[sv.ServingConfig, sv.RuntimeProfile, sv.ServingLoad]:
    """Llama 3.1 8B on one H100 under vLLM at the max_num_seqs a plan deploys, 1,000 / 1,000."""
    load = sv.ServingLoad(1000, 1000, concurrent_requests=users)
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", "vllm")
    rt = serving_accuracy.runtime_of(H100, "vllm", TABLE)
    return cfg, sv.planned_runtime(H100, LLAMA8, cfg, load, rt, usable_gb(H100)), load


def test_requests_whose_whole_length_fits_are_never_preempted() -> None:
    ls = sv.lockstep(100, 128, 4096, 100 * 4224)
    assert (ls.preempted, ls.whole, ls.recompute_tokens) == (0, 100, 0.0)
    assert ls.mean_running == 100.0


def test_started_together_the_pool_fills_and_the_newest_are_recomputed() -> None:
    # 128 requests of 128 + 4,096 on a pool of 100 whole ones (trtllm-bench's rounded-up batch):
    # full at 422,400 ÷ 128 − 128 = 3,172 tokens, then one fewer each time 100 ≤ k < 128 fill it
    pool = 100 * 4224
    ls = sv.lockstep(128, 128, 4096, pool)
    assert ls.full_from == pytest.approx(3172.0)
    assert (ls.admitted, ls.whole, ls.preempted) == (128, 100, 28)
    assert ls.preempted_share == pytest.approx(28 / 128)
    # the k-th to go holds pool ÷ k: its prompt and its output so far, prefilled again
    assert ls.recompute_tokens == pytest.approx(sum(pool / k for k in range(101, 129)) / 128)
    # 128 run until the pool is full, then pool ÷ (128 + t) of them to the end
    mean = (128 * 3172 + pool * math.log(4224 / 3300)) / 4096
    assert ls.mean_running == pytest.approx(mean)
    assert 100 < ls.mean_running < 128


def test_prompts_admitted_over_the_whole_output_hold_the_steady_states_half() -> None:
    # a step budget that admits the batch over its whole output spreads their ages evenly:
    # the pool then holds prompt + half the output each (efficiency.ON_DEMAND_OUTPUT_SHARE)
    pool = 300 * 1500.0
    spread = sv.lockstep(300, 1000, 1000, pool, step_tokens=300.0)
    assert spread.preempted == 0
    together = sv.lockstep(300, 1000, 1000, pool)
    assert together.preempted == 300 - int(pool // 2000)


def test_no_more_are_admitted_than_their_prompts_fit() -> None:
    ls = sv.lockstep(1000, 500, 500, 10_000)
    assert ls.admitted == 20 and ls.whole == 10 and ls.preempted == 10


def test_the_expected_count_matches_a_drained_wave() -> None:
    # the same 256 requests drained step by step (app/domain/burst.py, vLLM V1's scheduler)
    # preempt as many as the expected-value sweep counts
    cfg, rt, load = _vllm(256)
    res = sv.evaluate(H100, LLAMA8, cfg, load, runtime=rt, usable_gb=usable_gb(H100))
    said = [n for n in res.notes if "preempts" in n]
    assert len(said) == 1 and "32 of 256 (12%) are preempted" in said[0]
    wave = dataclasses.replace(rt, max_batch=256)
    d = burst.evaluate(
        H100, LLAMA8, cfg, burst.fixed(256, 1000, 1000), runtime=wave, usable_gb=usable_gb(H100)
    )
    assert d.preemptions == 32


def test_the_plan_prices_the_recompute_below_its_steady_figure() -> None:
    cfg, rt, load = _vllm(296)
    res = sv.evaluate(H100, LLAMA8, cfg, load, runtime=rt, usable_gb=usable_gb(H100))
    (said,) = [n for n in res.notes if "preempts" in n]
    assert "Started together" in said and "prefill ~" in said
    steady = res.output_tokens_per_s or 0.0
    together = float(said.split("tokens again each, ~")[1].split(" output")[0].replace(",", ""))
    assert 0.8 * steady < together < steady
    assert "a cap of 222 running requests a replica avoids it" in said


def test_recompute_is_prompt_work_on_every_step() -> None:
    cfg, rt, _load = _vllm(200)
    eng = sv.replica(H100, LLAMA8, cfg, rt.on(H100), 0.88, sv.DEFAULT_COMPUTE)
    plain = sv._solve(eng, rt, 200.0, None, 1000, 1000, 200, 1000)
    none = sv._solve(eng, rt, 200.0, None, 1000, 1000, 200, 1000, recompute=0.0)
    more = sv._solve(eng, rt, 200.0, None, 1000, 1000, 200, 1000, recompute=500.0)
    assert plain is not None and none is not None and more is not None
    assert none.rate == plain.rate
    assert more.rate < plain.rate and more.itl > plain.itl


def test_trtllm_policies_map_to_their_admission_rules() -> None:
    pol = efficiency.TRTLLM_CAPACITY_POLICIES
    assert pol["GUARANTEED_NO_EVICT"] == efficiency.RESERVE_FULL
    assert pol["MAX_UTILIZATION"].on_demand
    # the runtime row names trtllm-serve's default; a run that states MAX_UTILIZATION is on demand
    assert TABLE.serving["tensorrt-llm"].kv_admission == efficiency.RESERVE_FULL
    cfg = sv.ServingConfig(1, 1, "fp8", "fp8", "tensorrt-llm")
    stated = serving_accuracy.evaluate_one(
        H100, LLAMA8, cfg, 1000, 1000, None, TABLE, "trtllm-bench",
        capacity_policy="MAX_UTILIZATION",
    )  # fmt: skip
    assert stated.kv_admission.on_demand


def test_a_trtllm_bench_row_drains_the_documents_request_count() -> None:
    meta = {"num_requests": {"128/4096": 1500, "1000/1000": 3000}}
    assert serving_accuracy._num_prompts({"isl": 128, "osl": 4096}, meta) == 1500
    assert serving_accuracy._num_prompts({"isl": 1, "osl": 1, "num_prompts": 7}, meta) == 7
    with pytest.raises(KeyError):
        serving_accuracy._num_prompts({"isl": 2048, "osl": 2048}, meta)


def test_the_running_batch_advances_at_once_and_keeps_admission_order() -> None:
    run = burst._Running()
    seqs = [burst._Seq(burst.Request(10, n), 0, 10, n, False) for n in (5, 3, 5)]
    for s in seqs:
        run.add(s)
    assert run.least_left() == 3 and run.context_sum() == 30
    run.clock += 3
    (done,) = run.finish()
    assert done is seqs[1] and (done.context, done.left) == (13, 0)
    assert len(run) == 2 and run.context_sum() == 26
    newest = run.pop_newest()  # preempted: the last admitted, its counters brought up to date
    assert newest is seqs[2] and (newest.context, newest.left) == (13, 2)
    run.clock += 2
    assert [s.context for s in run.finish()] == [15] and not run
