"""The FLUX.1 [dev] and [schnell] presets: their traced transformer and VAE tables agree with the
preset's FLOPs, the pipeline's frozen modules (CLIP ViT-L/14, T5-v1.1-XXL encoder, 16-channel
VAE) are counted from their configs and held beside the transformer, and the engine prices
them through the same table path as the UNet presets."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import perf
from app.domain.activations import unet_unit
from app.domain.workload import (
    CLIP_L_TEXT_PARAMS,
    FLUX_VAE_PARAMS,
    T5_XXL_ENCODER_PARAMS,
    WorkloadSpec,
    guidance_distilled,
    memory_breakdown,
    model_offload,
    pipeline_frozen_params,
)
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PRESETS = load_presets(DATA)
FLUX = ("flux-1-dev", "flux-1-schnell")
GB = 1e9


def _work(preset: str, **kw: object) -> WorkloadSpec:
    p = PRESETS[preset]
    args: dict[str, object] = {
        "task": "inference",
        "model": p.model,
        "precision": p.defaults["precision"],
        "batch_size": 1,
        "runtime": "pytorch",
        "efficiency": load_efficiency(DATA),
    }
    args.update(kw)
    return WorkloadSpec(**args)  # type: ignore[arg-type]


def _header_params(path: Path) -> int:
    """The parameter count the generator wrote in a table's header comment."""
    m = re.search(r"; (\d+) parameters;", path.read_text(encoding="utf-8"))
    assert m is not None, path
    return int(m.group(1))


@pytest.mark.parametrize("preset", FLUX)
def test_flux_preset_flops_are_its_passes_plus_one_vae_decode(preset: str) -> None:
    m = PRESETS[preset].model
    assert m.family == "diffusion" and m.operators is not None
    assert m.decoder_operators is not None
    assert m.operators.model == preset and m.decoder_operators.model == preset
    per_pass = m.operators.gflops_forward
    vae = m.decoder_operators.gflops_forward
    assert per_pass is not None and vae is not None
    # the table's ops add up to its stated forward FLOPs
    assert m.operators.gflops == pytest.approx(per_pass, rel=1e-4)
    passes = m.passes_per_sample or 0
    assert m.gflops_per_sample == pytest.approx(passes * per_pass + vae, abs=1.0)


def test_flux_defaults_follow_diffusers_and_the_model_cards() -> None:
    dev, schnell = PRESETS["flux-1-dev"], PRESETS["flux-1-schnell"]
    # FluxPipeline: 28 steps, one transformer call a step (guidance-distilled); schnell: 4
    assert dev.model.passes_per_sample == 28 and schnell.model.passes_per_sample == 4
    assert dev.model.input_size == schnell.model.input_size == 1024
    assert dev.defaults["precision"] == schnell.defaults["precision"] == "bf16"
    # T5 prompt length: 512 (pipeline default) and 256 (schnell's card); it is the text stream
    # of every joint attention, beside (1024 / 16)^2 = 4096 packed image tokens
    for p, text in ((dev, 512), (schnell, 256)):
        table = p.model.operators
        assert table is not None and table.context_len == text == p.model.max_context
        att = {o["q_len"] for o in table.ops if o["kind"] == "attention"}
        assert att == {4096 + text}
        assert {o["m"] for o in table.ops if o["name"].endswith("attn.to_q")} == {4096, 4096 + text}


def test_flux_dev_differs_from_schnell_only_by_its_guidance_embedding() -> None:
    dev = _header_params(DATA / "operators" / "flux-1-dev.yaml")
    schnell = _header_params(DATA / "operators" / "flux-1-schnell.yaml")
    # guidance_embedder: linear_1 256 -> 3072 and linear_2 3072 -> 3072, with biases
    assert dev - schnell == (256 * 3072 + 3072) + (3072 * 3072 + 3072)
    # the preset's params are the traced transformer's
    assert PRESETS["flux-1-dev"].model.params == pytest.approx(dev, rel=1e-4)
    assert PRESETS["flux-1-schnell"].model.params == pytest.approx(schnell, rel=1e-4)


def test_t5_xxl_encoder_count_follows_from_its_config() -> None:
    # text_encoder_2/config.json: d_model 4096, d_ff 10240 (gated-GELU: wi_0, wi_1, wo),
    # 24 layers, 64 heads x d_kv 64, vocabulary 32128, 32 relative-attention buckets
    d, ff, layers, heads, kv, vocab, buckets = 4096, 10240, 24, 64, 64, 32128, 32
    attention = 4 * d * heads * kv
    mlp = 3 * d * ff
    norms = 2 * d
    count = vocab * d + layers * (attention + mlp + norms) + buckets * heads + d
    assert count == T5_XXL_ENCODER_PARAMS


@pytest.mark.parametrize("preset", FLUX)
def test_flux_pipeline_holds_both_text_encoders_and_its_vae(preset: str) -> None:
    parts = pipeline_frozen_params(PRESETS[preset].model)
    assert parts == {
        "text encoders": CLIP_L_TEXT_PARAMS + T5_XXL_ENCODER_PARAMS,
        "VAE": FLUX_VAE_PARAMS,
    }
    # the VAE count is the traced decoder's (16 latent channels, no post-quant conv)
    assert _header_params(DATA / "operators" / "vae" / f"{preset}.yaml") == FLUX_VAE_PARAMS


def test_flux_dev_bf16_weights_are_the_transformer_and_its_frozen_modules() -> None:
    work = _work("flux-1-dev")
    mem = memory_breakdown(work)
    frozen = CLIP_L_TEXT_PARAMS + T5_XXL_ENCODER_PARAMS + FLUX_VAE_PARAMS
    assert mem.weights == pytest.approx((PRESETS["flux-1-dev"].model.params + frozen) * 2 / GB)
    assert 33.5 < mem.weights < 34.0
    assert any("text encoders 4,885M" in n for n in mem.notes)
    # model CPU offload keeps the transformer alone: 23.8 GB in bf16, more than a 24 GB
    # GeForce card's usable memory; in fp8 it halves
    off = model_offload(work)
    assert off is not None
    assert off.memory.weights == pytest.approx(PRESETS["flux-1-dev"].model.params * 2 / GB)
    assert off.memory.weights > 23.7
    fp8 = model_offload(replace(work, precision="fp8"))
    assert fp8 is not None and fp8.memory.weights < 13.0


def test_flux_inference_is_priced_from_its_tables() -> None:
    work = _work("flux-1-dev")
    assert perf.table_prices(work)
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    flops = sum(o.total_flops for o in ops)
    # every transformer pass and the VAE decode: the preset's FLOPs
    assert flops == pytest.approx((work.model.gflops_per_sample or 0) * 1e9, rel=1e-3)
    assert any(o.phase == "decode" for o in ops)


def test_only_flux_denoisers_are_guidance_distilled() -> None:
    assert guidance_distilled(PRESETS["flux-1-dev"].model)
    assert guidance_distilled(PRESETS["flux-1-schnell"].model)
    # the UNet presets' passes are classifier-free-guidance pairs
    assert not guidance_distilled(PRESETS["sdxl"].model)
    assert not guidance_distilled(PRESETS["stable-diffusion-1.5"].model)
    # a model of unknown pipeline (no table) is not assumed distilled
    bare = replace(PRESETS["flux-1-dev"].model, operators=None)
    assert not guidance_distilled(bare)


def test_flux_runs_one_transformer_call_per_step() -> None:
    work = _work("flux-1-dev")
    m = work.model
    assert m.operators is not None and m.operators.aten_calls
    assert perf._guidance(m) == 1
    calls = perf.table_host_calls(work)
    dec = m.decoder_operators
    assert dec is not None and dec.aten_calls
    assert calls == pytest.approx(m.operators.aten_calls * 28 + dec.aten_calls)


def test_flux_blocks_are_checkpointed_units() -> None:
    assert unet_unit("transformer_blocks.[0-18].attn.to_q") == "transformer_blocks.[0-18]"
    assert (
        unet_unit("single_transformer_blocks.[0-37].proj_mlp") == "single_transformer_blocks.[0-37]"
    )
