"""FLUX.1 LoRA on one 24 GB card, and FLUX.1 at fp8 (review rvA #2).

A 16-bit FLUX.1-dev base (11.9B parameters, 23.8 GB) does not fit a 24 GB card beside its
LoRA; a 4-bit NF4 base does, as https://huggingface.co/blog/flux-qlora trains it on an RTX 4090
(ai-toolkit's train_lora_flux_24gb.yaml quantises its base to 8 bits for the same reason). The
misfit's advice and the what-if list had tried batch sizes, more cards and bigger cards, never
the quantised base."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service, whatif, workloads

FLUX_LORA = {"preset": "flux-1-dev", "task": "fine-tuning", "peft": "lora", "batch_size": 1}


def _gpu(catalog: Any, slug: str) -> Any:
    return next(g for g in catalog[0] if g.slug == slug)


def _estimate(catalog: Any, slug: str, **body: Any) -> s.EstimateResponse:
    req = s.EstimateRequest.model_validate({"gpu": slug, **body})
    return service.estimate(req, _gpu(catalog, slug), catalog[2])


def _levers(**workload: Any) -> list[str]:
    segments = {"acquisition": "buy", "segments": ["consumer", "workstation"]}
    req = s.RecommendationRequest.model_validate({"workload": workload, "constraints": segments})
    work, _ = workloads.resolve_workload(req.workload)
    return [label for label, _ in whatif.variations(work, req)]


def test_the_lora_what_ifs_offer_the_4_bit_base_before_bigger_cards() -> None:
    levers = _levers(**FLUX_LORA)
    qlora = levers.index("QLoRA (4-bit base) instead of LoRA")
    assert qlora < levers.index("any kind of card")
    # a QLoRA job has its 4-bit base already; full fine-tuning keeps its own two levers
    assert "QLoRA (4-bit base) instead of LoRA" not in _levers(**{**FLUX_LORA, "peft": "qlora"})
    full = _levers(**{**FLUX_LORA, "peft": "none"})
    assert "QLoRA instead of full fine-tuning" in full
    assert "QLoRA (4-bit base) instead of LoRA" not in full


def test_a_4090_that_cannot_hold_flux_lora_is_told_the_4_bit_base_first(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "rtx-4090", workload=FLUX_LORA)
    assert est.result is None and est.excluded is not None
    assert est.excluded.code == "does_not_fit"
    # the one card asked about, alone, comes before more of them
    assert est.advice[0] == (
        "Fits with QLoRA (4-bit base) instead of LoRA: NVIDIA GeForce RTX 4090 holds it."
    )
    # and the QLoRA job it names does fit, under the card's 24 GB
    asked = _estimate(shipped_catalog, "rtx-4090", workload={**FLUX_LORA, "peft": "qlora"})
    assert asked.result is not None and asked.result.num_gpus == 1
    mem = asked.result.memory
    assert mem.available_gb is not None and mem.required_gb <= min(mem.available_gb, 24.0)


def test_fp8_is_a_lever_for_a_dit_not_for_a_unet() -> None:
    assert "fp8 instead of bf16" in _levers(preset="flux-1-dev", task="inference")
    assert "fp8 instead of bf16" not in _levers(preset="sdxl", task="inference")
    # full fine-tuning: FLUX's Linear layers train in fp8, a UNet's convolutions do not
    assert "fp8 instead of bf16" in _levers(preset="flux-1-dev", task="fine-tuning", peft="none")
    assert "fp8 instead of bf16" not in _levers(preset="sdxl", task="fine-tuning", peft="none")


def test_flux_inference_runs_at_fp8_on_an_h100(shipped_catalog) -> None:
    est = _estimate(
        shipped_catalog, "h100-sxm", workload={"preset": "flux-1-dev", "precision": "fp8"}
    )
    assert est.result is not None and est.result.precision == "fp8"
    assert not any("no fp8 for this model" in w for w in est.warnings)
    sdxl = _estimate(shipped_catalog, "h100-sxm", workload={"preset": "sdxl", "precision": "fp8"})
    assert sdxl.result is not None and sdxl.result.precision == "bf16"
