"""Plain int4 weights under Transformers on a Mac run as bitsandbytes NF4 (the
`transformers-weights:int4` rule's `runs_as`, data/frameworks.yaml): the format a row's quality
note is costed as (README, thirty-first session's leftovers)."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
RULES = load_rules(DATA)
BY = {g.slug: g for g in read_gpu_specs(DATA)}


def test_plain_int4_on_metal_runs_as_nf4() -> None:
    mac = BY["apple-m2-ultra"]
    assert compat.weights_run_as(mac, "transformers", "int4", RULES, "mps") == "nf4"
    # the status the gate reads carries it
    st = compat.weights_status(mac, "transformers", "int4", RULES, "mps")
    assert st is not None and st.runs_as == "nf4"


def test_a_named_format_or_another_card_keeps_its_own() -> None:
    mac = BY["apple-m2-ultra"]
    assert compat.weights_run_as(mac, "transformers", "int4", RULES, "mps", "q4_k_m") == "q4_k_m"
    # a CUDA card's Transformers int4 is no one format (GPTQ, AWQ, bitsandbytes all run)
    assert compat.weights_run_as(BY["rtx-4090"], "transformers", "int4", RULES, "cuda") is None
    # MLX on the Mac reads its own 4-bit format, not bitsandbytes'
    assert compat.weights_run_as(mac, "mlx", "int4", RULES, "mps") is None
