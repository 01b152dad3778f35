"""Pooling stored device reports into measured efficiencies per GPU model."""

from __future__ import annotations

import pytest

from app.domain import perf
from app.domain.calibration import (
    Calibration,
    Efficiencies,
    Measurement,
    merge,
    pool,
    pooled_calibration,
)
from tests.domain.fixtures import A100, H100


def _m(bf16: float, bw: float, slug: str = "h100-sxm", backend: str = "cuda") -> Measurement:
    return Measurement(slug, backend, {"bf16": bf16, "bandwidth_gbs": bw})


def test_robust_median_drops_outliers_and_counts_machines() -> None:
    ms = [_m(0.80, 0.90), _m(0.79, 0.91), _m(0.81, 0.89), _m(0.30, 0.90)]  # one throttled box
    pooled = pool(ms, {"h100-sxm": "cuda"})["h100-sxm"]
    assert pooled.compute["bf16"] == pytest.approx(0.80)
    assert pooled.memory == pytest.approx(0.90)
    assert pooled.count == 3  # the outlier is not counted


def test_out_of_range_and_other_backend_figures_are_ignored() -> None:
    ms = [_m(0.8, 0.9), _m(1.6, 0.9), _m(0.7, 0.8, backend="rocm")]
    pooled = pool(ms, {"h100-sxm": "cuda"})["h100-sxm"]
    assert pooled.compute["bf16"] == pytest.approx(0.8)  # 1.6 × peak is a measurement error
    assert pooled.memory == pytest.approx(0.9)


def test_pooled_figures_replace_priors_and_say_how_many_machines() -> None:
    cal = pooled_calibration(pool([_m(0.6, 0.7), _m(0.62, 0.72)], {}), [H100, A100])
    assert cal is not None
    est = perf.estimate(H100, _train())
    prior = perf.estimate(H100, _train(), calibration=None)
    measured = perf.estimate(H100, _train(), calibration=cal)
    assert measured.efficiency_source == "measured" and measured.measured_on == 2
    assert measured.throughput < prior.throughput == est.throughput
    # another Ampere part is not the same family as Hopper: priors stay
    assert perf.estimate(A100, _train(), calibration=cal).efficiency_source == "prior"


def test_a_named_report_wins_for_its_gpu() -> None:
    pooled = pooled_calibration(pool([_m(0.6, 0.7)], {}), [H100])
    own = Calibration.from_measurement(H100, Efficiencies(compute={"bf16": 0.9}, memory=0.95))
    merged = merge(pooled, own)
    assert merged is not None and merged.by_slug["h100-sxm"].compute["bf16"] == 0.9
    assert merge(None, own) is own and merge(pooled, None) is pooled


def _train():
    from app.domain.workload import WorkloadSpec
    from tests.domain.fixtures import BERT_LARGE

    return WorkloadSpec(task="training", model=BERT_LARGE, precision="bf16", batch_size=32)
