"""fleet.plan walks only the counts up to the most the card may span (the powers of two up to
``max_gpus``, COUNTS' first ``max_gpus.bit_length()``; COUNTS runs to 512), not all of COUNTS
filtered one by one: its plan is still ev.plan of the card, configuration by configuration,
at a cap that is no power of two, at one GPU, at the default and at beyond one server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.recommend.test_fast_paths import _context_for, plans_from_columns


@pytest.fixture
def catalog(shipped_catalog: Any) -> Any:
    gpus, offers, rules = shipped_catalog
    return list(gpus), offers, rules


@pytest.mark.parametrize("most", [1, 3, 6, 8, 32, 512])
@pytest.mark.parametrize("preset", ["llama-3-8b", "llama-3-70b"])
def test_a_plan_up_to_the_cap_is_plans_own(most: int, preset: str, catalog: Any) -> None:
    workload = {"preset": preset, "task": "inference", "batch_size": 4, "max_gpus": most}
    gpus, _, ctx = _context_for(workload, catalog, "balanced")
    _, plans = plans_from_columns(gpus, ctx)
    made = [got for got in plans if got is not None]
    assert made
    assert all(c.num_gpus <= most for got in made for c in got)
