"""AMD rows a review questioned (session 34, rc): what the answer says, not a new speed.

- A used MI100 (CDNA1, gfx908) ranks first for an SDXL LoRA under $1,000, ahead of RDNA
  cards and level with an RTX 4090. gfx908 stays in PyTorch's ROCm wheels and in bitsandbytes
  0.50.2's, so its support level stands; what is sourced against it is MIOpen's convolutions
  (ROCm/MIOpen#3865, #3310), which the row's band must name: no published figure prices a
  factor, so none is applied.
- A QLoRA job on a Vega card (Radeon Pro VII, gfx906) is ranked with the caveat that the
  bitsandbytes wheels carry no kernel for it, where it had read as plainly supported."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service

SDXL_LORA = {"preset": "sdxl", "task": "fine-tuning", "peft": "lora"}
QLORA_8B = {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"}


def _estimate(catalog: Any, slug: str, workload: dict[str, Any]) -> s.EstimateResponse:
    gpu = next(g for g in catalog[0] if g.slug == slug)
    req = s.EstimateRequest.model_validate({"gpu": slug, "workload": workload})
    return service.estimate(req, gpu, catalog[2])


def test_the_mi100_sdxl_lora_row_names_miopen_in_its_band(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "mi100", SDXL_LORA)
    assert est.result is not None
    band = est.result.uncertainty
    assert "MIOpen" in band.basis and "likely overstates" in band.basis
    # the same job on a cuDNN card carries no such reason and a narrower band
    nv = _estimate(shipped_catalog, "rtx-4090", SDXL_LORA)
    assert nv.result is not None and "MIOpen" not in nv.result.uncertainty.basis
    assert band.factor_low < nv.result.uncertainty.factor_low
    # supported software: no experimental caveat on the MI100's row
    assert not any("experimental" in w for w in est.warnings)


def test_a_radeon_pro_vii_qlora_row_says_the_wheels_lack_its_target(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "radeon-pro-vii", QLORA_8B)
    assert est.result is not None
    said = [
        w for w in est.warnings if w.startswith("QLoRA (bitsandbytes 4-bit) on AMD GPUs (ROCm)")
    ]
    assert len(said) == 1 and "0.50.2" in said[0] and "-DBNB_ROCM_ARCH" in said[0]
    # the MI100's QLoRA row, in the wheels' targets, says nothing of the kind
    mi100 = _estimate(shipped_catalog, "mi100", QLORA_8B)
    assert mi100.result is not None
    assert not any(w.startswith("QLoRA (bitsandbytes 4-bit)") for w in mi100.warnings)
