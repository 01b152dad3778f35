"""The SGLang MoE decode tuning set (tests/data/sglang_moe_decode.yaml: DeepSeek-R1 NVFP4 on
4 x B200, InferenceX issue #863's profiled step) and its place in benchmarks/accuracy.py: priced
through the held-out path, the engine ~14 % too fast on it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUNING = ROOT / "tests" / "data" / "sglang_moe_decode.yaml"


def test_the_tuning_row_is_priced_through_the_held_out_path(accuracy) -> None:
    assert accuracy.SGLANG_MOE_FILE == TUNING
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [TUNING])
    assert not any(skipped.values()) and len(rows) == 1
    # measured ÷ predicted tokens/s: 0.79 before MLA's replicated cache (the engine 1.26x too
    # fast), 0.80 with it, 0.81 with MLA's 64-row head tile, 0.88 with the dense GEMMs' floors
    # beside the routed grouped GEMMs: still too fast (tests/domain/test_sglang_moe_decode.py)
    assert 0.85 < rows[0].measured / rows[0].predicted < 0.92
