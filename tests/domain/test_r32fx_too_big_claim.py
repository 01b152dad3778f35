"""``too_big`` works out the runtime's claim and startup reserve once and passes them to
``shown_memory`` (which had worked both out again): a refactor, the reason's words unchanged
whether the caller holds the usable memory (the catalog snapshot) or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain.units import vram
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import RULES, llm_inference

DATA = Path(__file__).resolve().parents[2] / "data"
RTX3060 = next(g for g in read_gpu_specs(DATA) if g.slug == "rtx-3060-12gb")


def _ctx() -> tuple[ev.Context, ev.WorkloadSpec]:
    work = llm_inference(runtime="vllm", efficiency=load_efficiency(DATA), batch_size=8)
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=1)), work


def test_the_reason_is_the_same_with_the_usable_memory_given_or_not() -> None:
    ctx, work = _ctx()
    total = 17.5  # GB: more than the card holds
    usable = ev.usable_gb(RTX3060, work)
    own = ev.too_big(RTX3060, ctx, work, total, 1)
    given = ev.too_big(RTX3060, ctx, work, total, 1, usable)
    assert own == given and own.code == "does_not_fit"
    need, claim = ev.shown_memory(RTX3060, work, total)
    assert f"needs {vram(need):,.1f} GiB on one GPU" in own.reason
    assert f"{vram(claim):.1f} GiB usable" in own.reason


def test_the_claim_and_the_reserve_are_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, work = _ctx()
    calls: dict[str, int] = {"claimed_gb": 0, "startup_reserve_gb": 0}
    for name in calls:
        real = getattr(ev, name)

        def counted(*a: object, _real=real, _name=name, **k: object) -> float:
            calls[_name] += 1
            return float(_real(*a, **k))

        monkeypatch.setattr(ev, name, counted)
    ev.too_big(RTX3060, ctx, work, 17.5, 1)
    assert calls == {"claimed_gb": 1, "startup_reserve_gb": 1}


def test_shown_memory_takes_the_figures_it_is_given() -> None:
    _, work = _ctx()
    assert ev.shown_memory(RTX3060, work, 10.0, claim=11.0, reserve=0.5) == (10.5, 11.0)
    assert ev.shown_memory(RTX3060, work, 10.0) == (
        10.0 + ev.startup_reserve_gb(RTX3060, work),
        ev.claimed_gb(RTX3060, work),
    )
