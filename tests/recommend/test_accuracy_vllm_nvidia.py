"""The held-out vLLM / SGLang serving set on NVIDIA datacenter GPUs
(tests/data/heldout_serving_vllm_nvidia.yaml): GPUStack's Qwen3-32B pages (one H100, one A100;
vLLM 0.11.0 and SGLang 0.5.5.post1 defaults, every prompt queued at once) and one H100 figure
of a 2024 vLLM PR, scored on their own.

The set is never tuned on. The thresholds below are what the engine achieves (scored once
2026-12-03: median ratio 1.28, bias 0.81, Spearman 0.95 on the priors path; since 2026-12-04 every
run, which sent all its prompts at once, is priced as that burst's drain, app/domain/burst.py:
1.23, bias 1.10, Spearman 0.96), kept so that a change that makes it worse fails; they are NOT
the project's goal (median ratio 1.25 or less per held-out regime: met by this file, missed by
the regime, both files pooled 1.29). What misses and why is in docs/methodology.md ("Held-out:
vLLM and SGLang on NVIDIA GPUs").
"""

from __future__ import annotations

import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "heldout_serving_vllm_nvidia.yaml"


def test_the_set_is_priced_and_scored_on_its_own(accuracy) -> None:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    assert len(rows) == 14
    assert {r.slug for r in rows} == {"h100-sxm", "a100-sxm4-80gb"}
    assert {r.regime for r in rows} == {"serving-open-cuda"}
    assert accuracy.HELDOUT_BAND_REGIME["serving-open-cuda"] == "serving"
    (score,) = accuracy.heldout_scores(rows, skipped)
    # scored once: 1.28, bias 0.81, Spearman 0.95; as bursts (2026-12-04): 1.23, 1.10, 0.96
    assert score.median_ratio <= 1.26
    assert 1.02 <= score.bias <= 1.17
    assert score.spearman >= 0.92


def test_the_32k_prompt_run_the_engine_rejects_on_an_h100_is_listed() -> None:
    """The one row left out: 100 prompts of 32,000 tokens under vLLM's defaults on an H100,
    which completed as published, has no room for one request's KV cache in the engine once
    vLLM's sampler reserve over 1,024 sequences is kept out (a miss, listed, not dropped)."""
    from app.catalog.loader import read_gpu_specs
    from app.domain import serving as sv
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency
    from benchmarks import serving_accuracy

    data = ROOT / "data"
    gpu = {g.slug: g for g in read_gpu_specs(data)}["h100-sxm"]
    model = load_presets(data)["qwen3-32b"].model
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", "vllm")
    res = serving_accuracy.evaluate_one(gpu, model, cfg, 32000, 77, None, load_efficiency(data))
    assert not res.fits and "sampler" in (res.reason or "")
    # the same run on the A100 (256 sequences' sampler reserve) fits one request at a time
    a100 = {g.slug: g for g in read_gpu_specs(data)}["a100-sxm4-80gb"]
    res = serving_accuracy.evaluate_one(a100, model, cfg, 32000, 77, None, load_efficiency(data))
    assert res.fits and res.max_concurrency == 1


def test_each_vllm_workload_is_faster_on_the_h100_as_published(accuracy) -> None:
    """Every vLLM bf16 workload run on both GPUs is faster on the H100, measured and priced."""
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    by: dict[tuple[str, str], dict[str, object]] = {}
    for r in rows:
        if " vllm bf16 " in f" {r.group} " and "qwen3-32b" in r.group:
            shape = " ".join(r.group.split()[-2:])
            by.setdefault((r.source.rsplit("-", 1)[0], shape), {})[r.slug] = r
    pairs = [v for v in by.values() if len(v) == 2]
    assert len(pairs) == 4  # ShareGPT, 4000/200, 2000/100, 128/4
    for pair in pairs:
        h, a = pair["h100-sxm"], pair["a100-sxm4-80gb"]
        assert h.measured > a.measured and h.predicted > a.predicted  # type: ignore[attr-defined]


MOE = ROOT / "tests" / "data" / "heldout_serving_vllm_nvidia_moe.yaml"


def test_the_moe_pages_are_scored_on_their_own(accuracy) -> None:
    """GPUStack's Qwen3-235B-A22B pages (8 H100s / 8 A100s, TP 8 bf16 and TP 4 FP8), the
    same regime's second publication, scored once after the first (2026-12-03: median ratio
    1.49, bias 0.73, Spearman 0.99 on the priors path; 1.52, 0.72 as the app answers; as
    bursts, 2026-12-04: 1.34, 0.75, 0.99 on both paths)."""
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [MOE])
    assert not skipped and len(rows) == 18
    assert {r.regime for r in rows} == {"serving-open-cuda"}
    (score,) = accuracy.heldout_scores(rows, skipped)
    assert score.median_ratio <= 1.37
    assert 0.70 <= score.bias <= 0.82  # 0.80 before the sampler was priced (2026-12-05)
    assert score.spearman >= 0.97


def test_sharegpt_bursts_are_priced_by_their_drain_not_the_saturation_rate(accuracy) -> None:
    """Where every ShareGPT prompt is queued at once the published rate is tokens over the
    makespan, which the longest answers set after the batch has drained. The steady state at
    saturation reads those rows ~2x over (median 1.99x); the burst's drain (app/domain/burst.py:
    vLLM's ShareGPT lengths, the runtime's scheduler, the serving model's steps) reads them at
    a median 1.27x, the fixed-length rows at 1.24x (1.03x at saturation: their 4-token rows,
    which a burst prices without the steady state's prompt queue, read 1.6-2.6x)."""
    from app.catalog.loader import read_gpu_specs
    from app.domain import serving as sv
    from app.recommend.presets import load_presets
    from app.shipped import yamlio
    from app.shipped.rules import load_efficiency
    from benchmarks import serving_accuracy

    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [FILE, MOE])
    gpustack = [r for r in rows if r.source.startswith("gpustack")]
    sharegpt = [r for r in gpustack if r.group.split()[-2] in ("216", "217", "218")]
    fixed = [r for r in gpustack if r not in sharegpt]
    assert len(sharegpt) == 12 and len(fixed) == 19
    assert statistics.median(r.predicted / r.measured for r in sharegpt) <= 1.30
    assert statistics.median(r.predicted / r.measured for r in fixed) <= 1.28
    # the same ShareGPT rows at the steady state's saturation rate: the definition mismatch
    data = ROOT / "data"
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    presets, table = load_presets(data), load_efficiency(data)
    steady = []
    for path in (FILE, MOE):
        for m in yamlio.safe_load(path.read_text(encoding="utf-8"))["measurements"]:
            if m.get("dataset") != "sharegpt":
                continue
            assert m["arrival"] == "burst"  # GPUStack: no request rate, every prompt at once
            cfg = sv.ServingConfig(
                int(m["num_gpus"]), 1, m["precision"], m["kv_cache_precision"], m["runtime"]
            )
            res = serving_accuracy.evaluate_one(
                gpus[m["gpu_slug"]], presets[m["preset"]].model, cfg, int(m["prompt_tokens"]),
                int(m["output_tokens"]), None, table,
            )  # fmt: skip
            steady.append(res.max_output_tokens_per_s / float(m["value"]))
    # (1.95 before 2026-12-05, when grouped-query heads replicated over a wider tensor-parallel
    # group began to take their copies' room in the KV pool: llm_step.kv_copies)
    assert len(steady) == 12 and statistics.median(steady) >= 1.8
