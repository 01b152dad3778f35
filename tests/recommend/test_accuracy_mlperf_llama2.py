"""The held-out MLPerf Inference v5.0 Llama 2 70B Offline set
(tests/data/heldout_mlperf_llama2_offline.yaml): every closed, available, single-node result on
a catalog accelerator whose replica layout was read from its vendor's stack (TensorRT-LLM on
H200 / B200 / H100 NVL, vLLM on MI325X), one row per result ID, scored on its own.

The set is never tuned on. The thresholds below are what the engine achieved when the set was
scored once (2026-12-04: median ratio 1.19, bias 1.18, Spearman 0.55, 28 of 29 rows inside the
band at x2.04 on the priors path; 1.20, 1.20, 29 of 29 as the app answers), kept so that a
change that makes it worse fails; they are NOT the project's goal (median ratio 1.25 or less
per held-out regime, met here only because the H100 NVL rows' over-prediction and the rest's
under-prediction both sit near x1.2). What misses and why is in docs/methodology.md
("Held-out: MLPerf Inference v5.0, Llama 2 70B Offline").
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "heldout_mlperf_llama2_offline.yaml"


def _doc() -> dict:
    return yamlio.safe_load(FILE.read_text(encoding="utf-8"))


def test_the_set_is_priced_and_scored_on_its_own(accuracy) -> None:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    assert len(rows) == 29
    assert {r.slug for r in rows} == {"h200-sxm", "b200", "h100-nvl", "mi325x"}
    assert {r.regime for r in rows} == {"serving-mlperf-offline"}
    assert accuracy.HELDOUT_BAND_REGIME["serving-mlperf-offline"] == "serving"
    # the three GH200 results: the catalog has no GH200 (the only rows left out)
    assert len(skipped["serving-mlperf-offline"]) == 3
    assert all("GH200" in label for label in skipped["serving-mlperf-offline"])
    (score,) = accuracy.heldout_scores(rows, skipped)
    # as scored once: median ratio 1.19, bias 1.18, Spearman 0.55 (per replica); since
    # 2026-12-07 (r44 mlp) the regime ranks per GPU (accuracy.SUBMISSION_REGIMES): 0.863, the
    # most one value per configuration reaches; per replica 0.551 is printed beside it
    assert score.median_ratio <= 1.22
    assert 1.11 <= score.bias <= 1.25
    assert score.spearman >= 0.85
    assert score.replica_spearman >= 0.50
    (band,) = accuracy.heldout_band_scores(rows)
    # as scored once: 28 of 29; 27 since 2026-12-06 (ls): the new-source term, re-sized from
    # the tuning and held-out units by --write-bands, went x0.73 -> x0.75 on its low side when
    # the held-out llama.cpp split decode rows moved toward 1, and the H100 NVL row at 0.71
    # of its prediction fell just outside (its band's floor 0.727)
    assert band.n == 29 and band.coverage >= 27 / 29 - 1e-9


def test_as_the_app_answers(accuracy) -> None:
    """Shipped kernel profiles and the band each serving answer carries: 1.20, bias 1.20,
    every row inside but one (28 of 29 since 2026-12-04, when the runtime widening drawn from
    the tuning sets narrowed from ×0.94–1.07 to ×0.95–1.05: replicas priced at their own share
    of the batch, PCIe rings by their size; the goal is 80 %); 25 of 29 on 2026-12-06, when
    the pooled new-source term narrowed from ×0.70–1.33 to ×0.72–1.23 (the held-out SDXL blog
    row, which had needed the widest term, corrected to the 25 steps its notebook ran; the
    optimizer update charged once per optimizer step): the floor is now the goal itself)."""
    rows, skipped = accuracy.evaluate_heldout(
        ROOT / "data", [FILE], accuracy.app_calibration(ROOT / "data"), True
    )
    (score,) = accuracy.heldout_scores(rows, skipped)
    assert score.median_ratio <= 1.23
    assert 1.12 <= score.bias <= 1.27
    (band,) = accuracy.heldout_band_scores(rows)
    assert band.n == 29 and band.coverage >= 0.8


def test_the_set_is_scored_but_not_a_band_input(accuracy) -> None:
    """Like the vLLM NVIDIA sets, the file is outside the bands' new-source term until the
    bands are next written on purpose (only --write-bands may move the shipped term)."""
    from benchmarks import band_crossfit

    assert FILE in accuracy.NOT_CALIBRATING
    assert FILE not in band_crossfit.calibrating_files()


def test_each_row_is_its_systems_share_per_replica() -> None:
    """value = system tokens/s x replica GPUs / system GPUs: Offline splits the samples over
    the replicas, so one replica's rate is its share of the system's."""
    doc = _doc()
    ids = [row["result_id"] for row in doc["measurements"]]
    assert len(ids) == len(set(ids)) == 32
    for row in doc["measurements"]:
        share = row["system_tokens_per_s"] * row["num_gpus"] / row["system_gpus"]
        assert row["value"] == pytest.approx(share, abs=0.01), row["result_id"]
        assert row["load"] == "saturation" and row["metric"] == "output_tokens_per_s"
        # the OpenOrca means: 294 generated (reference), 215 prompt (sampled from the set)
        assert (row["prompt_tokens"], row["output_tokens"]) == (215, 294)


def test_the_engine_ranks_the_four_accelerators_per_gpu_as_measured(accuracy) -> None:
    """Per GPU (a replica's rate over its GPUs) the engine orders B200 (FP4) > H200 > MI325X >
    H100 NVL as the results do (the regime's pooled Spearman ranks per GPU since 2026-12-07).
    Per replica (0.55, printed beside it) the H100 NVL's two-GPU replica is priced above a
    one-GPU H200 while it measures below it."""
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    tp = {"h100-nvl": 2}

    def per_gpu(attr: str) -> dict[str, float]:
        return {
            s: statistics.median(getattr(r, attr) / tp.get(s, 1) for r in rows if r.slug == s)
            for s in {r.slug for r in rows}
        }

    order = ["b200", "h200-sxm", "mi325x", "h100-nvl"]
    for values in (per_gpu("measured"), per_gpu("predicted")):
        assert sorted(values, key=values.__getitem__, reverse=True) == order


def test_the_h100_nvl_miss_is_kept_in_view(accuracy) -> None:
    """The one accelerator the engine prices too fast: the H100 NVL rows read 0.69-0.83
    (measured / predicted) where the H200 and MI325X rows read 1.16-1.22 (methodology: 400 W
    part, layout of the partners' runs not read); the 2-GPU Cisco rows fall at or just
    outside the band's low edge on the priors path. The B200 (NVFP4) rows read 1.00-1.02
    since the fp4 GEMM share follows the step's M (2026-12-04, decided on the tuning rows;
    1.16-1.18 before)."""
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    nvl = [r.ratio for r in rows if r.slug == "h100-nvl"]
    b200 = [r.ratio for r in rows if r.slug == "b200"]
    rest = [r.ratio for r in rows if r.slug not in ("h100-nvl", "b200")]
    assert len(nvl) == 3 and max(nvl) < 0.90
    assert len(b200) == 4 and min(b200) > 0.95 and max(b200) < 1.10
    assert min(rest) > 1.10 and max(rest) < 1.30
