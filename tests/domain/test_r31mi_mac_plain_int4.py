"""Plain int4 weights (no format named) under Transformers on a Mac: Metal has no GPTQ or AWQ
kernels, so the only 4-bit path is bitsandbytes NF4 on its MPS backend; the row is admitted
with that caveat (experimental), not as if GPTQ/AWQ-style kernels ran (closing review, r31)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"


def _mac() -> Any:
    return next(g for g in read_gpu_specs(DATA) if g.slug == "apple-m2-ultra")


def test_plain_int4_on_metal_is_experimental_and_names_nf4() -> None:
    st = compat.weights_status(_mac(), "transformers", "int4", load_rules(DATA), "mps")
    assert st is not None and st.status == "experimental"
    assert "NF4" in (st.note or "") and "GPTQ" in (st.note or "")


def test_a_named_format_keeps_its_own_rule_on_metal() -> None:
    awq = compat.weights_status(_mac(), "transformers", "int4", load_rules(DATA), "mps", "awq")
    assert awq is not None and awq.status == "unsupported"
