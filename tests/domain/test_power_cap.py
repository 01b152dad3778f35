"""A power-capped board's sustained tensor clock bounds every runtime's step, not only
llama.cpp's prompts (data/efficiency.yaml tensor_tflops_per_watt by architecture)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def _job(preset: str):
    return resolve_workload(s.WorkloadIn.model_validate({"preset": preset}))[0]


def test_a_72_watt_l4_does_not_train_a_vit_as_fast_as_a_350_watt_3090():
    # ViT-B/16 fine-tuning had the L4 at 454 images/s beside the RTX 3090's 452: its 121
    # TFLOPS datasheet peak at full clock, which 72 W holds ~0.44 of (0.74 TFLOPS per watt)
    work = _job("vit-b-16")
    l4, a10, rtx3090 = GPUS["l4"], GPUS["a10"], GPUS["rtx-3090"]
    capped = perf.estimate(l4, work).throughput
    free = perf.estimate(dataclasses.replace(l4, tdp_w=1000.0), work).throughput
    assert capped < 0.75 * free
    assert capped < 0.75 * perf.estimate(rtx3090, work).throughput
    # the 150 W A10 (GA102 at 0.40 TFLOPS per watt) likewise; an uncapped GeForce part is not
    assert (
        perf.estimate(a10, work).throughput
        < perf.estimate(dataclasses.replace(a10, tdp_w=1000.0), work).throughput
    )
    assert (
        perf.estimate(rtx3090, work).throughput
        == perf.estimate(dataclasses.replace(rtx3090, tdp_w=1000.0), work).throughput
    )
