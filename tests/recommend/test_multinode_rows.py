"""Rows across nodes: a 'fastest' answer takes more GPUs only for the speed they add, and the
row says how the job spans them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"


def _fastest(workload: dict[str, object]) -> s.Recommendation:
    gpus = [g for g in read_gpu_specs(DATA) if g.slug == "h100-sxm"]
    req = s.RecommendationRequest(
        workload=workload, constraints={"max_gpus": 64}, objective="fastest"
    )
    rows = service.recommend(req, gpus, load_rules(DATA)).recommendations
    assert rows
    return rows[0]


def test_fastest_takes_the_count_with_the_most_throughput_and_says_its_cost() -> None:
    # ResNet-50 at a global batch of 256: 4 images per GPU on 64, launch-bound
    row = _fastest({"preset": "resnet-50", "task": "training", "batch_size": 256})
    counts = {a.num_gpus: a for a in row.alternatives}
    assert 8 in counts
    assert all(row.throughput.value >= a.throughput for a in row.alternatives)
    if row.num_gpus == 64:
        # the gain over 8 GPUs is what the scaling efficiencies say, far from 8×
        gain = row.throughput.value / counts[8].throughput
        assert gain < 4.0
        assert gain == pytest.approx(
            (64 * row.timing.scaling_efficiency) / (8 * counts[8].scaling_efficiency)
        )
    split = next(line for line in row.explanation if line.startswith("Split over"))
    assert "data parallel (DDP)" in split and "scaling efficiency" in split


def test_a_large_batch_scales_across_nodes_as_published_runs_do() -> None:
    row = _fastest({"preset": "resnet-50", "task": "training", "batch_size": 256 * 64})
    counts = {a.num_gpus: a for a in row.alternatives}
    assert row.num_gpus == 64
    # weak scaling from one node to eight: ≥ 90 % per GPU (Goyal et al. 2017: ~90 % to 256)
    assert row.throughput.value / 64 >= 0.9 * counts[8].throughput / 8
    split = next(line for line in row.explanation if line.startswith("Split over"))
    assert "8 servers" in split and "InfiniBand" in split and "assumed" in split
