"""Operator → time: the roofline per operator, wave quantisation, kernel classes, fusion."""

from __future__ import annotations

import pytest

from app.domain import kernels
from app.domain.kernels import (
    CLASSES,
    class_rates,
    op_time,
    prepare,
    shape_efficiency,
    step_time,
    wave_fill,
)
from app.domain.operators import gemm, parse_table, table_ops, transformer_ops
from tests.domain.fixtures import BERT_LARGE

RATE = 800e12  # FLOP/s at the best-shape GEMM efficiency
BW = 3e12  # achieved bytes/s
RATES = dict(zip(CLASSES, class_rates(RATE, 60e12), strict=True))


def test_one_tile_more_than_the_sms_takes_two_waves() -> None:
    sms = 132
    assert wave_fill(sms, sms) == 1.0
    assert wave_fill(sms + 1, sms) == pytest.approx((sms + 1) / (2 * sms))
    assert wave_fill(2 * sms, sms) == 1.0
    k = 1024
    full = gemm("a", 128 * sms, 128, k)
    over = gemm("b", 128 * (sms + 1), 128, k)
    fast = 1e15  # bandwidth out of the way: compute-bound
    t_full = op_time(full, RATES, fast, 0.0, sms=sms)
    t_over = op_time(over, RATES, fast, 0.0, sms=sms)
    # the second wave runs one tile; splitting K (the library's way out) recovers a little
    assert 1.5 * t_full < t_over < 2 * t_full * 1.01


def test_size_only_curve_without_an_sm_count_rises_towards_one() -> None:
    fills = [wave_fill(t, None) for t in (1, 10, 54, 108, 1000, 100_000)]
    assert fills == sorted(fills) and fills[-1] > 0.99 and fills[0] < 0.02
    assert all(0 < f <= 1 for f in fills)


def test_short_k_gemms_spend_a_share_of_each_tile_outside_the_main_loop() -> None:
    assert kernels.k_efficiency(kernels.BEST_SHAPE_K) == pytest.approx(1.0)
    assert kernels.k_efficiency(768) < kernels.k_efficiency(4096) < 1.0


def test_a_skinny_gemm_is_memory_bound_through_the_roofline() -> None:
    decode = gemm("decode", 1, 4096, 4096)  # one token through a 4096² weight
    t = op_time(decode, RATES, BW, 0.0)
    assert t == pytest.approx(decode.bytes / BW)
    assert decode.bytes == pytest.approx((4096 + 4096 * 4096 + 4096) * 2)


DW_TABLE = {
    "model": "dw",
    "source": "test",
    "input": {"channels": 3, "height": 224, "width": 224},
    "ops": [
        {"kind": "conv", "name": "dw", "count": 1, "c_in": 256, "c_out": 256, "h_in": 56,
         "w_in": 56, "h_out": 56, "w_out": 56, "r": 3, "s": 3, "stride": 1, "groups": 256},
        {"kind": "conv", "name": "dense", "count": 1, "c_in": 256, "c_out": 256, "h_in": 56,
         "w_in": 56, "h_out": 56, "w_out": 56, "r": 3, "s": 3, "stride": 1, "groups": 1},
        {"kind": "conv", "name": "stem", "count": 1, "c_in": 3, "c_out": 64, "h_in": 224,
         "w_in": 224, "h_out": 112, "w_out": 112, "r": 7, "s": 7, "stride": 2, "groups": 1},
        {"kind": "conv", "name": "stem8", "count": 1, "c_in": 8, "c_out": 64, "h_in": 224,
         "w_in": 224, "h_out": 112, "w_out": 112, "r": 7, "s": 7, "stride": 2, "groups": 1},
    ],
}  # fmt: skip


def test_depthwise_convolution_is_bandwidth_bound_and_dense_is_not() -> None:
    dw, dense, _, _ = table_ops(parse_table(DW_TABLE), 64)
    assert op_time(dw, RATES, BW, 0.0) == pytest.approx(dw.bytes / BW)
    assert op_time(dense, RATES, BW, 0.0) > dense.bytes / BW * 1.5


def test_a_three_channel_stem_fills_three_eighths_of_each_tensor_core_k_step() -> None:
    _, _, stem, stem8 = table_ops(parse_table(DW_TABLE), 64)
    assert stem.m == stem8.m and stem.n == stem8.n
    ratio = shape_efficiency(stem) / shape_efficiency(stem8)
    # same output tiles; K = 3·49 against 8·49 also changes the main-loop share a little
    k_ratio = kernels.k_efficiency(stem.k) / kernels.k_efficiency(stem8.k)
    assert ratio == pytest.approx(3 / 8 * k_ratio)


def test_a_cuda_core_convolution_pads_no_input_channels() -> None:
    # FP32 on a V100 or T4 runs cuDNN's CUDA-core kernels: no MMA K step for 3 channels to fill
    _, _, stem, stem8 = table_ops(parse_table(DW_TABLE), 64)
    k_ratio = kernels.k_efficiency(stem.k) / kernels.k_efficiency(stem8.k)
    ratio = shape_efficiency(stem, tensor_cores=False) / shape_efficiency(stem8, tensor_cores=False)
    assert ratio == pytest.approx(k_ratio)
    assert shape_efficiency(stem, tensor_cores=False) > 2.5 * shape_efficiency(stem)
    # and the step's columns price it so
    assert prepare([stem], tensor_cores=False).flops == prepare([stem]).flops
    slow = step_time(prepare([stem]), class_rates(RATE, RATE), BW, 0.0).compute
    fast = step_time(prepare([stem], tensor_cores=False), class_rates(RATE, RATE), BW, 0.0).compute
    assert slow / fast == pytest.approx(8 / 3)
    # and one op's time, as per-operator breakdowns read it, says the same
    flat = dict(zip(CLASSES, class_rates(RATE, RATE), strict=True))
    by_op = op_time(stem, flat, BW, 0.0, tensor_cores=False)
    assert by_op == pytest.approx(max(fast, stem.bytes / BW))


def test_vectorised_step_is_the_sum_of_its_operators() -> None:
    ops = transformer_ops(BERT_LARGE, 8, 384, flash=False)
    launch = 4e-6
    arrs = prepare(ops)
    rates = class_rates(RATE, 60e12)
    st = step_time(arrs, rates, BW, launch)
    by_op = sum(o.count * op_time(o, RATES, BW, launch) for o in ops)
    assert st.total == pytest.approx(by_op)
    assert st.launch == pytest.approx(sum(o.count for o in ops) * launch)
    assert st.compute + st.memory + st.launch == pytest.approx(st.total)


def test_a_fusing_runtime_is_faster_than_eager_on_elementwise_heavy_models() -> None:
    ops = transformer_ops(BERT_LARGE, 8, 384, flash=False, training=True)
    rates = class_rates(RATE, 60e12)
    eager = step_time(prepare(ops), rates, BW, 4e-6)
    fused = step_time(prepare(ops, ("act", "residual", "dropout", "copy", "cast")), rates, BW, 2e-6)
    assert fused.memory < eager.memory * 0.8
    assert fused.total < eager.total
    # fusion removes memory time and launches only: the GEMMs cost the same
    assert fused.compute == pytest.approx(eager.compute)


def test_flash_attention_runs_below_the_gemm_rate() -> None:
    rates = class_rates(RATE, None)
    index = {c: i for i, c in enumerate(CLASSES)}
    assert rates[index["attn_flash"]] < rates[index["gemm"]]
    assert rates[index["attn_flash_bwd"]] < rates[index["attn_flash"]]
    assert all(r > 0 for r in rates)


def test_a_64_wide_layer_leaves_half_of_each_output_tile_idle() -> None:
    wide = gemm("wide", 128 * 1000, 128, 4096)
    narrow = gemm("narrow", 128 * 1000, 64, 4096)
    assert kernels.tile_fill(narrow.m, narrow.n) == pytest.approx(0.5)
    assert shape_efficiency(narrow) == pytest.approx(shape_efficiency(wide) / 2, rel=0.01)


def test_a_weight_gradient_splits_its_long_reduction_to_fill_the_gpu() -> None:
    # dW of a 256→256 layer over 256 × 56 × 56 positions: 4 output tiles, k = 802,816
    wgrad = gemm("wgrad", 256, 256, 256 * 56 * 56)
    unsplit = kernels.wave_fill(4, None) * kernels.k_efficiency(wgrad.k)
    assert shape_efficiency(wgrad) > 10 * unsplit
    assert shape_efficiency(wgrad) <= 1.0


def test_a_flash_cap_slows_attention_forward_and_backward_alike() -> None:
    free = class_rates(RATE, 60e12)
    capped = class_rates(RATE, 60e12, flash_cap=0.35 * 989e12)
    i_fwd, i_bwd = CLASSES.index("attn_flash"), CLASSES.index("attn_flash_bwd")
    assert capped[i_fwd] == pytest.approx(0.35 * 989e12)
    # the backward keeps FlashAttention-2's backward-to-forward ratio
    assert capped[i_bwd] / capped[i_fwd] == pytest.approx(free[i_bwd] / free[i_fwd])
    # GEMMs and the other classes do not move; a cap above the GEMM-relative rate changes nothing
    assert capped[0] == free[0] and capped[-1] == free[-1]
    assert class_rates(RATE, 60e12, flash_cap=10 * RATE) == free


def test_a_profiled_attention_ratio_replaces_the_papers_and_keeps_its_backward_share() -> None:
    from app.domain.kernels import FLASH_BWD_FACTOR, FLASH_FWD_FACTOR

    prior = class_rates(100.0, 10.0)
    assert prior[1] == pytest.approx(100.0 * FLASH_FWD_FACTOR)
    profiled = class_rates(100.0, 10.0, 0.5)
    assert profiled[1] == pytest.approx(50.0)
    # backward ÷ forward stays the paper's 0.50 ÷ 0.73
    assert profiled[2] / profiled[1] == pytest.approx(FLASH_BWD_FACTOR / FLASH_FWD_FACTOR)
    assert profiled[0] == prior[0] and profiled[3:] == prior[3:]


def test_triton_flash_attention_runs_at_the_fa2_papers_ratios_below_flashattention_2() -> None:
    # FlashAttention-2 paper §4.1: 1.3-1.5× faster than FlashAttention in Triton forward, ~2×
    # backward; the GEMMs and every other class are untouched
    index = {c: i for i, c in enumerate(CLASSES)}
    fa2 = class_rates(RATE, 60e12)
    tri = class_rates(RATE, 60e12, attention_kernel="triton")
    fwd, bwd = index["attn_flash"], index["attn_flash_bwd"]
    assert fa2[fwd] / tri[fwd] == pytest.approx(1.4)
    assert fa2[bwd] / tri[bwd] == pytest.approx(2.0)
    others = [i for i in range(len(CLASSES)) if i not in (fwd, bwd)]
    assert [tri[i] for i in others] == [fa2[i] for i in others]
    # a cap (FlashAttention-2 on Hopper) applies before the kernel's own slowdown
    capped = class_rates(RATE, 60e12, flash_cap=300e12, attention_kernel="triton")
    assert capped[fwd] == pytest.approx(300e12 / 1.4)
    # an unknown kernel name is FlashAttention-2
    assert class_rates(RATE, 60e12, attention_kernel="") == fa2


def test_a_first_generation_fused_attention_runs_at_its_share_of_flash_attention_2() -> None:
    # FlashAttention v1 / the memory-efficient kernel: 25-40 % of an A100's peak where
    # FlashAttention-2 reaches 50-73 % (Dao 2023): the tops of the two ranges, 0.40 / 0.73
    new = class_rates(RATE, 60e12)
    old = class_rates(RATE, 60e12, attention_kernel="flash1")
    i, j = CLASSES.index("attn_flash"), CLASSES.index("attn_flash_bwd")
    assert pytest.approx(0.40 / 0.73) == kernels.FLASH1_RATIO
    assert old[i] == pytest.approx(new[i] * 0.40 / 0.73)
    assert old[j] == pytest.approx(new[j] * 0.40 / 0.73)
    # the GEMM, convolution and vector classes are the same kernels either way
    assert [r for k, r in enumerate(old) if k not in (i, j)] == [
        r for k, r in enumerate(new) if k not in (i, j)
    ]
