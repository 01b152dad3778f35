"""A diffusion UNet's training memory per operator of its traced table, and the pipeline's
frozen text encoders and VAE (app/domain/activations.py unet_saved, workload.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import activations as a
from app.domain import workload as w
from app.domain.operators import ForwardTable
from app.recommend.presets import load_presets

DATA = Path(__file__).resolve().parents[2] / "data"

# one resnet (norm, silu, conv) and one transformer block (norm, q/k/v, SDPA), then a conv
# outside both, per sample
TABLE = ForwardTable(
    model="toy",
    source="hand-built",
    gflops_forward=None,
    ops=(
        {"kind": "norm", "name": "down.resnets.0.norm1", "count": 1, "elements_in": 100,
         "elements_out": 100, "groups": 32},
        {"kind": "elementwise", "name": "down.resnets.0.nonlinearity:silu", "count": 1,
         "elements_in": 100, "elements_out": 100},
        {"kind": "conv", "name": "down.resnets.0.conv1", "count": 1, "c_in": 4, "c_out": 4,
         "h_in": 5, "w_in": 5, "h_out": 5, "w_out": 5, "r": 3, "s": 3},
        {"kind": "elementwise", "name": "down.resnets.0:add", "count": 1, "elements_in": 200,
         "elements_out": 100},
        {"kind": "norm", "name": "down.attentions.0.transformer_blocks.[0-1].norm1", "count": 2,
         "elements_in": 50, "elements_out": 50},
        {"kind": "gemm", "name": "down.attentions.0.transformer_blocks.[0-1].attn1.to_q",
         "count": 2, "m": 10, "n": 5, "k": 5},
        {"kind": "attention", "name": "down.attentions.0.transformer_blocks.[0-1].attn1",
         "count": 2, "q_len": 10, "kv_len": 10, "heads": 1, "head_dim": 5},
        {"kind": "conv", "name": "down.downsamplers.0.conv", "count": 1, "c_in": 4, "c_out": 4,
         "h_in": 5, "w_in": 5, "h_out": 3, "w_out": 3, "r": 3, "s": 3, "stride": 2},
    ),
)  # fmt: skip


def test_unet_units_are_resnets_and_transformer_blocks() -> None:
    assert a.unet_unit("down_blocks.0.resnets.[0-1].conv1") == "down_blocks.0.resnets.[0-1]"
    assert a.unet_unit("down_blocks.0.resnets.[0-1]:add") == "down_blocks.0.resnets.[0-1]"
    name = "up_blocks.0.attentions.[0-2].transformer_blocks.[0-9].attn2.to_k"
    assert a.unet_unit(name) == "up_blocks.0.attentions.[0-2].transformer_blocks.[0-9]"
    assert a.unet_unit("down_blocks.1.attentions.0.proj_in") is None
    assert a.unet_unit("conv_in") is None


def test_unet_saved_counts_outputs_of_saving_ops_and_sdpa_without_scores() -> None:
    # norm 100, silu 100, conv 100, add nothing; per block: norm 50, q 50, attention out 50
    # plus a 4-byte log-sum-exp per query and head (10); downsampler 36 — at 2 bytes
    block = 2 * (50 + 50 + 50) + 4 * 10
    full = 2 * (100 + 100 + 100) + 2 * block + 2 * 36
    assert a.unet_saved(TABLE, compute=2, norm=2, checkpointing=False) == full
    # autocast's fp32 norms
    wide = full + 2 * 100 + 2 * 2 * 50
    assert a.unet_saved(TABLE, compute=2, norm=4, checkpointing=False) == wide


def test_checkpointed_unet_keeps_unit_inputs_and_the_largest_unit_once() -> None:
    # the resnet's input (100), each block's input (50 × 2), the downsampler (36) outside,
    # and the largest unit recomputed: the resnet, 300 elements
    kept = 2 * (100 + 2 * 50 + 36) + 2 * 300
    assert a.unet_saved(TABLE, compute=2, norm=2, checkpointing=True) == kept


@pytest.fixture(scope="module")
def sdxl() -> w.ModelSpec:
    return load_presets(DATA)["sdxl"].model


def _lora(model: w.ModelSpec, checkpointing: bool) -> w.WorkloadSpec:
    one_pass = replace(model, passes_per_sample=1)
    return w.WorkloadSpec(
        model=one_pass, task="fine-tuning", precision="fp16", batch_size=1, peft="lora",
        lora_rank=8, optimizer="adam8bit", gradient_checkpointing=checkpointing,
    )  # fmt: skip


def test_sdxl_lora_fits_kohyas_8_to_10_gb_with_checkpointing(sdxl: w.ModelSpec) -> None:
    """kohya-ss sd-scripts README, "Tips for SDXL training": LoRA "can be done with 8GB GPU
    memory (10GB recommended)" training the U-Net only, with gradient checkpointing, cached
    latents and text-encoder outputs, an 8-bit optimizer, dim 4 to 8, 1024 x 1024."""
    mem = w.memory_breakdown(_lora(sdxl, True))
    cached = sum(w.PIPELINE_FROZEN_PARAMS["sdxl"].values()) * 2 / w.GB
    assert 7.0 < mem.total - cached < 8.5  # kohya's setup holds no encoders
    assert mem.total < 10.0  # diffusers' README_sdxl: "less than 16GB of VRAM"
    assert mem.activations < 1.0
    # the former proxy (6 MB per GFLOP, a fifth kept) gave 8.4 GB of activations
    assert w.memory_breakdown(_lora(sdxl, False)).activations > 5 * mem.activations


def test_diffusion_pipelines_hold_their_text_encoders_and_vae(sdxl: w.ModelSpec) -> None:
    infer = w.WorkloadSpec(model=sdxl, task="inference", precision="fp16", batch_size=1)
    mem = w.memory_breakdown(infer)
    unet = sdxl.params * 2 / w.GB
    extra = (123_060_480 + 694_659_840 + 83_653_863) * 2 / w.GB
    assert mem.weights == pytest.approx(unet + extra)
    assert any("text encoders" in n for n in mem.notes)
    assert 8.0 < mem.total < 10.0  # SDXL fp16 at 1024² in diffusers: ~8–10 GB published
    # a custom diffusion model with no traced table holds only what it states
    bare = replace(infer, model=replace(sdxl, operators=None, decoder_operators=None))
    assert w.memory_breakdown(bare).weights == pytest.approx(unet)


def test_unet_lora_adapts_the_attention_projections(sdxl: w.ModelSpec) -> None:
    # diffusers' SDXL LoRA scripts: target_modules to_k, to_q, to_v, to_out.0
    # and nothing else: 1.45M parameters per unit of rank (rank 4: 5.8M, 23 MB in fp32)
    n = w.lora_params(sdxl, 8)
    assert n == pytest.approx(11.61e6, rel=0.01)
    assert w.lora_params(sdxl, 4) == n / 2
