"""A balanced row's comparison with the lead (rank._versus) is its speed and value scores
against the lead's: it reads neither row's ranked figures, which only the other objectives'
words say (each had been worked out for every balanced row and dropped, ~20 k instructions a
row of the open question, issue 21). The words are what they were, under every objective."""

from __future__ import annotations

import pytest

from app.domain import rank
from tests.domain.fixtures import H100, MI300X
from tests.domain.test_r37lo_every_objective import _cand


def _ranked_line(c: rank.Candidate, lead: rank.Candidate, objective: str) -> str:
    return next(x for x in rank.explain(c, 2, lead, objective) if x.startswith("Ranked #2"))


def test_a_balanced_comparison_reads_no_ranked_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    amd, nv = _cand(MI300X), _cand(H100)
    amd.speed_score, amd.value_score = 0.9964, 0.5
    nv.speed_score, nv.value_score = 1.0, 0.25
    before = _ranked_line(amd, nv, "balanced")

    def unread(c: rank.Candidate) -> tuple[float, float | None, float | None]:
        raise AssertionError("a balanced comparison read the ranked figures")

    monkeypatch.setattr(rank, "ranked_figures", unread)
    got = _ranked_line(amd, nv, "balanced")
    assert got == before
    # the scores to as many places as keep them apart (0.996 is not the best's 1.00)
    assert got == (
        "Ranked #2 by balanced: speed 0.996 and value 0.500 of the best, against H100 SXM "
        "(1.000 and 0.250)."
    )


@pytest.mark.parametrize("objective", ["fastest", "best_value", "cheapest"])
def test_the_other_objectives_still_compare_their_ranked_figures(
    objective: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    amd, nv = _cand(MI300X), _cand(H100)
    read: list[str] = []
    figures = rank.ranked_figures

    def counted(c: rank.Candidate) -> tuple[float, float | None, float | None]:
        read.append(c.gpu.slug)
        return figures(c)

    monkeypatch.setattr(rank, "ranked_figures", counted)
    line = _ranked_line(amd, nv, objective)
    assert read[:2] == [amd.gpu.slug, nv.gpu.slug]
    assert ": at its range's low end, " in line  # the MI300X's low end, as before
