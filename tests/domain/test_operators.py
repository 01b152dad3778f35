"""Model → operators: each operator's FLOPs and bytes against hand-worked formulas."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from app.domain import operators as ops_mod
from app.domain.operators import (
    ATTN_FLASH_BWD,
    CONV,
    CONV_DW,
    backward_ops,
    optimizer_op,
    parse_table,
    table_ops,
    total,
    transformer_ops,
)
from app.domain.workload import ModelSpec
from tests.domain.fixtures import BERT_LARGE, LLAMA3_8B


def _flops(ops: list[ops_mod.Op], **match: str) -> float:
    return sum(o.count * o.flops for o in ops if all(getattr(o, k) == v for k, v in match.items()))


def test_encoder_layer_forward_is_2_params_per_token_plus_attention() -> None:
    b, s, h, L = 8, 384, 1024, 24
    ops = transformer_ops(BERT_LARGE, b, s, flash=True)
    layer_params = 4 * h * h + 2 * h * 4096  # Q, K, V, O and the GELU MLP's up and down
    assert _flops(ops, kind="gemm") == pytest.approx(2 * layer_params * L * b * s)
    # QKᵀ and AV over the whole (non-causal) score matrix: 4·s²·h per layer and sequence
    assert _flops(ops, kind="attention") == pytest.approx(4 * s * s * h * L * b)


def test_gated_mlp_and_grouped_query_attention_read_off_the_config() -> None:
    assert ops_mod.is_gated(LLAMA3_8B) and not ops_mod.is_gated(BERT_LARGE)
    t = 2048
    ops = transformer_ops(LLAMA3_8B, 1, t)
    kv = next(o for o in ops if o.name == "kv_proj")
    assert kv.n == 2 * 8 * 128  # 8 KV heads of 128, not 32
    up = next(o for o in ops if o.name == "mlp.up")
    assert up.n == 2 * 14336  # gate and up projections
    # a decoder ends in the LM head and the loss, an encoder does not
    assert any(o.name == "lm_head" for o in ops)
    assert not any(o.name == "lm_head" for o in transformer_ops(BERT_LARGE, 1, 128))
    # layers + LM head FLOPs are 2·P per token, P without the input embedding table
    embed = 128256 * 4096
    gemm = _flops(ops, kind="gemm")
    assert gemm == pytest.approx(2 * (8.03e9 - embed) * t, rel=0.01)


def test_backward_is_twice_the_gemms_and_two_and_a_half_flash_attentions() -> None:
    fwd = transformer_ops(BERT_LARGE, 4, 512, flash=True)
    bwd = backward_ops(fwd)
    assert _flops(bwd, kind="gemm") == pytest.approx(2 * _flops(fwd, kind="gemm"))
    attn = _flops(bwd, klass=ATTN_FLASH_BWD)
    assert attn == pytest.approx(2.5 * _flops(fwd, kind="attention"))
    # LoRA's frozen base: input gradients only
    frozen = backward_ops(fwd, weight_grads=False)
    assert _flops(frozen, kind="gemm") == pytest.approx(_flops(fwd, kind="gemm"))


def test_elementwise_backward_reads_output_grad_and_input_writes_input_grad() -> None:
    gelu = next(o for o in transformer_ops(BERT_LARGE, 2, 128) if o.name == "gelu")
    (back,) = backward_ops([gelu])
    elements = 2 * 128 * 4096
    assert gelu.bytes == pytest.approx(2 * elements * 2)
    assert back.bytes == pytest.approx(3 * elements * 2)  # dY and X read, dX written


def test_math_attention_moves_the_score_matrix_and_flash_does_not() -> None:
    b, s, heads = 4, 512, 16
    flash = transformer_ops(BERT_LARGE, b, s, flash=True, training=True)
    math = transformer_ops(BERT_LARGE, b, s, flash=False, training=True)
    scores = b * heads * s * s
    extra = total(math, "bytes") - total(flash, "bytes")
    # per layer at least: scale (2+2), mask (2+4: fp32 under autocast), softmax (4+4),
    # dropout (4+4+1 mask), cast back (4+2) bytes per score
    assert extra > 24 * scores * 33 * 0.99
    assert _flops(math, kind="gemm") > _flops(flash, kind="gemm")  # QKᵀ and AV as GEMMs


def test_moe_experts_see_their_share_of_the_tokens() -> None:
    moe = ModelSpec(
        family="decoder",
        params=46.7e9,
        layers=32,
        hidden_size=4096,
        num_heads=32,
        num_kv_heads=8,
        intermediate_size=14336,
        vocab_size=32000,
        experts=8,
        active_experts=2,
    )
    t = 4096
    ops = transformer_ops(moe, 1, t)
    experts = sum(o.count * o.flops for o in ops if o.name.startswith("expert."))
    # two of eight experts per token, each a gated MLP (gate, up, down: 3·h·inter)
    assert experts == pytest.approx(2 * t * 2 * 3 * 4096 * 14336 * 32)
    router = next(o for o in ops if o.name == "router")
    assert router.n == 8


def test_optimizer_update_moves_28_bytes_per_adamw_parameter() -> None:
    op = optimizer_op(1e9, "adamw")
    assert op.bytes == pytest.approx(28e9)
    assert optimizer_op(1e9, "sgd").bytes == pytest.approx(20e9)


STEM_TABLE: dict[str, Any] = {
    "model": "tiny-cnn",
    "source": "hand-written for this test",
    "input": {"channels": 3, "height": 224, "width": 224},
    "gflops_forward": None,
    "ops": [
        {"kind": "conv", "name": "stem", "count": 1, "c_in": 3, "c_out": 64, "h_in": 224,
         "w_in": 224, "h_out": 112, "w_out": 112, "r": 7, "s": 7, "stride": 2, "groups": 1},
        {"kind": "norm", "name": "bn", "count": 1, "elements_in": 64 * 112 * 112,
         "elements_out": 64 * 112 * 112},
        {"kind": "conv", "name": "dw", "count": 2, "c_in": 64, "c_out": 64, "h_in": 112,
         "w_in": 112, "h_out": 112, "w_out": 112, "r": 3, "s": 3, "stride": 1, "groups": 64},
        {"kind": "pool", "name": "gap", "count": 1, "elements_in": 64 * 112 * 112,
         "elements_out": 64},
        {"kind": "gemm", "name": "fc", "count": 1, "m": 1, "n": 1000, "k": 64},
    ],
}  # fmt: skip


def test_a_shipped_table_scales_to_a_batch_with_conv_flops_from_the_shape() -> None:
    table = parse_table(STEM_TABLE)
    ops = table_ops(table, 32)
    stem, bn, dw, gap, fc = ops
    assert gap.bytes == pytest.approx(32 * (64 * 112 * 112 + 64) * 2)
    # 2 · N · K · (C/g) · R · S · P · Q
    assert stem.flops == pytest.approx(2 * 32 * 64 * 3 * 7 * 7 * 112 * 112)
    assert stem.klass == CONV and stem.in_channels == 3
    assert dw.klass == CONV_DW and dw.count == 2
    assert dw.flops == pytest.approx(2 * 32 * 64 * 1 * 3 * 3 * 112 * 112)
    assert bn.bytes == pytest.approx(2 * 32 * 64 * 112 * 112 * 2)
    assert fc.flops == pytest.approx(2 * 32 * 1000 * 64)
    assert table.gflops == pytest.approx(sum(o.count * o.flops for o in table_ops(table, 1)) / 1e9)
    # backward: dgrad + wgrad, 2× the forward, except the first layer's (no input gradient)
    assert total(backward_ops([stem, dw])) == pytest.approx(stem.flops + 2 * 2 * dw.flops)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "lstm"}, "unknown kind"),
        ({"c_out": None}, "missing"),
    ],
)
def test_a_bad_table_is_rejected_naming_the_operator(change: dict[str, Any], message: str) -> None:
    doc = {**STEM_TABLE, "ops": [{**STEM_TABLE["ops"][0], **change}]}
    with pytest.raises(ValueError, match=message) as err:
        parse_table(doc)
    assert "stem" in str(err.value)


def test_vit_is_a_patch_embedding_and_an_encoder_over_the_patches() -> None:
    vit = dataclasses.replace(BERT_LARGE, family="vit", vocab_size=None, input_size=224)
    ops = ops_mod.vit_ops(vit, 2)
    patch = ops[0]
    assert patch.name == "patch_embed" and patch.m == 2 * 196 and patch.k == 768
    assert any(o.kind == "attention" and o.m == 197 for o in ops)


def test_the_first_layer_computes_no_input_gradient() -> None:
    fwd = table_ops(parse_table(STEM_TABLE), 8, training=True)
    names = [o.name for o in backward_ops(fwd)]
    assert "stem.wgrad" in names and "stem.dgrad" not in names
    assert "dw.dgrad" in names


def test_batch_norm_reads_its_input_twice_in_training() -> None:
    table = parse_table(STEM_TABLE)
    train = next(o for o in table_ops(table, 8, training=True) if o.name == "bn")
    infer = next(o for o in table_ops(table, 8) if o.name == "bn")
    assert train.bytes_read == pytest.approx(2 * infer.bytes_read)
    assert train.bytes_written == pytest.approx(infer.bytes_written)


def test_lora_adapters_cover_the_parameters_the_memory_model_counts() -> None:
    from app.domain.workload import lora_params

    t, rank = 2048, 16
    ops = ops_mod.lora_ops(LLAMA3_8B, 1, t, rank)
    # each adapter's A and B GEMMs: 2 · t · (its parameters) FLOPs
    assert _flops(ops, kind="gemm") == pytest.approx(2 * t * lora_params(LLAMA3_8B, rank))
    # adapters sit inside the network: their backward computes input gradients too
    back = backward_ops(ops, input_grad=True)
    assert _flops(back, kind="gemm") == pytest.approx(2 * _flops(ops, kind="gemm"))


def test_eager_cross_entropy_casts_up_then_log_softmaxes_in_fp32() -> None:
    t, v = 2 * 1024, 128256
    ops = transformer_ops(LLAMA3_8B, 2, 1024, training=True)
    cast = next(o for o in ops if o.name == "loss.cast")
    lsm = next(o for o in ops if o.name == "loss.log_softmax")
    assert (cast.bytes_read, cast.bytes_written) == (t * v * 2, t * v * 4)
    assert (lsm.bytes_read, lsm.bytes_written) == (t * v * 4, t * v * 4)
    cast_b, lsm_b = backward_ops([cast, lsm])
    # the cast's gradient is read in fp32 and written back in bf16
    assert (cast_b.bytes_read, cast_b.bytes_written) == (t * v * 4, t * v * 2)
    # log_softmax reads nll's dense gradient and its output; nll wrote that gradient first
    assert (lsm_b.bytes_read, lsm_b.bytes_written) == (2 * t * v * 4, 2 * t * v * 4)
    # fp32 training has no cast; inference has no loss
    wide = transformer_ops(LLAMA3_8B, 2, 1024, training=True, act_b=4.0, dtype="fp32")
    assert not any(o.name == "loss.cast" for o in wide)
    assert any(o.name == "loss.log_softmax" for o in wide)
    assert not any(
        o.name.startswith("loss") for o in transformer_ops(LLAMA3_8B, 2, 1024, training=False)
    )


def test_eager_llama_code_runs_fp32_norm_and_rotary_chains_and_kv_copies() -> None:
    b, s = 2, 1024
    t, h, kv, hd, inter = b * s, 4096, 8, 128, 14336
    ops = {o.name: o for o in transformer_ops(LLAMA3_8B, b, s, training=True)}
    norm = ops["rmsnorm.fp32"]
    # x.float(), pow, mean, · rsqrt, type_as, · weight: 20 B read and 16 B written per element,
    # less the 2 + 2 of the fused norm op already counted; both norms of every layer
    assert (norm.bytes_read, norm.bytes_written) == (18 * t * h, 14 * t * h)
    assert norm.count == 2 * 32 and ops["rmsnorm.fp32.final"].count == 1
    rot = ops["rotary.fp32"]
    assert rot.bytes == pytest.approx(16 * t * (32 + kv) * hd)
    assert ops["swiglu.silu"].bytes == pytest.approx(2 * 2 * t * inter)
    # grouped-query: K and V copied out to all 32 query heads
    rep = ops["repeat_kv"]
    assert (rep.bytes_read, rep.bytes_written) == (2 * t * kv * hd * 2, 2 * t * 32 * hd * 2)
    # a fusing runtime folds every one of them (casts, activations, copies)
    assert {o.role for o in ops.values() if o.name in
            ("rmsnorm.fp32", "rotary.fp32", "swiglu.silu", "repeat_kv", "attention.out_copy")} \
        <= {"cast", "split", "copy"}  # fmt: skip
    # not in inference (priced elsewhere), not for LayerNorm/GELU models, no copy without GQA
    names = {o.name for o in transformer_ops(LLAMA3_8B, b, s, training=False)}
    assert "rmsnorm.fp32" not in names
    assert "rmsnorm.fp32" not in {o.name for o in transformer_ops(BERT_LARGE, b, 128)}
    mha = dataclasses.replace(LLAMA3_8B, num_kv_heads=32)
    assert "repeat_kv" not in {o.name for o in transformer_ops(mha, b, s, training=True)}
