"""FLUX.1's prompt encoders, priced once per image: FluxPipeline.encode_prompt runs the CLIP
ViT-L/14 text model over 77 tokens and the T5-v1.1-XXL encoder over max_sequence_length tokens
(512 for [dev], 256 for [schnell]) once, before the denoising loop. Their ops sit in the
pipeline's once-per-image table (data/operators/vae/flux-*.yaml, beside the VAE decode), traced
from the published text_encoder / text_encoder_2 configs, and the preset's FLOPs count them."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import perf
from app.domain.workload import CLIP_L_TEXT_PARAMS, T5_XXL_ENCODER_PARAMS, WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)

# text_encoder_2/config.json (T5EncoderModel): d_model 4096, d_ff 10240 gated-GELU (wi_0, wi_1,
# wo), 24 layers, 64 heads of d_kv 64; text_encoder/config.json (CLIPTextModel): 768 wide,
# 3072 MLP, 12 layers of 12 heads
T5 = {"layers": 24, "d": 4096, "ff": 10240, "heads": 64, "kv": 64}
CLIP = {"layers": 12, "d": 768, "ff": 3072, "heads": 12, "tokens": 77}


def _t5_gflops(tokens: int) -> float:
    d, ff, h, kv = T5["d"], T5["ff"], T5["heads"], T5["kv"]
    linears = 2 * tokens * (4 * d * h * kv + 3 * d * ff)
    attention = 4 * h * tokens * tokens * kv
    return T5["layers"] * (linears + attention) / 1e9


def _clip_gflops() -> float:
    d, ff, t = CLIP["d"], CLIP["ff"], CLIP["tokens"]
    linears = 2 * t * (4 * d * d + 2 * d * ff)
    attention = 4 * t * t * d  # heads × head_dim = d
    return CLIP["layers"] * (linears + attention) / 1e9


def _encoder_gflops(preset: str, prefix: str) -> float:
    once = PRESETS[preset].model.decoder_operators
    assert once is not None
    total = 0.0
    for o in once.ops:
        if not o["name"].startswith(prefix + "."):
            continue
        if o["kind"] == "gemm":
            total += 2 * o["m"] * o["n"] * o["k"] * o["count"]
        elif o["kind"] == "attention":
            total += 4 * o["heads"] * o["q_len"] * o["kv_len"] * o["head_dim"] * o["count"]
    return total / 1e9


@pytest.mark.parametrize(("preset", "tokens"), [("flux-1-dev", 512), ("flux-1-schnell", 256)])
def test_the_t5_and_clip_passes_follow_from_their_configs(preset: str, tokens: int) -> None:
    assert _encoder_gflops(preset, "text_encoder_2") == pytest.approx(_t5_gflops(tokens))
    assert _encoder_gflops(preset, "text_encoder") == pytest.approx(_clip_gflops())
    once = PRESETS[preset].model.decoder_operators
    assert once is not None
    t5_att = [o for o in once.ops if o["kind"] == "attention" and "text_encoder_2" in o["name"]]
    assert sum(o["count"] for o in t5_att) == T5["layers"]
    assert {(o["q_len"], o["heads"], o["head_dim"]) for o in t5_att} == {(tokens, 64, 64)}
    wi = [o for o in once.ops if o["name"].endswith("DenseReluDense.wi_0")]
    assert {(o["m"], o["n"], o["k"]) for o in wi} == {(tokens, T5["ff"], T5["d"])}


@pytest.mark.parametrize("preset", ["flux-1-dev", "flux-1-schnell"])
def test_the_traced_encoders_are_the_pipelines_frozen_modules(preset: str) -> None:
    head = (DATA / "operators" / "vae" / f"{preset}.yaml").read_text(encoding="utf-8")
    counts = dict(re.findall(r"(text_encoder(?:_2)?) (\d+)", head))
    assert int(counts["text_encoder"]) == CLIP_L_TEXT_PARAMS
    assert int(counts["text_encoder_2"]) == T5_XXL_ENCODER_PARAMS


def _work(model: object) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=model,  # type: ignore[arg-type]
        precision="bf16",
        batch_size=1,
        runtime="pytorch",
        efficiency=load_efficiency(DATA),
    )


def _encoder_flops(ops: list) -> float:
    return sum(o.total_flops for o in ops if o.name.startswith("text_encoder"))


def test_the_prompt_is_encoded_once_per_image_not_per_step() -> None:
    m = PRESETS["flux-1-dev"].model
    assert m.operators is not None and m.decoder_operators is not None
    t5 = _t5_gflops(512) * 1e9
    ops = perf.forward_ops(_work(m), True, 2.0)
    assert ops is not None
    assert _encoder_flops(ops) == pytest.approx(t5 + _clip_gflops() * 1e9, rel=1e-4)
    # the preset's FLOPs hold them: 28 transformer passes + the once-per-image table
    assert sum(o.total_flops for o in ops) == pytest.approx(
        (m.gflops_per_sample or 0.0) * 1e9, rel=1e-4
    )
    # twice the steps: twice the transformer passes, the same prompt encoding
    per_pass = m.operators.gflops_forward or 0.0
    once = m.decoder_operators.gflops_forward or 0.0
    longer = replace(m, passes_per_sample=56, gflops_per_sample=56 * per_pass + once)
    ops56 = perf.forward_ops(_work(longer), True, 2.0)
    assert ops56 is not None
    # (the preset's FLOPs are whole GFLOPs: the once-per-image ops are scaled to its remainder)
    assert _encoder_flops(ops56) == pytest.approx(_encoder_flops(ops), rel=1e-4)
    # two images: two prompts encoded
    ops_b2 = perf.forward_ops(replace(_work(m), batch_size=2), True, 2.0)
    assert ops_b2 is not None
    assert _encoder_flops(ops_b2) == pytest.approx(2 * _encoder_flops(ops), rel=1e-9)
    # they run in the pipeline's once-per-image phase, bound apart from the loop
    assert {o.phase for o in ops if o.name.startswith("text_encoder")} == {"decode"}
