"""Serving's value is output tokens per dollar (issue #23): 'best_value' ranks serving rows by
the inverse of their blended $ per million output tokens, across cards (rank.rank) and for a
card's own shape (rank.serving_pick); 'cheapest' keeps the lowest $/h; 'balanced' keeps
ITL^w × ($/h)^(1−w) (tokens per dollar would count the speed twice). Under a rate load every shape produces the same tokens, so the
value orders as 1 ÷ $/h: the order before the change."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import rank, serving_step
from app.domain import serving as sv
from app.domain.workload import ServingSpec, WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, LLAMA3_8B, RULES

TABLE = load_efficiency()
USERS = ServingSpec(1000, 300, concurrent_requests=8, ttft_ms_target=2000.0, itl_ms_target=200.0)
RATE = ServingSpec(1000, 300, requests_per_s=0.7, ttft_ms_target=2000.0, itl_ms_target=200.0)


def _ctx(spec: ServingSpec, **limits: object) -> ev.Context:
    work = WorkloadSpec(
        task="serving", model=LLAMA3_8B, runtime="vllm", efficiency=TABLE, serving=spec
    )
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(**limits))  # type: ignore[arg-type]


def _meeting(gpu, ctx: ev.Context) -> list[rank.Candidate]:
    planned = ev.plan(gpu, ctx)
    assert not isinstance(planned, ev.Exclusion)
    return [rank.Candidate.of(r) for r in (ev.evaluate(c, ctx) for c in planned) if r.ok]


_BASE = {"users": _meeting(H100, _ctx(USERS))[0], "rate": _meeting(H100, _ctx(RATE))[0]}


def _shape(
    load: str, gpu, usd_per_hour: float, tokens_per_s: float, itl_ms: float, n: int = 1
) -> rank.Candidate:
    """A real serving candidate of ``load`` with its price, output rate, ITL and GPU count
    replaced (under the rate load the rate stays the load's: every shape carries it)."""
    base = _BASE[load]
    s = base.serving
    assert s is not None
    result = dataclasses.replace(s.result, output_tokens_per_s=tokens_per_s, itl_ms=itl_ms)
    price = dataclasses.replace(s.price, usd_per_hour=usd_per_hour)
    served = dataclasses.replace(s, result=result, price=price)
    perf = dataclasses.replace(base.perf, num_gpus=n)
    return dataclasses.replace(base, gpu=gpu, serving=served, perf=perf)


def _per_million(c: rank.Candidate) -> float:
    """The row's blended $/M output tokens, as app/recommend/serving.py computes it."""
    assert c.serving is not None
    out = costs.usd_per_million_tokens(c.serving.hourly, c.serving.result.output_tokens_per_s)
    assert out is not None
    return out


def _slugs(cands: list[rank.Candidate]) -> list[str]:
    return [c.gpu.slug for c in cands]


def test_best_value_ranks_serving_by_tokens_per_dollar_cheapest_by_the_hour() -> None:
    # H100: $2/h for 1,000 tokens/s ($0.56/M); A100 (standing for a faster card): $3/h for
    # 2,000 tokens/s ($0.42/M). The hour and the $/M disagree.
    slow = _shape("users", H100, 2.0, 1000.0, 20.0)
    fast = _shape("users", A100, 3.0, 2000.0, 18.0)
    best = rank.rank([slow, fast], "best_value")
    assert _slugs(best) == [A100.slug, H100.slug]
    per_m = [_per_million(c) for c in best]
    assert per_m == sorted(per_m)
    # the score is tokens per dollar over the best's: $/M of the best over this row's
    assert best[1].score == pytest.approx(per_m[0] / per_m[1], abs=1e-6)
    assert rank.metric(fast, "best_value") == pytest.approx(2000.0 * 3600 / 3.0)
    cheap = rank.rank([slow, fast], "cheapest")
    assert _slugs(cheap) == [H100.slug, A100.slug]
    assert cheap[1].score == pytest.approx(2.0 / 3.0, abs=1e-6)
    assert rank.metric(slow, "cheapest") == pytest.approx(1 / 2.0)


def test_balanced_counts_the_speed_once() -> None:
    # Under a concurrency load the tokens per dollar grow with the speed, so balanced mixes
    # the speed with the hour's price, ITL^w × ($/h)^(1−w), not with the tokens per dollar:
    # at w = ½ the $2 card leads (√(50 × ½) = 5 against √(55.6 × ⅓) = 4.3), where
    # best value, 1.8 M against 2.4 M tokens per dollar, puts the $3 card first.
    slow = _shape("users", H100, 2.0, 1000.0, 20.0)
    fast = _shape("users", A100, 3.0, 2000.0, 18.0)
    for w in (0.3, 0.5, 0.8):
        mix = {
            c.gpu.slug: (1e3 / itl) ** w * (1 / hour) ** (1 - w)
            for c, hour, itl in ((slow, 2.0, 20.0), (fast, 3.0, 18.0))
        }
        got = rank.rank([slow, fast], "balanced", w)
        assert _slugs(got) == sorted(mix, key=lambda s: -mix[s])
        assert rank.metric(fast, "balanced", w) == pytest.approx(mix[A100.slug])
    assert _slugs(rank.rank([slow, fast], "balanced")) == [H100.slug, A100.slug]
    assert _slugs(rank.rank([slow, fast], "best_value")) == [A100.slug, H100.slug]


@pytest.mark.parametrize("objective", ["best_value", "balanced"])
def test_under_a_rate_load_the_value_orders_as_the_hour(objective: str) -> None:
    # every shape that meets the targets produces the rate's tokens: the value is 1 ÷ $/h
    # times one constant, so the order and the scores are those of 1 ÷ $/h
    s = _BASE["rate"].serving
    assert s is not None and s.load_output_tokens_per_s == pytest.approx(0.7 * 300)
    tokens = s.load_output_tokens_per_s
    assert tokens is not None
    cands = [
        _shape("rate", H100, 2.0, tokens, 20.0),
        _shape("rate", A100, 3.0, tokens, 12.0),
    ]
    got = rank.rank(list(cands), objective)
    w = rank.DEFAULT_SPEED_WEIGHT
    old = {  # before 2026-12-03: value = 1 ÷ $/h
        c.gpu.slug: (1e3 / itl) ** w * (1 / hour) ** (1 - w)
        if objective == "balanced"
        else 1 / hour
        for c, hour, itl in ((cands[0], 2.0, 20.0), (cands[1], 3.0, 12.0))
    }
    assert _slugs(got) == sorted(old, key=lambda x: -old[x])
    top = max(old.values())
    for c in got:
        assert c.score == pytest.approx(old[c.gpu.slug] / top, abs=1e-6)


def test_each_cards_shape_is_picked_by_tokens_per_dollar_under_best_value() -> None:
    one = _shape("users", H100, 3.0, 1000.0, 20.0, n=1)  # 1.2 M tokens per $
    one_fast = _shape("users", H100, 3.5, 1400.0, 15.0, n=1)  # 1.44 M per $
    two = _shape("users", H100, 4.0, 1800.0, 12.0, n=2)  # 1.62 M per $: an instance price
    shapes = [one, one_fast, two]
    picks = {o: min(shapes, key=rank.serving_pick(o)) for o in rank.OBJECTIVES}
    assert picks["cheapest"] is one  # the least money that carries the load
    assert picks["best_value"] is two  # the most output tokens per dollar
    assert picks["balanced"] is one  # the fewest GPUs, then the cheapest
    assert picks["fastest"] is two
    ((chosen, rest),) = rank.best_per_card(list(shapes), "best_value")
    assert chosen is two and set(map(id, rest)) == {id(one), id(one_fast)}


def test_under_a_rate_load_each_objective_picks_the_shape_it_picked_before() -> None:
    s = _BASE["rate"].serving
    assert s is not None and s.load_output_tokens_per_s is not None
    k = s.load_output_tokens_per_s
    # the solve's own rates differ in the last bit (rate ÷ replicas × replicas); at one price
    # the faster shape must still win, not the rounding
    a = _shape("rate", H100, 3.0, k * (1 + 2e-16), 20.0, n=2)
    b = _shape("rate", H100, 3.0, k * (1 - 2e-16), 15.0, n=2)
    c = _shape("rate", H100, 2.5, k, 25.0, n=2)
    d = _shape("rate", H100, 6.0, k, 10.0, n=4)
    shapes = [a, b, c, d]

    def old(objective: str):  # the keys before 2026-12-03
        def hour(x: rank.Candidate) -> float:
            assert x.serving is not None and x.serving.hourly is not None
            return x.serving.hourly

        def itl(x: rank.Candidate) -> float:
            assert x.serving is not None and x.serving.result.itl_ms is not None
            return x.serving.result.itl_ms

        if objective == "balanced":
            return lambda x: (x.n, hour(x), itl(x))
        return lambda x: (hour(x), itl(x), x.n)

    for objective in ("best_value", "balanced", "cheapest"):
        want = sorted(shapes, key=old(objective))
        assert sorted(shapes, key=rank.serving_pick(objective)) == want, objective
    assert min(shapes, key=rank.serving_pick("best_value")) is c
    assert min(shapes, key=rank.serving_pick("balanced")) is c


def test_the_skipped_shapes_hold_the_best_value_pick_when_a_larger_instance_is_cheaper() -> None:
    # H100 rented one GPU at $3/h or eight at $16/h: six or more replicas cost less each than
    # one (serving_step.evaluate_card solves those for best value); up to 16 GPUs, so eight
    # replicas lie between the fewest that meet and the most (which is always solved)
    node = costs.CloudOffer("lab", "h100x1", 1, 3.0, None, "on-demand", "2026-11-01", "test")
    bulk = {
        H100.slug: costs.GpuOffers(
            (node, dataclasses.replace(node, instance_type="h100x8", gpus=8, usd_per_hour=16.0)),
            (),
        )
    }
    most = 3_600_000.0  # the API's largest target: the limits lifted
    for users in (64.0, 512.0, 2048.0):
        spec = dataclasses.replace(
            USERS, concurrent_requests=users, ttft_ms_target=most, itl_ms_target=most
        )
        ctx = dataclasses.replace(
            _ctx(spec, objective="best_value", acquisition="rent", max_gpus=16), offers=bulk
        )
        planned = ev.plan(H100, ctx)
        assert not isinstance(planned, ev.Exclusion)
        full = serving_step.evaluate_card(planned, ctx, every=True)
        some = serving_step.evaluate_card(planned, ctx, every=False)

        def pick(results: list[ev.ConfigResult]) -> object:
            cands = [rank.Candidate.of(r) for r in results if r.ok]
            ((chosen, _),) = rank.best_per_card(cands, "best_value")
            assert chosen.serving is not None
            return chosen.serving.result.config

        assert pick(some) == pick(full), users
        picked = pick(full)
        assert isinstance(picked, sv.ServingConfig)
        # 64 users: one replica on one GPU; from 512, eight on one 8-GPU node (sixteen on two
        # produce less than twice as much)
        assert picked.replicas == (1 if users == 64 else 8), users


@pytest.mark.parametrize("users", [1.0, 8.0, 64.0, 512.0])
def test_a_replicas_output_rate_does_not_grow_as_its_share_of_the_load_shrinks(
    users: float,
) -> None:
    """What evaluate_card's skip for best value rests on: r replicas produce at most r ÷ r₀
    times the tokens r₀ do (per group size and formats, under a concurrency load)."""
    spec = dataclasses.replace(USERS, concurrent_requests=users, ttft_ms_target=None)
    spec = dataclasses.replace(spec, itl_ms_target=None)
    ctx = _ctx(spec, max_gpus=16)
    planned = ev.plan(H100, ctx)
    assert not isinstance(planned, ev.Exclusion)
    groups: dict[tuple[object, ...], list[tuple[int, float]]] = {}
    for r in serving_step.evaluate_card(planned, ctx, every=True):
        if r.serving is None or r.serving.result.output_tokens_per_s is None:
            continue
        sh = r.serving.result.config
        key = (sh.gpus_per_replica, sh.weight_precision, sh.kv_precision)
        per = r.serving.result.output_tokens_per_s / sh.replicas
        groups.setdefault(key, []).append((sh.replicas, per))
    assert groups
    for rows in groups.values():
        rows.sort()
        pers = [p for _, p in rows]
        assert all(b <= a * (1 + 1e-9) for a, b in itertools.pairwise(pers)), rows
