"""r31 review: on an RTX 3060 12GB, Llama 3 8B bf16 under vLLM was refused with "10.5 GiB
usable" while a row on the same card showed 10.6: the refusal took vLLM's startup reserve off
the usable memory, the row counted it in its workspace. Every figure said is now the runtime's
claim (evaluate.shown_memory), the reserve inside the need."""

from __future__ import annotations

import re
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain.units import vram
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import RULES, llm_inference

DATA = Path(__file__).resolve().parents[2] / "data"
RTX3060 = next(g for g in read_gpu_specs(DATA) if g.slug == "rtx-3060-12gb")


def _vllm(**kw: object) -> WorkloadSpec:
    return llm_inference(runtime="vllm", efficiency=load_efficiency(DATA), **kw)


def _ctx(work: WorkloadSpec, gpus: int | None = None) -> ev.Context:
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=gpus))


def _usable_said(text: str) -> float:
    return float(re.findall(r"([\d.]+) GiB usable", text)[0])


def test_the_refusal_and_the_row_give_one_usable_figure() -> None:
    big = _vllm(batch_size=8)  # 16 GB of bf16 weights: no 12 GB card holds them
    refused = ev.plan(RTX3060, _ctx(big, 1))
    assert isinstance(refused, ev.Exclusion) and refused.code == "does_not_fit"
    small = _vllm(batch_size=8, precision="int4")  # 4-bit weights: fits
    row = ev.evaluate(ev.Configuration(RTX3060, 1), _ctx(small, 1))
    assert row.exclusion is None
    # the claim (vLLM's 0.9 of what CUDA reports), the same on both, to the digit shown
    shown = float(f"{vram(row.available_gb):.1f}")
    assert _usable_said(refused.reason) == shown
    assert shown == float(f"{vram(ev.claimed_gb(RTX3060, big)):.1f}")


def test_the_reserve_is_in_the_need_not_off_the_usable_memory() -> None:
    work = _vllm(batch_size=8)
    need, usable = ev.shown_memory(RTX3060, work, 10.0)
    reserve = ev.startup_reserve_gb(RTX3060, work)
    assert reserve > 0.0
    assert need == 10.0 + reserve
    assert usable == ev.claimed_gb(RTX3060, work) == ev.usable_gb(RTX3060, work) + reserve
