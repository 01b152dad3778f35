"""r34po: an exclusion's figures follow the pages' one rule, three significant figures
(figures.sig_figs, README "three significant figures"): a new user read "needs 140.0 GiB" in
a reason beside rows and pages that write 140."""

from __future__ import annotations

import re
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain.units import GIB_PER_GB, gib
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import RULES, llm_inference

DATA = Path(__file__).resolve().parents[2] / "data"
RTX3060 = next(g for g in read_gpu_specs(DATA) if g.slug == "rtx-3060-12gb")


def test_gib_writes_three_significant_figures() -> None:
    assert gib(140 * GIB_PER_GB) == "140"
    assert gib(7.083 * GIB_PER_GB) == "7.08"
    assert gib(0.0883 * GIB_PER_GB) == "0.0883"
    assert gib(4554.3 * GIB_PER_GB) == "4,554"


def _too_many_figures(text: str) -> list[str]:
    """Each "<figure> GiB" written with more than three significant figures below 1,000."""
    out = []
    for fig in re.findall(r"([\d,]+(?:\.\d+)?) GiB", text):
        whole, _, frac = fig.replace(",", "").partition(".")
        digits = (whole.lstrip("0") + frac).lstrip("0") if whole != "0" else frac.lstrip("0")
        if frac and len(digits) > 3:
            out.append(fig)
    return out


def test_a_misfit_reason_writes_its_memory_as_the_pages_do() -> None:
    work = llm_inference(runtime="vllm", efficiency=load_efficiency(DATA), batch_size=1)
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=1))
    total = 150.0  # GB on one GPU: far more than a 12 GB card holds
    reason = ev.too_big(RTX3060, ctx, work, total, 1).reason
    need, claim = ev.shown_memory(RTX3060, work, total)
    assert f"needs {gib(need)} GiB on one GPU" in reason, reason
    assert f"{gib(claim)} GiB usable" in reason, reason
    assert not _too_many_figures(reason), reason
    assert ".0 GiB" not in reason  # "140.0 GiB": a fourth figure that says nothing
