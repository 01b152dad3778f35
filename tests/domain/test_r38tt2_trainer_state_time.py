"""The step time of how a trainer holds its state: pure 16-bit has no autocast weight casts
and a 16-bit optimizer update. (A paged optimizer's host traffic is not timed: §6.7t "tt2".)"""

from __future__ import annotations

import pytest

from app.domain import perf
from app.domain.operators import OPTIMIZER_TRAFFIC, Op
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import A100, LLAMA31_8B, llama31_8b_finetune

LLAMA = LLAMA31_8B  # config.json of meta-llama/Llama-3.1-8B


def _job(**kw: object) -> WorkloadSpec:
    # with torchtune's chunked loss and optimizer step in backward set
    return llama31_8b_finetune(**{"loss_chunks": 8, "optimizer_in_backward": True, **kw})


def _ops(work: WorkloadSpec) -> dict[str, Op]:
    ops = perf.step_ops(work, True, 2.0)
    assert ops is not None
    return {o.name: o for o in ops if o.phase == "opt" or o.name == "autocast.weights"}


def test_pure_16bit_runs_no_autocast_weight_cast() -> None:
    mixed, pure = _ops(_job()), _ops(_job(fp32_master=False))
    cast = mixed["autocast.weights"]
    assert (cast.bytes_read, cast.bytes_written) == (LLAMA.params * 4.0, LLAMA.params * 2.0)
    assert "autocast.weights" not in pure


@pytest.mark.parametrize(
    ("optimizer", "read", "written"),
    [("adamw", 8.0, 6.0), ("adam8bit", 6.0, 4.0), ("sgd", 6.0, 4.0)],
)
def test_a_pure_16bit_update_moves_16bit_params_grads_and_states(
    optimizer: str, read: float, written: float
) -> None:
    mixed = _ops(_job(optimizer=optimizer))[f"{optimizer}.step"]
    pure = _ops(_job(optimizer=optimizer, fp32_master=False))[f"{optimizer}.step"]
    # mixed precision keeps the fp32 update it had
    mixed_total = (mixed.bytes_read + mixed.bytes_written) / LLAMA.params
    assert mixed_total == pytest.approx(OPTIMIZER_TRAFFIC[optimizer])
    assert pure.bytes_read == pytest.approx(LLAMA.params * read)
    assert pure.bytes_written == pytest.approx(LLAMA.params * written)


def test_pure_16bit_steps_faster_than_autocast_by_the_bytes_it_skips() -> None:
    mixed = perf.single_gpu(A100, _job())
    pure = perf.single_gpu(A100, _job(fp32_master=False))
    assert pure.t_state < mixed.t_state
    assert pure.step_s < mixed.step_s
