"""The held-out validation set (tests/data/heldout_*.yaml) and its scorer in
benchmarks/accuracy.py.

The set is never tuned on, so nothing here holds the engine to an accuracy figure: the tests
check that every row is complete, sourced and distinct from the tuning files, that the engine
prices every row through its public entry point, and that the scorer ranks and ratios as
documented. The figures themselves are printed by ``python benchmarks/accuracy.py``.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest

from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FILES = sorted(DATA.glob("heldout_*.yaml"))
REQUIRED = {"regime", "source", "gpu_name", "gpu_slug", "precision", "runtime", "metric",
            "value", "unit"}  # fmt: skip
METRIC_NEEDS = {
    "samples_per_s": set(),
    "latency_ms": {"seq_len"},
    "denoise_steps_per_s": set(),
    "seconds_per_batch": {"steps"},
    "decode_tokens_per_s": {"prompt_tokens", "output_tokens", "num_gpus"},
    "tokens_per_s_per_gpu": {"seq_len", "num_gpus", "model"},
    # llama-bench ppN, TensorRT-LLM's first-token latency and static-batch throughput
    "prompt_tokens_per_s": {"seq_len", "num_gpus"},
    "ttft_ms": {"seq_len", "num_gpus"},
    "output_tokens_per_s_per_gpu": {"prompt_tokens", "output_tokens", "num_gpus"},
    # serving: one replica of num_gpus (tensor parallel) at saturation or a concurrency
    "output_tokens_per_s": {
        "prompt_tokens",
        "output_tokens",
        "num_gpus",
        "kv_cache_precision",
        "load",
    },
}


# Read once per session: the tests only read them, and ask for a file's models row by row
@functools.cache
def _rows() -> list[tuple[str, dict]]:
    out = []
    for path in FILES:
        doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
        out += [(path.name, row) for row in doc["measurements"]]
    return out


@functools.cache
def _models(name: str) -> dict:
    return yamlio.safe_load((DATA / name).read_text(encoding="utf-8")).get("models") or {}


def test_held_out_files_carry_the_warning_and_their_sources() -> None:
    assert FILES, "no held-out files"
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# HELD-OUT VALIDATION SET — never tuned on.")
        doc = yamlio.safe_load(text)
        for key, src in doc["sources"].items():
            assert src["url"].startswith("https://") and src["title"] and src["date"], key
        for row in doc["measurements"]:
            assert row["source"] in doc["sources"], row


def test_every_row_is_complete_and_names_known_presets_and_gpus(accuracy) -> None:
    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets

    presets = load_presets(ROOT / "data")
    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    for name, row in _rows():
        assert set(row) >= REQUIRED, (name, row)
        # a preset, or a decoder shape given in the file (with its source in the note)
        if "preset" in row:
            assert row["preset"] in presets, row
        else:
            shape = _models(name)[row["model"]]
            assert shape["params"] > 0 and shape["layers"] > 0 and shape["note"], row
        assert row["gpu_slug"] is None or row["gpu_slug"] in slugs, row
        assert row["metric"] in METRIC_NEEDS, row
        assert METRIC_NEEDS[row["metric"]] <= set(row), row
        assert row["value"] > 0, row
        # a batch, or (serving) the load: saturation or a number of requests in flight
        if row["regime"].startswith("serving"):
            assert row["load"] == "saturation" or row.get("concurrency", 0) >= 1, row
        else:
            assert row["batch_size"] >= 1, row


def _key(row: dict) -> tuple:
    return (
        row.get("gpu_slug"), row.get("preset") or row.get("model"), row.get("runtime"),
        row.get("precision"), int(row.get("batch_size") or 0), int(row.get("seq_len") or 0),
        int(row.get("num_gpus") or 1),
    )  # fmt: skip


def test_held_out_rows_do_not_repeat_a_tuning_row_or_each_other() -> None:
    tuning = yamlio.safe_load((DATA / "runtime_inference.yaml").read_text(encoding="utf-8"))
    seen = {_key(r) for r in tuning["measurements"]}
    assert not seen & {_key(row) for _, row in _rows()}
    full = [(*_key(row), row["regime"], row["metric"], row.get("steps"), row.get("peft"),
             row.get("note"), row["gpu_name"], row.get("quantization"), row.get("prompt_tokens"),
             row.get("output_tokens")) for _, row in _rows()]  # fmt: skip
    assert len(full) == len(set(full)), "duplicate held-out rows"


def test_the_engine_prices_every_held_out_row(accuracy) -> None:
    """Every row on a catalog GPU is priced; only the rows whose GPU the catalog lacks
    (gpu_slug null: GH200, the binned 7-core M1) and the rows whose file says the engine
    rejects the published configuration (``engine_rejects``: a run that completed, which the
    engine finds does not fit — a miss, kept in view) are left out, and they are listed."""
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", FILES)
    unmapped = [row for _, row in _rows() if row["gpu_slug"] is None]
    rejected = [row for _, row in _rows() if row["gpu_slug"] and row.get("engine_rejects")]
    assert sum(len(v) for v in skipped.values()) == len(unmapped) + len(rejected)
    assert len(rows) == len(_rows()) - len(unmapped) - len(rejected)
    assert all(math.isfinite(r.predicted) and r.predicted > 0 for r in rows)
    names = {r.regime for r in rows}
    assert {"cnn-training", "tf-cnn-inference", "diffusion-eager", "bert-tensorrt",
            "moe-decode", "eager-decode", "pytorch-cnn-inference", "llm-pretraining",
            "llm-finetuning", "llamacpp-decode", "llamacpp-prefill", "llamacpp-split-decode",
            "llamacpp-split-prefill", "trtllm-static-batch", "trtllm-first-token",
            "serving-trtllm", "timm-infer-eager", "timm-infer-compile",
            "timm-train"} <= names  # fmt: skip


def _urls(node: object) -> set[str]:
    if isinstance(node, dict):
        return {u for k, v in node.items() for u in (_urls(v) | ({v} if k == "url" else set()))}
    if isinstance(node, list):
        return {u for v in node for u in _urls(v)}
    return set()


def test_no_held_out_source_is_a_tuning_source() -> None:
    """A held-out file's sources appear in no tuning file (tests/data/*.yaml without the
    heldout_ prefix) and in no shipped data file's sources."""
    held = {
        s["url"] for p in FILES for s in yamlio.safe_load(p.read_text("utf-8"))["sources"].values()
    }
    tuning = set()
    for p in [*DATA.glob("*.yaml"), *(ROOT / "data").glob("*.yaml")]:
        if not p.name.startswith("heldout_"):
            tuning |= _urls(yamlio.safe_load(p.read_text("utf-8")))
    assert not held & tuning


def test_held_out_serving_rows_are_not_tuning_configurations() -> None:
    """The held-out serving rows leave out every configuration the serving tuning files
    hold at the same load (Llama 3.3 70B is Llama 3.1 70B's shape), whatever the release. The
    load is part of the configuration: AMD's static batches of 1-128 requests
    (serving_rocm_vllm_latency.yaml) share model, GPUs and shapes with the held-out saturation
    rows of heldout_rocm_vllm.yaml (500-3200 prompts queued), a different measurement."""
    same = {"llama-3.3-70b": "llama-3.1-70b"}
    tuned = {
        (same.get(r["model"], r["model"]), r["gpu"], r["tp"], r["precision"], r["isl"], r["osl"],
         r.get("concurrency"))
        for p in DATA.glob("serving_*.yaml")
        for r in yamlio.safe_load(p.read_text("utf-8"))["rows"]
    }  # fmt: skip
    serving = [row for _, row in _rows() if row["regime"].startswith("serving")]
    assert serving
    for row in serving:
        key = (row.get("preset") or row["model"], row["gpu_slug"], row["num_gpus"], row["precision"],
               row["prompt_tokens"], row["output_tokens"], row.get("concurrency"))  # fmt: skip
        assert key not in tuned, row


def test_new_metrics_read_the_estimate_as_published(accuracy) -> None:
    """prompt_tokens_per_s = prompt ÷ time to first token; ttft_ms = the first token's
    latency (a latency: lower is better); output_tokens_per_s_per_gpu = the whole request's
    tokens/s (prefill and every step) ÷ GPUs."""
    from app.domain.perf import PerfEstimate

    est = PerfEstimate(
        throughput=1200.0, unit="tokens/s", step_time_s=1.0, bottleneck="compute", compute_s=1.0,
        memory_s=0.0, overhead_s=0.0, host_s=0.0, comm_s=0.0, num_gpus=4,
        scaling_efficiency=1.0, compute_precision="fp16", efficiency_source="prior",
        ttft_ms=50.0, ms_per_token=10.0,
    )  # fmt: skip
    assert accuracy._in_metric("prompt_tokens_per_s", est, 2, 512) == pytest.approx(2 * 512 / 0.05)
    assert accuracy._in_metric("ttft_ms", est, 1) == pytest.approx(50.0)
    assert accuracy._in_metric("output_tokens_per_s_per_gpu", est, 8) == pytest.approx(300.0)
    assert "ttft_ms" in accuracy._LOWER_IS_BETTER


def test_the_new_sets_score_per_regime(accuracy) -> None:
    """Scoring runs on the issue-21 sets: llama.cpp (one GPU and layer split kept apart by
    their span), TensorRT-LLM static batches and first tokens, serving at saturation."""
    new = [DATA / n for n in ("heldout_llamacpp_llama3.yaml", "heldout_trtllm_v06.yaml",
                              "heldout_serving_trtllm_v017.yaml")]  # fmt: skip
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", new)
    scores = {s.regime: s for s in accuracy.heldout_scores(rows)}
    assert set(scores) == {"llamacpp-decode", "llamacpp-prefill", "llamacpp-split-decode",
                           "llamacpp-split-prefill", "trtllm-static-batch",
                           "trtllm-first-token", "serving-trtllm"}  # fmt: skip
    for s in scores.values():
        assert s.n >= 10 and math.isfinite(s.median_ratio) and s.median_ratio >= 1.0
    # a group is one workload: a split group holds one GPU count, so no GPU twice
    for r in rows:
        group = [x for x in rows if x.regime == r.regime and x.group == r.group]
        assert len({x.slug for x in group}) == len(group), r.group
    assert scores["serving-trtllm"].group_spearman  # groups of three GPUs or more


def test_scores_rank_latencies_as_rates_and_ratio_symmetrically(accuracy) -> None:
    Row = accuracy.HeldoutRow
    rows = [
        # latencies: the engine orders the three GPUs as measured, at twice the time
        Row("r", "g", "a", "latency_ms", 1.0, 2.0),
        Row("r", "g", "b", "latency_ms", 2.0, 4.0),
        Row("r", "g", "c", "latency_ms", 4.0, 8.0),
    ]
    (score,) = accuracy.heldout_scores(rows)
    assert score.median_ratio == pytest.approx(2.0)
    assert score.bias == pytest.approx(2.0)  # measured rate ÷ predicted rate: engine too slow
    assert score.spearman == pytest.approx(1.0)
    assert score.group_spearman == [pytest.approx(1.0)]
    flipped = [Row("r", "g", r.slug, r.metric, r.measured, 1 / r.predicted) for r in rows]
    (worse,) = accuracy.heldout_scores(flipped)
    assert worse.spearman == pytest.approx(-1.0)


def test_groups_need_three_gpus(accuracy) -> None:
    Row = accuracy.HeldoutRow
    rows = [Row("r", "g1", "a", "samples_per_s", 1.0, 1.0), Row("r", "g1", "b", "samples_per_s", 2.0, 3.0),
            Row("r", "g2", "a", "samples_per_s", 5.0, 5.0)]  # fmt: skip
    (score,) = accuracy.heldout_scores(rows)
    assert score.group_spearman == []
    assert score.n == 3


def test_a_fine_tuning_group_is_one_method(accuracy) -> None:
    """LoRA, QLoRA and full fine-tuning of one model at one batch are different jobs: the
    group (one workload across GPUs) keeps them apart, so no group holds a GPU twice."""
    base = {"model": "llama2-7b", "runtime": "pytorch", "precision": "fp16", "batch_size": 1,
            "seq_len": 256, "metric": "tokens_per_s_per_gpu", "source": "s"}  # fmt: skip
    groups = {accuracy._heldout_group({**base, "peft": p}) for p in ("none", "lora", "qlora")}
    assert len(groups) == 3
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [DATA / "heldout_finetune.yaml"])
    for r in rows:
        group = [x for x in rows if x.group == r.group]
        assert len({x.slug for x in group}) == len(group), r.group


def test_the_enlarged_small_regimes_are_priced(accuracy) -> None:
    """The 2026-12-02 additions to the once-tiny regimes (eager decode, fine-tuning, MoE
    decode, CNN training) are all priced, none left out."""
    files = [DATA / n for n in ("heldout_eager_decode.yaml", "heldout_finetune.yaml",
                                "heldout_moe_decode.yaml", "heldout_cnn_training.yaml")]  # fmt: skip
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", files)
    assert not skipped
    n = {s.regime: s.n for s in accuracy.heldout_scores(rows)}
    assert n == {"eager-decode": 19, "llm-finetuning": 32, "moe-decode": 5, "cnn-training": 13}
