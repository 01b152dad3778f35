"""A GeForce/TITAN/workstation pair is priced over PCIe (its NVLink bridge is an accessory no
offer states); where it scales poorly the tip says what a bridge would carry."""

from __future__ import annotations

from dataclasses import replace

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import BERT_LARGE, RTX3090, RTX4090


def _pair(gpu: GpuSpec, job: WorkloadSpec) -> rank.Candidate:
    est = replace(perf.estimate(gpu, job, num_gpus=2), scaling_efficiency=0.5)
    return rank.Candidate(
        gpu=gpu,
        work=job,
        memory=memory_breakdown(job, num_gpus=2),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, 2, est.throughput, 10.0),
    )


def test_a_bridgeable_pair_is_told_what_a_bridge_would_carry() -> None:
    job = WorkloadSpec(task="training", model=BERT_LARGE, precision="bf16", seq_len=512)
    card = replace(RTX3090, interconnect="NVLink 3 (2-way bridge)", interconnect_gbs=112.5)
    said = " ".join(rank.tips(_pair(card, job), job))
    assert "would carry the gradient sync at ~45 GB/s instead of ~13" in said


def test_a_card_without_a_bridge_is_told_nothing_of_one() -> None:
    job = WorkloadSpec(task="training", model=BERT_LARGE, precision="bf16", seq_len=512)
    assert "NVLink bridge" not in " ".join(rank.tips(_pair(RTX4090, job), job))


def test_an_eager_16_bit_cnn_row_is_told_about_channels_last() -> None:
    from pathlib import Path

    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency
    from tests.domain.fixtures import A100

    data = Path(__file__).resolve().parents[2] / "data"
    resnet = load_presets(data)["resnet-50"].model  # with its traced operator table
    job = WorkloadSpec(
        task="training", model=resnet, precision="bf16", batch_size=256, runtime="pytorch",
        efficiency=load_efficiency(),
    )  # fmt: skip
    est = perf.estimate(A100, job)
    c = rank.Candidate(
        gpu=A100, work=job, memory=memory_breakdown(job), available_gb=A100.memory_gb,
        perf=est, cost=cost.estimate_cost(A100, 1, est.throughput, 10.0),
    )  # fmt: skip
    assert perf.runs_nchw(job)  # eager PyTorch leaves a ResNet NCHW
    assert "channels_last" in " ".join(rank.tips(c, job))
    fp32 = WorkloadSpec(task="training", model=resnet, precision="fp32", batch_size=256)
    c32 = rank.Candidate(
        gpu=A100, work=fp32, memory=memory_breakdown(fp32), available_gb=A100.memory_gb,
        perf=perf.estimate(A100, fp32), cost=c.cost,
    )  # fmt: skip
    assert "channels_last" not in " ".join(rank.tips(c32, fp32))
