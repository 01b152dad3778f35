"""FLUX.1 on a card without bf16 (Turing, Volta) runs at fp16, which is no plain bf16 run:
diffusers clips some of its activations to run it so (huggingface/diffusers PR #9097) and its
Flux docs ("Running FP16 inference") say the images differ from FP32/BF16. A hobbyist's
$3,000 FLUX.1 [dev] question had put a used Quadro RTX 8000 first with only "no bf16
support; estimated at fp16" said of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest

from app.domain import cost
from app.domain import evaluate as ev
from app.domain.gpu import GpuSpec
from app.domain.workload import FLUX_FP16_NOTE, WorkloadSpec, fp16_clipped
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules

Catalog = tuple[list[GpuSpec], Mapping[str, cost.GpuOffers], object]
RULES = load_rules()


@pytest.fixture(scope="module")
def gpus(shipped_catalog: Catalog) -> dict[str, GpuSpec]:
    return {g.slug: g for g in shipped_catalog[0]}


def _work(preset: str, **kw: object) -> WorkloadSpec:
    req = s.RecommendationRequest.model_validate({"workload": {"preset": preset, **kw}})
    work, _ = service._resolve(req, service.DATA_DIR)
    return work


def _gate(gpu: GpuSpec, work: WorkloadSpec) -> ev.Gate:
    ctx = ev.Context(work=work, rules=RULES)
    return ev.gate(gpu, work.precision, work.runtime, ctx)


@pytest.mark.parametrize("preset", ["flux-1-dev", "flux-1-schnell"])
def test_flux_on_a_card_without_bf16_says_fp16_changes_its_images(
    gpus: dict[str, GpuSpec], preset: str
) -> None:
    work = _work(preset, task="inference")
    assert fp16_clipped(work.model)
    got = _gate(gpus["quadro-rtx-8000"], work)
    assert got.precision == "fp16", got
    assert FLUX_FP16_NOTE in got.warnings, got.warnings
    assert "PR #9097" in FLUX_FP16_NOTE and "Running FP16 inference" in FLUX_FP16_NOTE


def test_flux_at_bf16_and_sdxl_at_fp16_say_nothing_of_it(gpus: dict[str, GpuSpec]) -> None:
    # a card with bf16 runs FLUX as asked
    flux = _work("flux-1-dev", task="inference")
    assert _gate(gpus["l40"], flux).precision == "bf16"
    assert FLUX_FP16_NOTE not in _gate(gpus["l40"], flux).warnings
    # SDXL's UNet is no FLUX: fp16 is its usual precision
    sdxl = _work("sdxl", task="inference")
    assert not fp16_clipped(sdxl.model)
    assert FLUX_FP16_NOTE not in _gate(gpus["quadro-rtx-8000"], sdxl).warnings
    # the gate is memoised on the rules: a FLUX gate first must not leak into a DiT-shaped
    # model of the same family without FLUX's table
    bare = replace(flux, model=replace(flux.model, operators=None))
    assert not fp16_clipped(bare.model)
    _gate(gpus["quadro-rtx-8000"], flux)
    assert FLUX_FP16_NOTE not in _gate(gpus["quadro-rtx-8000"], bare).warnings
