"""benchmarks/diffusion_breakdown.py prices a compiled runtime on that runtime's stack (2026-12-06):
a GPU:batch:runtime asked for takes the compiled tuning set's row where it has one, and an
eager row re-pointed to another runtime drops its own stack fields (its FlashAttention v1
field is the eager harness's, not a TensorRT engine's)."""

from __future__ import annotations

from tests.support import load_benchmark


def _heads(capsys, *asks: str) -> list[str]:
    mod = load_benchmark("diffusion_breakdown.py", "diffusion_breakdown")
    assert mod.main(list(asks)) == 0
    return [ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("  ")]


def test_a_compiled_runtime_takes_its_own_row_or_drops_the_eager_stack(capsys) -> None:
    trt_row, trt_repointed, eager = _heads(
        capsys, "rtx-4090:1:tensorrt:fp16", "a10:1:tensorrt:fp16", "a10:1"
    )
    assert trt_row.endswith("(attention FA2)")  # the compiled set's TensorRT row
    assert trt_repointed.endswith("(attention FA2)")  # Lambda's A10 row, re-pointed
    assert eager.endswith("(attention flash1)")  # the eager row keeps its own stack


def test_stack_fields_are_what_a_row_says_of_its_harness() -> None:
    mod = load_benchmark("diffusion_breakdown.py", "diffusion_breakdown")
    rows = [{"gpu_slug": "a10", "batch_size": 1, "preset": "stable-diffusion-1.5",
             "runtime": "pytorch", "attention_kernel": "flash1"}]  # fmt: skip
    assert mod.tuning_row(rows, "a10", 1, None) is rows[0]
    assert mod.tuning_row(rows, "a10", 1, "tensorrt") is None
    assert "attention_kernel" in mod.STACK_FIELDS
