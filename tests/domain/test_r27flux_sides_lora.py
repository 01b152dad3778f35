"""FLUX.1's image side and LoRA adapters (workload.diffusion_side_problem, lora_params).

FluxPipeline packs the 8×-downsampled latents into 2 × 2 patches, so a side must divide by 16
(pipeline_flux.py: ``check_inputs`` warns and ``prepare_latents`` floors to a multiple of
vae_scale_factor × 2). diffusers' FLUX LoRA script (examples/dreambooth/
train_dreambooth_lora_flux.py) adapts both streams' attention projections and feed-forwards,
not just the UNet scripts' to_q / to_k / to_v / to_out.0."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain.workload import (
    PACKED_SIDE_MULTIPLE,
    diffusion_side_multiple,
    diffusion_side_problem,
    lora_params,
)
from app.recommend.presets import load_presets

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)
FLUX = ("flux-1-dev", "flux-1-schnell")


@pytest.mark.parametrize("preset", FLUX)
def test_flux_sides_are_multiples_of_16(preset: str) -> None:
    m = PRESETS[preset].model
    assert diffusion_side_multiple(m) == PACKED_SIDE_MULTIPLE == 16
    for side in (512, 768, 1008, 1024, 1360):
        assert diffusion_side_problem(side, m) is None
    said = diffusion_side_problem(1000, m)
    assert said is not None and said.startswith("input_size 1000:")
    assert "multiple of 16" in said and "here to 992" in said
    assert said.endswith("e.g. 992")  # round(1000 / 16) = 62 (half to even)
    assert diffusion_side_problem(1016, m) is not None  # a multiple of 8, not of 16


@pytest.mark.parametrize("preset", ["sdxl", "stable-diffusion-1.5"])
def test_unet_sides_stay_multiples_of_8(preset: str) -> None:
    m = PRESETS[preset].model
    assert diffusion_side_multiple(m) == 8
    assert diffusion_side_problem(1000, m) is None
    assert diffusion_side_problem(1000) is None  # no model: the VAE's multiple


@pytest.mark.parametrize("preset", FLUX)
def test_flux_lora_adapts_what_diffusers_flux_script_targets(preset: str) -> None:
    m = PRESETS[preset].model
    h, ff = 3072, 4 * 3072
    # per double-stream block: to_q, to_k, to_v, to_out.0, add_q/k/v_proj, to_add_out (h -> h),
    # ff.net.0.proj and ff_context.net.0.proj (h -> ff), ff.net.2 and ff_context.net.2 (ff -> h)
    double = 8 * (h + h) + 4 * (h + ff)
    # per single-stream block: attn.to_q / to_k / to_v ("attn.to_q" ends their names too);
    # proj_mlp and proj_out are not targets
    single = 3 * (h + h)
    rank = 16
    assert lora_params(m, rank) == rank * (19 * double + 38 * single)


def test_a_unet_keeps_its_attention_targets() -> None:
    m = PRESETS["stable-diffusion-1.5"].model
    assert m.operators is not None
    attn = [
        o
        for o in m.operators.ops
        if o["kind"] == "gemm" and o["name"].endswith((".to_q", ".to_k", ".to_v", ".to_out.0"))
    ]
    assert lora_params(m, 4) == 4 * sum((o["k"] + o["n"]) * o["count"] for o in attn)
