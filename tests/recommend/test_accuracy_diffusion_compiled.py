"""The compiled diffusion tuning set (tests/data/diffusion_compiled.yaml) and its section in
benchmarks/accuracy.py: every row complete and priced under its own runtime, none drawn from a
held-out source (or from the documents the held-out compiled file names as copies of its
sources), and the section printed."""

from __future__ import annotations

from pathlib import Path

from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
TUNING = DATA / "diffusion_compiled.yaml"


def _doc(path: Path) -> dict:
    return yamlio.safe_load(path.read_text(encoding="utf-8"))


def _document(url: str) -> str:
    """A GitHub URL without its commit: the same document under another revision."""
    if "/blob/" not in url:
        return url
    head, tail = url.split("/blob/", 1)
    return head + "/" + tail.split("/", 1)[1]


def test_no_tuning_source_is_a_held_out_source() -> None:
    tuning = {s["url"] for s in _doc(TUNING)["sources"].values()}
    held = {s["url"] for p in DATA.glob("heldout_*.yaml") for s in _doc(p)["sources"].values()}
    assert not {_document(u) for u in tuning} & {_document(u) for u in held}
    # the held-out compiled file's sources, and the pages that repeat their experiments
    banned = ("stable-diffusion-xl-1.0-tensorrt", "fast_diffusion", "diffusion-fast",
              "torch2.0", "simple_sdxl_optimizations", "accelerating-generative-ai-3")  # fmt: skip
    assert not [u for u in tuning if any(b in u for b in banned)]


def test_every_row_is_sourced_compiled_and_priced(accuracy) -> None:
    doc = _doc(TUNING)
    rows = doc["measurements"]
    assert len(rows) >= 30
    for row in rows:
        assert row["source"] in doc["sources"]
        assert row["regime"] == "diffusion-compiled"
        assert row["runtime"] in ("torch-compile", "tensorrt")
        assert row["precision"] in ("fp16", "bf16")
        if row["metric"] == "seconds_per_batch":
            assert row.get("steps")
        # PyTorch 2.0 / 2.1 SDPA: FlashAttention-2 came with 2.2; TensorRT brings its own
        assert row.get("attention_kernel") == (
            "flash1" if row["runtime"] == "torch-compile" else None
        )
    scored, skipped = accuracy.evaluate_heldout(ROOT / "data", [TUNING])
    assert not skipped
    assert len(scored) == len(rows)
    assert all(r.predicted > 0 for r in scored)
    # both runtimes and both presets are present, on several architectures
    assert {r["runtime"] for r in rows} == {"torch-compile", "tensorrt"}
    assert {r["preset"] for r in rows} == {"stable-diffusion-1.5", "sdxl"}
    assert {r["gpu_slug"].split("-")[0] for r in rows} >= {"a100", "h100", "v100", "rtx"}


def test_the_section_prints_and_feeds_the_diffusion_band(accuracy, capsys) -> None:
    accuracy.print_diffusion_compiled(ROOT / "data", verbose=False)
    out = capsys.readouterr().out
    assert "Compiled diffusion, tuning set (tests/data/diffusion_compiled.yaml)" in out
    assert "diffusion-compiled" in out
    residuals = accuracy._batch_inference_residuals(ROOT / "data")
    compiled = [r for r in residuals if r[0] == "infer-diffusion" and r[1] != "pytorch"]
    sources = {r[5] for r in compiled}
    assert set(_doc(TUNING)["sources"]) <= sources
