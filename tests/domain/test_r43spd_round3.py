"""figures.round3 is round(v, 3), to the last bit and the sign of a zero (issue 21's speed: the
rows' memory figures), over random magnitudes, halves at the third place, their neighbours and
figures too large for the fast path."""

from __future__ import annotations

import math
import random

from app.domain.figures import round3


def _same(v: float) -> bool:
    got, want = round3(v), round(v, 3)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def test_round3_is_round_to_three_places() -> None:
    rng = random.Random(43)
    values = [rng.uniform(-1, 1) * 10 ** rng.uniform(-6, 13) for _ in range(200_000)]
    halves = [(k + 0.5) / 1000.0 for k in range(-5000, 5000)]
    near = [math.nextafter(h, s) for h in halves for s in (math.inf, -math.inf)]
    edges = [0.0, -0.0, 0.0004, -0.0004, 0.0005, -0.0005, 1e9, -1e9, 1e6 + 0.0005, 2.675]
    assert all(_same(v) for v in [*values, *halves, *near, *edges])
