"""The catalog's columns (app/domain/fleet.py) against the scalar code they replace."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import numpy as np

from app.domain import evaluate as ev
from app.domain import fleet


def test_the_fewest_cards_are_min_gpus_for_every_card() -> None:
    """fleet._fewest over a column of usable memories is ev.min_gpus card by card (for a job
    that does not fit on one card), powers of two and edges included."""
    rng = random.Random(0)
    cases = [
        (16.0, 1.0, 15.0),
        (16.0, 1.0, 8.5),
        (16.0, 1.0, 1.0),
        (16.0, 1.0, 0.5),
        (9.0, 1.0, 5.0),
    ]
    for _ in range(2000):
        fw = rng.uniform(0.1, 3.0)
        cases.append((rng.uniform(1.0, 900.0), fw, rng.uniform(0.0, 200.0)))
    for total, fw, avail in cases:
        if total <= avail:
            continue
        one: Any = SimpleNamespace(total=total, framework=fw)
        want, _ = ev.min_gpus(None, None, "cuda", False, 1 << 40, one=one, avail=avail)  # type: ignore[arg-type]
        got = int(fleet._fewest(np.array([total]), np.array([fw]), np.array([avail]))[0])
        assert got == (want or 0), (total, fw, avail)
