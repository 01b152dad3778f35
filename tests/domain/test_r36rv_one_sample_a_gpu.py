"""A training job at one sample a GPU that the plain ladder plans but cannot hold (r36 rv).

``min_gpus`` counts a sharded job's even share; the FSDP root unit and the gathered layers every
GPU holds whole can push the exact layout past the card, and at one sample a GPU no smaller
micro-batch is left to try. Such a count must be planned with checkpointing (the second ladder),
not dropped: 256 H100s pretraining Llama 3.1 8B at batch 256 x 8k were refused at 82.2 GiB a GPU
while 64 and 128 of them (4 and 2 samples a GPU) were planned and ran.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import evaluate as ev
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import H100, LLAMA3_8B, RULES


def _ctx(work: WorkloadSpec, **limits: object) -> ev.Context:
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits(**limits))  # type: ignore[arg-type]
    return replace(ctx, savers_allowed=frozenset(ev.SAVER_LABELS))


def _pretrain(batch: int) -> WorkloadSpec:
    return WorkloadSpec(
        task="training", model=LLAMA3_8B, precision="bf16", batch_size=batch, seq_len=8192
    )


@pytest.mark.parametrize("limits", [{"exact_gpus": 256, "max_gpus": 256}, {"max_gpus": 256}])
def test_a_count_the_plain_ladder_cannot_hold_is_planned_with_checkpointing(
    limits: dict[str, int],
) -> None:
    ctx = _ctx(_pretrain(256), objective="fastest", **limits)
    planned = ev.plan(H100, ctx)
    assert isinstance(planned, list), planned
    at = [c for c in planned if c.num_gpus == 256]
    assert at, [(c.num_gpus, c.savers) for c in planned]
    # every configuration planned at 256 GPUs holds the job there
    for c in at:
        res = ev.evaluate(c, ctx)
        assert res.ok, (c.savers, res.exclusion)
    assert any("checkpointing" in c.savers for c in at)
    # one sample a GPU: no configuration at that count without a saver (it needs 82 GiB)
    assert not any(not c.savers for c in at)


def test_the_plain_configuration_still_wins_where_it_holds() -> None:
    """A count the job holds with no saver is not planned again with checkpointing."""
    work = WorkloadSpec(
        task="training", model=replace(LLAMA3_8B, params=1e9), batch_size=64, seq_len=1024
    )
    planned = ev.plan(H100, _ctx(work, objective="fastest"))
    assert isinstance(planned, list)
    plain = {c.num_gpus for c in planned if not c.savers}
    assert plain
    assert not any(c.num_gpus in plain and "checkpointing" in c.savers for c in planned)
