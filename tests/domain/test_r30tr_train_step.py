"""A training step charges each term where it happens (perf.estimate):

* the optimizer update runs once per optimizer step, so with gradient accumulation over s
  micro-steps a micro-step carries 1/s of it: the optimizer step's time is s × the micro-step
  without the update, plus the update once (PyTorch DDP no_sync, DeepSpeed's
  gradient-accumulation boundary, FSDP2 stepping after K micro-batches);
* each FSDP / HSDP GPU runs its own share of the micro-batch through every layer: its GEMMs
  at the share's M (tokens per GPU), not the whole micro-batch's shapes split n ways."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, LLAMA3_8B

DATA = Path(__file__).resolve().parents[2] / "data"
EFF = load_efficiency(DATA)


def _train(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="training",
        model=LLAMA3_8B,
        precision="bf16",
        batch_size=8,
        seq_len=2048,
        gradient_checkpointing=True,
        efficiency=EFF,
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def _per_gpu(est: perf.PerfEstimate) -> float:
    """The GPU's own part of a micro-step: the step less its exposed communication."""
    return est.step_time_s - est.comm_s


def test_the_optimizer_update_is_the_adamw_bytes_of_the_trainable_weights() -> None:
    # AdamW reads param, grad, m, v (fp32: 16 B) and writes param, m, v (12 B): 28 B per
    # trainable parameter at about the card's memory bandwidth
    one = perf.single_gpu(H100, _train())
    raw = LLAMA3_8B.params * 28.0 / (H100.memory_bandwidth_gbs * 1e9)
    assert raw <= one.t_opt <= raw / 0.5
    assert one.t_opt <= one.t_state  # the weight casts run every micro-step, not with it


@pytest.mark.parametrize("steps", [2, 8, 128])
def test_one_gpu_the_optimizer_share_of_a_micro_step_falls_as_one_over_the_steps(
    steps: int,
) -> None:
    work = _train()
    one = perf.single_gpu(H100, work)
    t1 = perf.estimate(H100, work, one=one).step_time_s
    ts = perf.estimate(H100, work, one=one, accumulation_steps=steps).step_time_s
    micro = t1 - one.t_opt  # a micro-step's forward and backward alone
    # the optimizer step: s micro-steps and one update, whatever s
    assert steps * ts == pytest.approx(steps * micro + one.t_opt, rel=1e-9)
    assert (ts - micro) / one.t_opt == pytest.approx(1.0 / steps, rel=1e-9)


def test_a_single_micro_step_keeps_the_whole_update() -> None:
    work = _train()
    a = perf.estimate(H100, work)
    b = perf.estimate(H100, work, accumulation_steps=1)
    assert a.step_time_s == b.step_time_s


def test_fsdp_gpus_update_their_shard_once_per_optimizer_step() -> None:
    # 8 GPUs fully sharded: each updates 1/8 of the states, once per optimizer step; the
    # reduce-scatter stays every micro-step (FSDP2's default), so the exposed comm is the same
    work = _train(batch_size=64)
    one = perf.single_gpu(H100, work)
    e1 = perf.estimate(H100, work, num_gpus=8, sharded=True, one=one)
    e16 = perf.estimate(H100, work, num_gpus=8, sharded=True, one=one, accumulation_steps=16)
    assert "FSDP" in e1.parallelism
    assert e16.comm_s == pytest.approx(e1.comm_s, rel=1e-9)
    shed = _per_gpu(e1) - _per_gpu(e16)
    assert shed == pytest.approx(one.t_opt / 8 * (1 - 1 / 16), rel=1e-6)


def test_ddp_replicas_each_update_the_whole_model_once_per_optimizer_step() -> None:
    work = _train(model=LLAMA3_8B, batch_size=16, seq_len=512, peft="lora")
    one = perf.single_gpu(A100, work)
    e1 = perf.estimate(A100, work, num_gpus=2, sharded=False, one=one)
    e4 = perf.estimate(A100, work, num_gpus=2, sharded=False, one=one, accumulation_steps=4)
    assert "DDP" in e1.parallelism
    part = perf.single_gpu(A100, perf.share_job(work, 8))
    # each replica's update is the whole (adapter) update, as one card's
    assert _per_gpu(e1) - _per_gpu(e4) == pytest.approx(part.t_opt * (1 - 1 / 4), rel=1e-6)


def test_an_fsdp_gpus_gemms_run_at_its_own_tokens() -> None:
    # 8 sequences of 1,024 tokens over 8 GPUs: each GPU's GEMMs see M = 1,024 tokens, not 8,192
    # (at 512 tokens the eager host floor, counted per call since r31ft, binds the share and
    # the split alike, and the two tie)
    work = _train(batch_size=8, seq_len=1024, gradient_checkpointing=False)
    ops = perf.step_ops(perf.share_job(work, 1), True, 2.0)
    assert ops is not None
    # the forward's linears (M = tokens, K = hidden), their backward's as well
    fwd = [o for o in ops if o.kind == "gemm" and o.phase == "fwd" and o.batch == 1]
    assert fwd and all(o.m == 1024 for o in fwd)
    whole = perf.single_gpu(H100, work)
    share = perf.single_gpu(H100, perf.share_job(work, 1))
    est = perf.estimate(H100, work, num_gpus=8, sharded=True, one=whole)
    assert "FSDP" in est.parallelism
    # the GPU's math is the share's at its own shapes, which a small M runs less efficiently
    # than an eighth of the whole micro-batch's
    assert est.compute_s == pytest.approx(share.t_comp, rel=1e-9)
    assert share.t_comp > whole.t_comp / 8
    # and the whole step is no faster than the old n-way split of the micro-batch's
    split = perf.split_step_s(whole, 8, sharded=True, batch=8)
    assert _per_gpu(est) >= split


def test_the_sharded_share_updates_one_nth_of_the_states() -> None:
    work = _train(batch_size=16, seq_len=1024)
    share = perf._sharded_part(H100, work, 8, "pytorch", None, True, None)
    assert share is not None
    alone = perf.single_gpu(H100, perf.share_job(work, 2))
    # the same kernels at 2 sequences, with 7/8 of the model-state updates gone
    assert share.t_state == pytest.approx(alone.t_state / 8)
    assert share.t_opt == pytest.approx(alone.t_opt / 8)
    assert alone.t_act - share.t_act == pytest.approx(alone.t_state * 7 / 8, rel=1e-9)
    assert share.t_comp == alone.t_comp


def test_hsdp_gpus_update_their_groups_shard() -> None:
    # 64 GPUs in groups of 8: each GPU's share of the optimizer is 1/8, shed (s − 1)/s of it
    work = _train(model=LLAMA3_8B, batch_size=64, seq_len=4096)
    one = perf.single_gpu(H100, work)
    e1 = perf.estimate(H100, work, num_gpus=64, sharded=True, one=one, shard_min=8)
    e8 = perf.estimate(
        H100, work, num_gpus=64, sharded=True, one=one, shard_min=8, accumulation_steps=8
    )
    if "HSDP" not in e1.parallelism or "HSDP" not in e8.parallelism:
        pytest.skip(f"layout is {e1.parallelism}")
    # the cross-replica all-reduce is spread over the steps too; the GPU's own part sheds
    # its group's update
    shed = _per_gpu(e1) - _per_gpu(e8)
    assert shed == pytest.approx(one.t_opt / 8 * (1 - 1 / 8), rel=1e-6)
    assert math.isfinite(e8.throughput)
