"""Megatron's own layouts (app/domain/megatron.py): the pipeline bubble, the TP+SP, CP and
pipeline p2p bytes, the distributed optimizer's share, and the default layout."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import megatron, perf, topology
from app.domain.parallelism import Job
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import A100, H100, LLAMA3_8B

MB, S, H, L = 1, 8192, 8192, 80
ACT = MB * S * H * 2.0  # one micro-batch's [s, mb, h] bf16 activation


def _job(**kw: object) -> Job:
    base: dict[str, object] = {
        "grad_bytes": 2.0 * 70e9,
        "weight_bytes": 2.0 * 70e9,
        "layers": L,
        "compute_s": 10.0,
        "backward_share": 2 / 3,
        "accumulation_steps": 64,
        "act_bytes_per_layer": ACT,
    }
    base.update(kw)
    return Job(**base)  # type: ignore[arg-type]


def test_bubble_fraction_is_narayanans_p_minus_one_over_v_m() -> None:
    assert megatron.bubble_fraction(8, 1, 64) == pytest.approx(7 / 64)
    assert megatron.bubble_fraction(8, 5, 64) == pytest.approx(7 / 320)
    assert megatron.bubble_fraction(1, 1, 4) == 0.0


def test_bubble_adds_its_fraction_of_the_compute() -> None:
    lay = megatron.MegatronLayout(pp=8, microbatches=64)
    priced = megatron.price(H100, 64, _job(act_bytes_per_layer=0.0), lay)
    assert priced.exposed_s - priced.comm_s == pytest.approx(10.0 * 7 / 64)


def test_bubble_holds_the_stages_exposed_tp_collectives_too() -> None:
    # Narayanan et al. 2021: t_pb = (p - 1)(t_f + t_b), a micro-batch's whole time on a stage
    lay = megatron.MegatronLayout(tp=8, pp=8, microbatches=64)
    job = _job(grad_bytes=0.0, weight_bytes=0.0)
    priced = megatron.price(H100, 64, job, lay)
    tp = topology.comm_seconds(
        topology.link(H100, 8), megatron.tp_bytes(lay, job), round(megatron.tp_calls(lay, job))
    )
    bubble = priced.exposed_s - priced.comm_s
    assert bubble == pytest.approx((10.0 + tp) * 7 / 64)


def test_tp_sp_bytes_are_four_allreduces_of_the_activation_per_layer() -> None:
    lay = megatron.MegatronLayout(tp=4, pp=8, sequence_parallel=False)
    # k = tp·pp micro-batches per engine micro-step, L/pp layers each
    k = 4 * 8
    want = k * (L / 8) * 4 * 2 * 3 / 4 * ACT
    assert megatron.tp_bytes(lay, _job()) == pytest.approx(want)
    assert megatron.tp_bytes(lay, _job(recompute=True)) == pytest.approx(want * 6 / 4)
    # context parallel halves each TP collective's sequence
    cp = megatron.MegatronLayout(tp=4, pp=8, cp=2, sequence_parallel=False)
    assert megatron.tp_bytes(cp, _job()) == pytest.approx(want * 2 / 2)
    # sequence parallel (the default) adds the backward's two re-gathers per layer
    regather = k * (L / 8) * 2 * 3 / 4 * ACT
    sp = megatron.MegatronLayout(tp=4, pp=8)
    assert megatron.tp_bytes(sp, _job()) == pytest.approx(want + regather)


def test_cp_bytes_gather_kv_forward_and_scatter_grads_backward() -> None:
    lay = megatron.MegatronLayout(tp=8, pp=8, cp=2)
    ratio = 2 * 8 * 128 / H  # K and V of 8 KV heads of 128 against the hidden size
    kv = ACT * ratio / 8
    want = (8 * 8 * 2) * (L / 8) * 2 * (1 / 2) * kv
    assert megatron.cp_bytes(lay, _job(), ratio) == pytest.approx(want)
    assert megatron.cp_bytes(megatron.MegatronLayout(tp=8), _job(), ratio) == 0.0


def test_interleaving_multiplies_p2p_bytes_by_v() -> None:
    one = megatron.p2p_bytes(megatron.MegatronLayout(tp=4, pp=8), _job())
    five = megatron.p2p_bytes(megatron.MegatronLayout(tp=4, pp=8, vp=5), _job())
    assert one == pytest.approx(4 * 8 * 2 * ACT / 4)
    assert five == pytest.approx(5 * one)


def test_tp_comm_overlap_hides_behind_compute() -> None:
    bare = megatron.price(H100, 64, _job(), megatron.MegatronLayout(tp=8, microbatches=64))
    over = megatron.price(
        H100, 64, _job(), megatron.MegatronLayout(tp=8, microbatches=64, tp_comm_overlap=True)
    )
    assert over.comm_s == pytest.approx(bare.comm_s)
    assert over.exposed_s < bare.exposed_s


def test_default_layout_tp_in_a_node_then_pipeline() -> None:
    assert megatron.default_layout(64, 1, True) == megatron.MegatronLayout()
    assert megatron.default_layout(64, 3, True) == megatron.MegatronLayout(tp=4)
    assert megatron.default_layout(64, 8, True) == megatron.MegatronLayout(tp=8)
    assert megatron.default_layout(64, 20, True) == megatron.MegatronLayout(tp=8, pp=4)
    assert megatron.default_layout(64, 20, False) == megatron.MegatronLayout()


def test_parse_reads_the_performance_summary_words() -> None:
    assert megatron.parse("TP8 PP8 CP2 VP8") == megatron.MegatronLayout(tp=8, pp=8, vp=8, cp=2)
    assert megatron.parse("FSDP").fsdp
    assert megatron.parse("DDP") == megatron.MegatronLayout()


def test_pipeline_p2p_crosses_nodes_when_a_stage_fills_one() -> None:
    # TP8 fills an 8-GPU node: the next stage is on another node (each GPU's NIC share)
    lay = megatron.MegatronLayout(tp=8, pp=8, microbatches=64)
    job = _job(grad_bytes=0.0, weight_bytes=0.0, compute_s=0.0)
    net = topology.link(A100, 16)
    assert net.kind == "network"
    priced = megatron.price(A100, 64, job, lay)
    tp = topology.comm_seconds(
        topology.link(A100, 8), megatron.tp_bytes(lay, job), 64 * L // 8 * (8 + 2)
    )
    p2p = topology.comm_seconds(net, megatron.p2p_bytes(lay, job), 64 * 2)
    assert priced.comm_s == pytest.approx(tp + p2p)


def test_a_megatron_job_is_priced_on_its_stated_layout_else_its_default() -> None:
    work = WorkloadSpec(
        task="training", model=LLAMA3_8B, batch_size=64, seq_len=4096, runtime="megatron"
    )
    stated = replace(work, megatron=megatron.MegatronLayout(tp=2, pp=2, microbatches=8))
    lay = perf.training_layout(A100, stated, 64, sharded=True, compute_s=1.0)
    assert lay.name == "megatron" and "TP2 PP2" in lay.label
    # no layout: memory for 8 GPUs -> TP8 in a node, no pipeline
    lay = perf.training_layout(A100, work, 64, sharded=True, compute_s=1.0, shard_min=8)
    assert "TP8 PP1" in lay.label
    # eager PyTorch keeps the engine's chooser
    eager = replace(work, runtime="pytorch")
    assert perf.training_layout(A100, eager, 64, sharded=True, compute_s=1.0).name != "megatron"


def test_default_microbatches_follow_megatrons_rule_not_the_accumulation_steps() -> None:
    # megatron/core/num_microbatches_calculator.py: m = global batch / (micro-batch x DP).
    # 256 sequences per engine micro-step on 32 GPUs (8 per GPU: micro-batch 8), TP8 PP4 ->
    # DP 1, one accumulation step: m = 256 / (8 x 1) = 32, not the job's 1 accumulation step
    lay = megatron.MegatronLayout(tp=8, pp=4)
    job = _job(accumulation_steps=1, batch=256.0, act_bytes_per_layer=0.0)
    assert megatron.microbatches(lay, 32, job) == 32
    priced = megatron.price(H100, 32, job, lay)
    # no activation bytes: the TP collectives' latency only, in the bubble's slots too
    tp = topology.comm_seconds(topology.link(H100, 8), 0.0, round(megatron.tp_calls(lay, job)))
    assert priced.exposed_s - priced.comm_s == pytest.approx((10.0 + tp) * 3 / 32)
    assert "pipeline bubble 9%" in priced.label
    # DP 2 with one sequence per GPU and 4 accumulation steps: 64 x 4 / (1 x 2) = 128
    assert megatron.microbatches(lay, 64, _job(accumulation_steps=4, batch=64.0)) == 128
    # fewer sequences than GPUs: micro-batch 1, m = 8 / (1 x 1)
    assert megatron.microbatches(lay, 32, _job(accumulation_steps=1, batch=8.0)) == 8
    # a stated count wins
    stated = megatron.MegatronLayout(tp=8, pp=4, microbatches=12)
    assert megatron.microbatches(stated, 32, _job(batch=256.0)) == 12


def test_a_stated_pipeline_without_microbatches_is_not_a_full_bubble() -> None:
    # issue #21: TP2 PP4 on 8 GPUs, 64 sequences per step, no accumulation -> micro-batch 8,
    # DP 1, m = 64 / 8 = 8: bubble 3/8 (it read (p - 1)/1 = 300 % from the accumulation steps)
    work = WorkloadSpec(
        task="training",
        model=LLAMA3_8B,
        batch_size=64,
        seq_len=4096,
        runtime="megatron",
        megatron=megatron.MegatronLayout(tp=2, pp=4),
    )
    lay = perf.training_layout(H100, work, 8, sharded=True, compute_s=1.0)
    assert f"pipeline bubble {3 / 8:.0%}" in lay.label, lay.label


def test_an_underfilled_pipeline_is_said_in_words() -> None:
    lay = megatron.MegatronLayout(tp=8, pp=4)
    why = megatron.underfilled(lay, 32, 2)
    assert why is not None and "at most 2 micro-batch" in why and "150%" in why
    assert megatron.underfilled(lay, 32, 4) is None
    assert megatron.underfilled(lay, 64, 4) is not None  # DP 2: two micro-batches each
    assert megatron.underfilled(megatron.MegatronLayout(tp=8), 8, 1) is None
    stated = megatron.underfilled(megatron.MegatronLayout(pp=4, microbatches=2), 4, 256)
    assert stated is not None and "stated 2 micro-batch" in stated
