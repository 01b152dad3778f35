"""Random arrivals wait for a KV-cache slot (Erlang C, M/M/c) before their first token: a plan
run at 97 % of its slots had been said to meet a p95 time-to-first-token target."""

from __future__ import annotations

import math

import pytest

from app.domain import serving as sv
from tests.domain.fixtures import H100
from tests.domain.test_serving import LLAMA8, cfg, run


def _erlang_c_by_sum(c: int, a: float) -> float:
    """The textbook sum: C = (aᶜ/c! × c/(c − a)) ÷ (Σₖ₍₀…c₋₁₎ aᵏ/k! + aᶜ/c! × c/(c − a))."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


@pytest.mark.parametrize(("c", "a"), [(1, 0.5), (2, 1.0), (4, 3.88), (16, 12.0), (64, 60.0)])
def test_erlang_c_is_the_textbook_sum(c: int, a: float) -> None:
    assert sv.erlang_c(c, a) == pytest.approx(_erlang_c_by_sum(c, a), rel=1e-9)


def test_a_fractional_slot_count_lies_between_its_neighbours() -> None:
    assert sv.erlang_c(4, 3.0) > sv.erlang_c(4.5, 3.0) > sv.erlang_c(5, 3.0)
    assert sv.erlang_c(4.0001, 3.0) == pytest.approx(sv.erlang_c(4, 3.0), rel=1e-3)


def test_four_slots_at_3_88_wait_a_minute() -> None:
    # the review's case: 0.5 requests/s, each holding a slot 7.76 s, 4 slots
    mean, p95 = sv.slot_wait(4, 0.5 * 7.76, 0.5, 0.95)
    assert sv.erlang_c(4, 3.88) == pytest.approx(0.934, abs=0.002)
    assert mean == pytest.approx(0.934 / (4 / 7.76 - 0.5), rel=0.01)  # ~60 s
    # P(W > t) = C e^(−(cμ − λ) t) = 5 % at the 95th percentile
    assert sv.erlang_c(4, 3.88) * math.exp(-(4 / 7.76 - 0.5) * p95) == pytest.approx(0.05)


def _few_slots() -> tuple[sv.ServingLoad, sv.ServingResult]:
    """A long-context load that leaves an H100 a handful of KV slots, and its saturation."""
    load = sv.ServingLoad(100_000, 2_000, concurrent_requests=1)
    one = run(H100, LLAMA8, cfg(), load)
    assert 2 <= one.max_concurrency <= 8
    return load, one


def test_a_rate_near_the_slots_misses_a_p95_first_token_target() -> None:
    load, one = _few_slots()
    sat = one.max_output_tokens_per_s / load.output_tokens  # requests/s at saturation
    light = run(H100, LLAMA8, cfg(), sv.ServingLoad(100_000, 2_000, requests_per_s=0.05 * sat))
    near = run(H100, LLAMA8, cfg(), sv.ServingLoad(100_000, 2_000, requests_per_s=0.95 * sat))
    assert light.ttft_p95_ms is not None and near.ttft_p95_ms is not None
    assert near.ttft_ms is not None and light.ttft_ms is not None
    target = sv.ServingTargets(ttft_ms=3 * light.ttft_p95_ms, itl_ms=1e6, percentile="p95")
    assert sv.meets(light, target)[0]
    ok, misses = sv.meets(near, target)
    assert not ok and "TTFT" in misses[0]
    # the wait is Erlang C's: n = λ × hold running of c slots, hold from Little's law
    assert near.requests_per_s is not None and near.itl_ms is not None
    lam, c = near.requests_per_s, one.max_concurrency
    # a slot is held from arrival at the server to the last token: TTFT less the slot wait
    # (W) plus the other 1,999 tokens' steps; W and the running count found together
    lo, hi = 0.0, near.ttft_ms / 1e3
    for _ in range(100):  # bisection: the larger W, the fewer running, the shorter the wait
        wait = (lo + hi) / 2
        running = lam * (near.ttft_ms / 1e3 - wait + 1_999 * near.itl_ms / 1e3)
        lo, hi = (wait, hi) if sv.slot_wait(c, running, lam, 0.95)[0] > wait else (lo, wait)
    assert abs(hi - lo) < 1e-6  # a consistent wait exists
    assert 0.8 * c < running < c
    assert wait > 60.0  # seconds: the slots are nearly always all busy
    assert sv.erlang_c(c, running) > 0.5


def test_a_closed_loop_keeps_its_slot_wait() -> None:
    # N clients beyond the slots wait (N − cap) ÷ λ, as before: no Erlang C on a closed loop
    _, one = _few_slots()
    cap = one.max_concurrency
    over = run(H100, LLAMA8, cfg(), sv.ServingLoad(100_000, 2_000, concurrent_requests=3 * cap))
    assert over.requests_per_s is not None and over.ttft_ms is not None
    at_cap = run(H100, LLAMA8, cfg(), sv.ServingLoad(100_000, 2_000, concurrent_requests=cap))
    assert at_cap.ttft_ms is not None
    queue = 2 * cap / over.requests_per_s
    assert over.ttft_ms - at_cap.ttft_ms == pytest.approx(queue * 1e3, rel=0.05)
