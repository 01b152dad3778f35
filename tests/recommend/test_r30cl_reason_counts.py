"""r30 review: an answer with no row counted its exclusions with the code's singular verb
("72 filtered out, 45 does not fit"); the verb now agrees with the count."""

from __future__ import annotations

import pytest

from app.recommend.schemas import ExclusionCode
from app.recommend.whatif import reason_count


@pytest.mark.parametrize(
    ("code", "n", "said"),
    [
        ("does_not_fit", 45, "45 do not fit"),
        ("does_not_fit", 1, "1 does not fit"),
        ("misses_targets", 3, "3 miss targets"),
        ("misses_deadline", 1, "1 misses deadline"),
        ("filtered_out", 72, "72 filtered out"),
        ("over_budget", 2, "2 over budget"),
    ],
)
def test_the_verb_agrees_with_the_count(code: str, n: int, said: str) -> None:
    assert reason_count(code, n) == said


def test_no_code_keeps_a_singular_verb_in_the_plural() -> None:
    for code in ExclusionCode.__args__:  # type: ignore[attr-defined]
        words = reason_count(code, 2).split()
        assert words[1] not in ("does", "misses"), code
