"""The gpt-fast batch-1 decode tuning set (tests/data/gptfast_decode.yaml: dense Llama 2 and
Mixtral 8x7B under torch.compile on 1-8 A100s) and its place in benchmarks/accuracy.py: every
row sourced and priced, none a held-out row, its results calibrating the decode band as the
runtime torch-compile, the Mixtral rows as MoE units."""

from __future__ import annotations

from pathlib import Path

from app.shipped import yamlio
from tests.support import held_out_source_urls

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
TUNING = DATA / "gptfast_decode.yaml"


def _doc(path: Path) -> dict:
    return yamlio.safe_load(path.read_text(encoding="utf-8"))


def test_every_row_is_sourced_and_none_is_held_out() -> None:
    doc = _doc(TUNING)
    assert not {s["url"] for s in doc["sources"].values()} & held_out_source_urls(DATA)
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"] and row["runtime"] == "torch-compile"
        assert (row.get("model") in doc["models"]) != (row.get("preset") == "mixtral-8x7b")
        assert row["batch_size"] == 1 and row["gpu_slug"] == "a100-sxm4-80gb"
    assert sum(1 for r in doc["measurements"] if r.get("preset")) == 7


def test_every_row_is_priced(accuracy) -> None:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [TUNING])
    assert not any(skipped.values())
    assert len(rows) == len(_doc(TUNING)["measurements"])
    assert all(r.predicted > 0 for r in rows)


def test_the_rows_calibrate_decode_as_torch_compile_and_mixtral_as_moe(accuracy) -> None:
    res = accuracy.gptfast_residuals(ROOT / "data")
    assert len(res) == len(_doc(TUNING)["measurements"])
    assert {(r[0], r[1]) for r in res} == {("decode", "torch-compile")}
    presets = accuracy.load_presets(ROOT / "data")
    flags = [accuracy._flags(r[0], r[2], presets) for r in res]
    assert [f[0] for f in flags] == [r[2].startswith("gptfast mixtral-8x7b ") for r in res]
    assert sum(f[0] for f in flags) == 7 and not any(f[1] for f in flags)
    assert [f[2] for f in flags] == [not r[2].endswith(" tp1") for r in res]
    # the GPU count tells the workloads apart: each (model, weights, count) is its own
    assert len({r[2] for r in res}) == len(res)


def test_moe_decode_at_one_token_misses_as_the_dense_models_do(accuracy) -> None:
    # 2026-12-02: on the same box and runtime, Mixtral at batch 1 scored bias 0.82 against
    # Llama 2 7B's 0.84 and 70B's 0.83 — no MoE-specific error at one token to correct; an
    # MoE-only change that opens a gap between them must show it is sourced
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [TUNING])
    bias = {}
    for model in ("mixtral-8x7b", "llama-2-7b", "llama-2-70b"):
        (s,) = accuracy.heldout_scores([r for r in rows if r.group.split()[0] == model])
        bias[model] = s.bias
    dense = (bias["llama-2-7b"] + bias["llama-2-70b"]) / 2
    # later the same day: the routed block's small kernels (data/efficiency.yaml moe_block_us,
    # sourced from FlashInfer PR #5301's B200 sweep of TensorRT-LLM's MoE kernels) add 32 × 21
    # µs to each Mixtral token: its bias moved from 0.82 to 0.92, towards 1, while the dense
    # models stay at 0.84 — the gap (~11 %) is that sourced term's, and no more than it
    assert abs(bias["mixtral-8x7b"] / dense - 1) < 0.15
    assert abs(bias["mixtral-8x7b"] - 1) < abs(dense - 1)


def test_rows_of_one_gpu_are_banded_by_their_workloads(accuracy) -> None:
    # 2026-12-02: gpt-fast's 17 rows on one A100 got decode/torch-compile [0.23, 2.69]: the
    # leave-one-GPU-out fit had no other GPU to score and widened to its last step
    ratios = [0.73, 0.76, 0.78, 0.78, 0.8, 0.81, 0.82, 0.82, 0.82, 0.83, 0.84, 0.86, 0.87, 0.87]
    one = [
        accuracy.CalRow("decode", "torch-compile", f"w{i}", "a100", "nvidia", "Ampere", r)
        for i, r in enumerate(ratios)
    ]
    (band,) = [b for b in accuracy.bands_of(one) if b.vendor == "all"]
    assert band.unit == "workload" and band.coverage >= 0.8
    assert 0.6 < band.low <= min(ratios) and max(ratios) < band.high <= 1.1
    # several GPUs keep both hold-outs
    two = [r if i % 2 else accuracy.replace(r, slug="h100") for i, r in enumerate(one)]
    (band2,) = [b for b in accuracy.bands_of(two) if b.vendor == "all"]
    assert band2.unit == "GPU+workload"
