"""Balanced's pick among one card's configurations on as many cards, where they are not all
weighed by time and money (bought cards, or an unpriced configuration): the faster schedule
of the same update, not the one with fewer savers whatever its speed. 64 bought RTX PRO 6000s
had been shown at 27 % scaling (FSDP over all 64 at micro-batches of 2 a GPU, one saver) where
checkpointing's HSDP at 8 a GPU (one saver too) ran 2.5× faster; a saver that changes the job
(8-bit AdamW) is still not taken for speed."""

from __future__ import annotations

from dataclasses import replace

from app.domain import rank
from tests.domain.fixtures import H100, candidate, llama31_8b_finetune


def _config(savers: tuple[str, ...], throughput: float) -> rank.Candidate:
    c = candidate(H100, llama31_8b_finetune(), n=8)
    return replace(c, savers=savers, acquisition="buy", perf=replace(c.perf, throughput=throughput))


def _pick(*group: rank.Candidate) -> rank.Candidate:
    ((chosen, _),) = rank.best_per_card(list(group), "balanced")
    return chosen


def test_the_faster_schedule_of_the_same_update_is_shown() -> None:
    slow = _config(("micro_batch",), 110_000.0)
    fast = _config(("checkpointing",), 280_000.0)
    assert _pick(slow, fast) is fast
    # more savers that only reschedule the update are no reason to run slower either
    fast_two = _config(("checkpointing", "micro_batch"), 250_000.0)
    assert _pick(slow, fast_two) is fast_two


def test_a_saver_that_changes_the_job_is_not_taken_for_speed() -> None:
    plain = _config(("micro_batch",), 100_000.0)
    adam8 = _config(("adam8bit",), 120_000.0)
    assert _pick(plain, adam8) is plain


def test_fewer_cards_still_come_first() -> None:
    few = _config(("micro_batch",), 100_000.0)
    many = replace(few, perf=replace(few.perf, num_gpus=16, throughput=190_000.0))
    assert _pick(many, few) is few
