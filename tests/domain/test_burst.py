"""A burst of requests sent at once (app/domain/burst.py): its drain by the continuous-batching
scheduler, priced step by step by the serving model's one step function; and the ShareGPT
lengths vLLM's sampler draws (data/request_lengths.yaml)."""

from __future__ import annotations

import statistics

import pytest

from app.domain import burst
from app.domain import serving as sv
from app.shipped.rules import load_efficiency, load_length_models
from tests.domain.fixtures import H100
from tests.domain.test_serving import LLAMA8, cfg

TABLE = load_efficiency()
SHAREGPT = load_length_models()["sharegpt"]


def _rt(name: str = "vllm") -> sv.RuntimeProfile:
    return sv.runtime_profile(TABLE, name, TABLE.profile(H100, "cuda", name, "bf16", "decode"))


def _drain(requests: list[burst.Request], name: str = "vllm") -> burst.Drain:
    return burst.evaluate(
        H100, LLAMA8, cfg(rt=name), requests, runtime=_rt(name), usable_gb=H100.memory_gb
    )


def _saturation(p: int, o: int) -> float:
    load = sv.ServingLoad(p, o, concurrent_requests=1)
    res = sv.evaluate(H100, LLAMA8, cfg(), load, runtime=_rt(), usable_gb=H100.memory_gb)
    return res.max_output_tokens_per_s


def test_a_burst_of_equal_requests_drains_near_the_saturation_rate() -> None:
    """Equal lengths finish in waves that the next prompts fill: the burst's mean rate is the
    steady state's less the ramp up and the drain of the last wave (a few per cent at 2,000
    requests), never above it by much."""
    d = _drain(burst.fixed(2000, 256, 256))
    sat = _saturation(256, 256)
    assert d.output_tokens == 2000 * 256
    assert 0.8 * sat <= d.mean_output_tokens_per_s <= 1.05 * sat
    assert d.makespan_s == pytest.approx(d.output_tokens / d.mean_output_tokens_per_s)


def test_a_long_tail_takes_longer_than_its_mean_rate_implies() -> None:
    """Same request count and the same mean lengths, but ShareGPT's spread: the longest answers
    decode at a small batch after the others are done, so the makespan is longer and the mean
    rate below the equal-length burst's, while the peak second is above that mean."""
    tail = _drain(burst.sample(SHAREGPT, 1000))
    mean_p = round(statistics.mean(r.prompt for r in burst.sample(SHAREGPT, 1000)))
    mean_o = round(statistics.mean(r.output for r in burst.sample(SHAREGPT, 1000)))
    even = _drain(burst.fixed(1000, mean_p, mean_o))
    assert tail.makespan_s > 1.1 * even.makespan_s
    assert tail.mean_output_tokens_per_s < even.mean_output_tokens_per_s
    assert tail.peak_output_tokens_per_s > 1.3 * tail.mean_output_tokens_per_s


def test_the_makespan_grows_with_the_burst() -> None:
    spans = [_drain(burst.sample(SHAREGPT, n)).makespan_s for n in (50, 200, 800, 1600)]
    assert spans == sorted(spans) and spans[0] < spans[-1] / 4


def test_one_request_alone_is_its_prefill_and_its_decode_steps() -> None:
    """A burst of one: the prompt's steps, then one decode step per further token at batch 1 —
    what the steady state's one-user point prices (time to first token and inter-token time)."""
    d = _drain([burst.Request(512, 128)])
    one = sv.evaluate(
        H100, LLAMA8, cfg(), sv.ServingLoad(512, 128, concurrent_requests=1), runtime=_rt(),
        usable_gb=H100.memory_gb,
    )  # fmt: skip
    assert one.itl_ms is not None and one.ttft_ms is not None
    expected = (one.ttft_ms - one.itl_ms / 2 + 127 * one.itl_ms) / 1e3
    assert d.makespan_s == pytest.approx(expected, rel=0.05)
    assert d.mean_ttft_s == pytest.approx((one.ttft_ms - one.itl_ms / 2) / 1e3, rel=0.05)


def test_a_full_pool_preempts_and_the_burst_still_drains() -> None:
    """A pool of 4,000 tokens and prompts of 900 tokens with 600-token answers: four run,
    their growth overflows the pool, the newest is preempted and finishes later; every token
    is produced once."""
    eng = sv.replica(H100, LLAMA8, cfg(), _rt().on(H100), 0.88, sv.DEFAULT_COMPUTE)
    d = burst.drain(eng, burst.fixed(12, 900, 600), burst.Limits(256, 8192, 4000.0))
    assert d.preemptions > 0 and d.output_tokens == 12 * 600
    assert d.peak_batch <= 4


def test_a_request_larger_than_the_pool_is_refused() -> None:
    eng = sv.replica(H100, LLAMA8, cfg(), _rt().on(H100), 0.88, sv.DEFAULT_COMPUTE)
    with pytest.raises(burst.BurstError):
        burst.drain(eng, [burst.Request(5000, 10)], burst.Limits(256, 8192, 4000.0))
    with pytest.raises(burst.BurstError):
        burst.drain(eng, [burst.Request(3990, 100)], burst.Limits(256, 8192, 4000.0))


def test_sharegpt_lengths_keep_the_samplers_filters_and_means() -> None:
    """vLLM's filters (4 ≤ prompt ≤ 1024, output ≥ 4, prompt + output ≤ 2048), the sourced
    means, a long tail (median well under the mean), and the same burst on every call."""
    reqs = burst.sample(SHAREGPT, 1000)
    assert reqs == burst.sample(SHAREGPT, 1000)
    assert all(4 <= r.prompt <= 1024 and r.output >= 4 for r in reqs)
    assert all(r.prompt + r.output <= 2048 for r in reqs)
    prompts, outputs = [r.prompt for r in reqs], [r.output for r in reqs]
    assert statistics.mean(prompts) == pytest.approx(SHAREGPT.mean_prompt, rel=0.01)
    assert statistics.mean(outputs) == pytest.approx(SHAREGPT.mean_output, rel=0.01)
    assert statistics.median(outputs) < 0.8 * statistics.mean(outputs)
    assert max(outputs) > 5 * statistics.mean(outputs)
    # the order is shuffled: the first hundred are not the shortest prompts
    assert statistics.mean(prompts[:100]) > 0.5 * statistics.mean(prompts)
    # a run's own means where it states them (GPUStack: 217 / 201)
    own = burst.sample(SHAREGPT, 1000, 217, 201)
    assert statistics.mean(r.output for r in own) == pytest.approx(201, rel=0.01)


def test_gpustacks_totals_agree_with_the_sourced_means() -> None:
    """A check, not a fit: GPUStack's ShareGPT runs (Qwen3 tokenizer) state 217 input and
    ~201 generated tokens a request; the shipped means (vLLM PR #18566, Llama 3 tokenizer) are
    within 6 %."""
    assert 217 / SHAREGPT.mean_prompt == pytest.approx(1.0, abs=0.06)
    assert 201 / SHAREGPT.mean_output == pytest.approx(1.0, abs=0.03)
