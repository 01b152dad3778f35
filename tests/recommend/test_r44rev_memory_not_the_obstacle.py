"""An empty answer says how far memory keeps the job off the cards only where memory is what
stands in the way: where cards that hold the job as asked are out for another reason (here
the deadline) and no memory change brings a card in, the "Memory:" paragraph is noise. GPT-2
XL pretraining within 1 h (108 cards too slow, the laptop and Apple parts too small) had
closed on "the cheapest that does, every limit lifted: RTX 4090 … 12.8 days" (session 44's
audit)."""

from __future__ import annotations

from typing import Any

from tests.support import GPT2_XL_PRETRAIN, recommend_with, summary_of

PRETRAIN = GPT2_XL_PRETRAIN


def test_a_deadline_answer_does_not_blame_memory(shipped_catalog: Any) -> None:
    body = {"workload": PRETRAIN, "constraints": {"acquisition": "rent", "max_hours": 1}}
    answer = recommend_with(shipped_catalog, body)
    assert not answer.recommendations
    codes = {x.code for x in answer.excluded}
    assert {"misses_deadline", "does_not_fit"} <= codes  # both kinds of card are there
    assert answer.empty is not None
    assert "Memory:" not in answer.empty.message
    verdict = summary_of(answer).sentence
    assert "Memory:" not in verdict and "every limit lifted" not in verdict
    assert "to finish within 1 h it needs more GPUs" in verdict
