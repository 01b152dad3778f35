"""A ViT's MFU counts the FLOPs its step prices at its own input_size: ViT-B/16 at 384 runs
577 tokens, ~111 GFLOPs per image (timm/fvcore: 55.5 GMACs), not the 224 figure's 35.12, so
its MFU stays near the 224 one while its throughput falls ~3.2×."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100
from tests.domain.test_perf2fix_ddp_gradients import VIT_B16

DATA = Path(__file__).resolve().parents[2] / "data"


def _train(side: float) -> WorkloadSpec:
    return WorkloadSpec(
        task="training",
        model=replace(VIT_B16, input_size=side),
        precision="bf16",
        batch_size=128,
        efficiency=load_efficiency(DATA),
    )


def test_vit_forward_flops_follow_the_image_side() -> None:
    at224 = perf.forward_flops_per_sample(_train(224))
    at384 = perf.forward_flops_per_sample(_train(384))
    assert at224 == pytest.approx(35.12e9, rel=0.002)  # torchvision: 17.56 GMACs
    assert at384 == pytest.approx(2 * 55.5e9, rel=0.01)  # timm / fvcore: 55.5 GMACs
    assert perf.model_flops_per_sample(_train(384)) == pytest.approx(3 * at384)


def test_vit_mfu_does_not_fall_with_the_image_side() -> None:
    mfu = {}
    speed = {}
    for side in (224.0, 384.0):
        work = _train(side)
        est = perf.estimate(H100, work)
        speed[side] = est.throughput
        mfu[side] = perf.model_flops_utilisation(H100, work, est)
    assert speed[224.0] / speed[384.0] > 2.8
    assert mfu[384.0] == pytest.approx(mfu[224.0], rel=0.1)
