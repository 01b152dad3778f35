"""FLUX.1 at another image size (operators.rescaled_table): only the image tokens grow with the
pixels; the prompt's T5 tokens (512 for [dev], 256 for [schnell]) stay, in the joint attention
(4096 × area + 512 tokens), in the text stream's linears and norms, and in the pipeline's text
encoders. Each op states the part of its counts that does not grow (``fixed``), split by the
generator from two traces at two image sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain.operators import ForwardTable, parse_table, rescaled_table
from app.recommend.presets import load_presets

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)


def _table(ops: list[dict]) -> ForwardTable:
    return parse_table({"model": "t", "source": "s", "gflops_forward": None, "ops": ops})


def test_a_fixed_part_stays_and_the_rest_grows_with_the_pixels() -> None:
    joint = {"kind": "attention", "name": "a", "count": 1, "q_len": 4608, "kv_len": 4608,
             "heads": 24, "head_dim": 128, "fixed": {"q_len": 512, "kv_len": 512}}  # fmt: skip
    text = {"kind": "gemm", "name": "add_q_proj", "count": 1, "m": 512, "n": 3072, "k": 3072,
            "fixed": {"m": 512}}  # fmt: skip
    mod = {"kind": "elementwise", "name": "norm1:mul", "count": 1, "elements_in": 12585984,
           "elements_out": 12582912, "fixed": {"elements_in": 3072}}  # fmt: skip
    out = rescaled_table(_table([joint, text, mod]), 2.0)
    a, t, m = out.ops
    # 4096 image tokens × 4 + the 512 text tokens, not 4608 × 4
    assert a["q_len"] == a["kv_len"] == 4096 * 4 + 512
    assert t["m"] == 512
    assert m["elements_in"] == 3072 + 4096 * 3072 * 4 and m["elements_out"] == 12582912 * 4


@pytest.mark.parametrize("bad", [{"m": 9999}, {"n": 1}, {"q_len": -1}, [512]])
def test_a_fixed_part_beyond_its_count_or_of_no_count_is_refused(bad: object) -> None:
    op = {"kind": "gemm", "name": "g", "count": 1, "m": 512, "n": 8, "k": 8, "fixed": bad}
    with pytest.raises(ValueError, match="bad fixed"):
        _table([op])


@pytest.mark.parametrize(("preset", "text"), [("flux-1-dev", 512), ("flux-1-schnell", 256)])
def test_flux_at_512_pixels_keeps_its_text_tokens(preset: str, text: int) -> None:
    table = PRESETS[preset].model.operators
    assert table is not None
    half = rescaled_table(table, 0.5)  # 512 x 512: (512 / 16)^2 = 1024 image tokens
    image = 1024
    att = {(o["q_len"], o["kv_len"]) for o in half.ops if o["kind"] == "attention"}
    assert att == {(image + text, image + text)}

    def m(suffix: str) -> set[float]:
        return {o["m"] for o in half.ops if o["kind"] == "gemm" and o["name"].endswith(suffix)}

    assert m("attn.add_q_proj") == {text} and m("ff_context.net.2") == {text}
    assert m("context_embedder") == {text}
    # the double-stream blocks' image linears see the image tokens, the single-stream ones both
    assert m("transformer_blocks.[0-18].attn.to_q") == {image}
    assert m("single_transformer_blocks.[0-37].attn.to_q") == {image + text}
    # the text stream's memory-bound ops do not move at all
    for o, was in zip(half.ops, table.ops, strict=True):
        if "_context" in o["name"] or "norm_added" in o["name"]:
            assert o.get("elements_in") == was.get("elements_in"), o["name"]
    # the pass's FLOPs: every linear and attention counted at its own tokens
    hidden, heads, hd = 3072, 24, 128
    joint = image + text
    per_double = (
        2 * image * hidden * hidden * 4  # to_q, to_k, to_v, to_out
        + 2 * text * hidden * hidden * 4  # add_q/k/v_proj, to_add_out
        + 2 * (image + text) * hidden * 4 * hidden * 2  # ff and ff_context
        + 4 * heads * joint * joint * hd
        + 2 * 18432 * hidden * 2  # the two modulation linears (one row each)
    )
    per_single = (
        2 * joint * hidden * 4 * hidden  # proj_mlp
        + 2 * joint * hidden * hidden * 3  # to_q, to_k, to_v
        + 2 * joint * 5 * hidden * hidden  # proj_out over attention + MLP
        + 4 * heads * joint * joint * hd
        + 2 * 9216 * hidden
    )
    embed_side = half.gflops * 1e9 - 19 * per_double - 38 * per_single
    # what is left is the embedders and the output layer: small, and linear in the image
    assert 0 < embed_side < 0.002 * half.gflops * 1e9


@pytest.mark.parametrize("preset", ["flux-1-dev", "flux-1-schnell"])
def test_flux_text_encoders_do_not_grow_with_the_image(preset: str) -> None:
    once = PRESETS[preset].model.decoder_operators
    assert once is not None
    half = rescaled_table(once, 0.5)

    def gflops(t: ForwardTable, prefix: str) -> float:
        return sum(
            float(o["m"]) * float(o["n"]) * float(o["k"]) * float(o["count"]) * 2e-9
            for o in t.ops
            if o["kind"] == "gemm" and o["name"].startswith(prefix)
        )

    assert gflops(half, "text_encoder") == pytest.approx(gflops(once, "text_encoder"))
    assert gflops(half, "text_encoder") > 2000  # T5-XXL's linears over 256+ tokens
    # the VAE decode's linears (its mid-block attention over the latent pixels) grow
    assert gflops(half, "vae.") == pytest.approx(gflops(once, "vae.") / 4)
