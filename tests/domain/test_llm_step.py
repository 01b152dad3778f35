"""The one LLM step function (app/domain/llm_step.py) that LLM inference and serving call."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from app.domain import llm_step
from app.domain.efficiency import (
    FP16_ACCUMULATE_GEMM_SHARE,
    HALF_RATE_GEMM_SHARE,
    RuntimeProfile,
)
from tests.domain.fixtures import A100, H100, LLAMA3_8B, MI300X, RTX4090

GRAPHS = RuntimeProfile(kernel_us=2.0)
COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}


def _replica(gpu=H100, n=1, prof=GRAPHS, **kw) -> llm_step.Replica:
    base = dict(
        weights="bf16", kv="bf16", n=n, decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    base.update(kw)
    return llm_step.replica(gpu, LLAMA3_8B, **base)


def test_how_a_replica_spans_gpus_is_the_runtime_policy():
    assert llm_step.span(RuntimeProfile(span="tensor"), 8) == (8, 1)
    assert llm_step.span(RuntimeProfile(span="tensor"), 16) == (8, 2)  # pipeline beyond a node
    assert llm_step.span(RuntimeProfile(span="layers"), 8) == (1, 8)
    assert llm_step.span(RuntimeProfile(span="layers"), 1) == (1, 1)


def test_a_decode_step_reads_the_weights_and_pays_each_kernels_gap():
    rep = _replica()
    t = rep.parts(1.0, 1000.0, 0.0, 1000.0)
    # all but the untied input embedding, whose lookup gathers one row
    weights = (8.03e9 - 128256 * 4096) * 2
    assert t.memory_s >= weights / (3350e9 * 0.88)
    assert t.launch_s == pytest.approx(32 * llm_step.KERNELS_PER_LAYER * 2e-6)
    assert t.bound == "memory bandwidth" and t.host_s == 0.0


def test_a_layer_split_step_is_the_sum_of_each_gpus_share():
    one = _replica(RTX4090, 1, RuntimeProfile(span="layers"))
    four = _replica(RTX4090, 4, RuntimeProfile(span="layers"))
    a, b = one.parts(1.0, 500.0, 0.0, 500.0), four.parts(1.0, 500.0, 0.0, 500.0)
    assert b.seconds >= a.seconds  # one card's speed, plus the hand-offs
    assert b.seconds == pytest.approx(a.seconds, rel=0.05)
    tp = _replica(H100, 4, RuntimeProfile(span="tensor", kernel_us=2.0))
    single = _replica(H100, 1)
    assert tp.parts(1.0, 500.0, 0.0, 500.0).memory_s == pytest.approx(
        single.parts(1.0, 500.0, 0.0, 500.0).memory_s / 4
    )


def test_eager_steps_take_the_host_time_when_it_is_longer():
    eager = RuntimeProfile(kernel_us=4.0, host_us_per_op=10.0, ops_per_layer=45)
    t = _replica(prof=eager).parts(1.0, 500.0, 0.0, 500.0)
    assert t.bound == "host overhead"
    assert t.seconds == pytest.approx(32 * 45 * 10e-6)


def test_weight_formats_run_on_their_datapath():
    trt = RuntimeProfile(native=("fp8", "int8", "fp4"))
    assert llm_step.datapath(H100, "fp8")[1] == "fp8"
    assert llm_step.datapath(A100, "fp8")[1] == "bf16"  # no fp8 tensor cores: dequantised
    assert llm_step.datapath(H100, "int4")[1] in ("fp16", "bf16")  # weight-only
    assert llm_step.datapath(H100, "int8")[1] != "int8"  # eager: no W8A8 kernels
    assert llm_step.datapath(dataclasses.replace(H100, int8_tops=1979), "int8", trt)[1] == "int8"
    b200 = dataclasses.replace(H100, compute_capability="10.0", fp8_tflops=4500)
    assert llm_step.datapath(b200, "fp4", trt) == (9000, "fp4")
    # no FP4 tensor cores: weight-only FP4 kernels (vLLM's Marlin) take 16-bit activations
    assert llm_step.datapath(H100, "fp4", trt)[1] == "bf16"


def test_fp4_gemms_reach_the_profiles_share_of_the_fp8_efficiency():
    # card_terms: fp4 runs on twice the fp8 peak at fp4_gemm_share of the fp8 GEMM efficiency
    # (B200's NVFP4 kernels reach ~0.6 of twice its FP8 rate at decode-sized M); other
    # datapaths, and a profile without the share, are untouched
    b200 = dataclasses.replace(H100, compute_capability="10.0", fp8_tflops=4500)
    plain = RuntimeProfile(native=("fp8", "int8", "fp4"))
    sm100 = dataclasses.replace(plain, fp4_gemm_share=0.7)

    def terms(weights, prof):
        return llm_step.card_terms(
            b200, weights=weights, decode=prof, prefill=prof, memory_efficiency=0.88,
            compute_efficiency=COMP,
        )  # fmt: skip

    assert terms("fp4", plain).flops == pytest.approx(9000e12 * 0.56)
    assert terms("fp4", sm100).flops == pytest.approx(9000e12 * 0.56 * 0.7)
    assert terms("fp8", sm100).flops == pytest.approx(terms("fp8", plain).flops)
    assert terms("fp4", sm100).bw == terms("fp4", plain).bw  # bytes are not slowed


def test_the_sm100_row_sets_the_fp4_share_on_b200_alone():
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    table = load_efficiency(data)
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    share = {
        slug: table.profile(gpus[slug], "cuda", "tensorrt-llm", "bf16", "prefill").fp4_gemm_share
        for slug in ("b200", "gb200", "rtx-5090", "h100-sxm")
    }
    assert share["b200"] == share["gb200"] == pytest.approx(0.70)
    assert share["rtx-5090"] == share["h100-sxm"] == 1.0
    b200 = table.profile(gpus["b200"], "cuda", "tensorrt-llm", "bf16", "prefill")
    assert (b200.fp4_gemm_share_large, b200.fp4_gemm_large_tokens) == (0.90, 16384)
    h100 = table.profile(gpus["h100-sxm"], "cuda", "tensorrt-llm", "bf16", "prefill")
    assert h100.fp4_gemm_share_large == 0.0


def test_fp4_share_grows_with_the_steps_tokens_through_its_two_points():
    # fp4_m_terms: the small-M share up to 1,024 rows, the large-M share at 16,384, a rate
    # that saturates in M between (vLLM PR #20646's NVFP4 sweep), never below the small share
    rel, m0 = llm_step.fp4_m_terms(0.70, 0.90, 1024, 16384)
    gain = [llm_step.fp4_m_gain(t, rel, m0) for t in (256, 1024, 2048, 4096, 8192, 16384)]
    assert gain[0] == gain[1] == 1.0
    assert 0.70 * gain[-1] == pytest.approx(0.90)
    assert gain == sorted(gain) and len(set(gain[1:])) == 5
    assert llm_step.fp4_m_terms(0.70, 0.0, 0.0, 0.0) == (0.0, 1.0)  # not set: one share
    assert llm_step.fp4_m_gain(8192, 0.0, 1.0) == 1.0


def test_a_large_fp4_step_runs_its_dense_gemms_at_the_large_m_share():
    # Blackwell short requests at saturation are compute-bound steps of thousands of tokens:
    # their NVFP4 GEMMs reach more of twice the FP8 rate than a decode-sized M does. A profile
    # without the large-M share prices every M alike; other datapaths never move.
    b200 = dataclasses.replace(H100, compute_capability="10.0", fp8_tflops=4500)
    one = RuntimeProfile(native=("fp8", "int8", "fp4"), fp4_gemm_share=0.7)
    by_m = dataclasses.replace(
        one, fp4_gemm_share_large=0.9, fp4_gemm_small_tokens=1024, fp4_gemm_large_tokens=16384
    )

    def lin(prof, weights, tokens):
        rep = llm_step.replica(
            b200, LLAMA3_8B, weights=weights, kv="fp8", n=1, decode=prof, prefill=prof,
            memory_efficiency=0.88, compute_efficiency=COMP,
        )  # fmt: skip
        return rep.linear(tokens)[1]

    assert lin(by_m, "fp4", 16384) == pytest.approx(lin(one, "fp4", 16384) * 0.7 / 0.9)
    assert lin(by_m, "fp4", 1024) == lin(one, "fp4", 1024)  # decode-sized M: the share as was
    assert lin(by_m, "fp8", 16384) == lin(one, "fp8", 16384)


QWEN3_30B_A3B = dataclasses.replace(
    LLAMA3_8B, params=30.5e9, active_params=3.3e9, experts=128, active_experts=8,
    layers=48, hidden_size=2048, num_heads=32, num_kv_heads=4, intermediate_size=768,
)  # fmt: skip


def _one_card_columns(gpu, model, prof, counts, gpus=None):
    """The array path's columns for one card (bf16 weights and KV) at each GPU count."""
    job = llm_step.replica_job(model, weights="bf16", kv="bf16")
    card = llm_step.card_terms(
        gpu, weights="bf16", decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    rows = np.zeros(len(counts), np.intp)
    cols = llm_step.dense_columns(
        job, llm_step.card_rows([card]), rows, np.array(counts, float), gpus=gpus
    )
    return job, card, cols


def _moe(**kw) -> llm_step.Replica:
    return llm_step.replica(
        H100, QWEN3_30B_A3B, weights="bf16", kv="bf16", n=1, decode=GRAPHS, prefill=GRAPHS,
        memory_efficiency=0.88, compute_efficiency=COMP, **kw,
    )  # fmt: skip


def test_a_servers_host_work_per_sequence_bounds_only_a_large_batch():
    # 29 µs per running request per step (TensorRT-LLM's executor): hidden behind the GPU's
    # step at a small batch, the whole step once the batch makes it the longer
    rep = _moe(host_per_seq_s=29.4e-6)  # a small sparse model: little GPU work per token
    bare = _moe()
    small = rep.parts(8.0, 500.0, 0.0, 500.0)
    assert small.seconds == pytest.approx(bare.parts(8.0, 500.0, 0.0, 500.0).seconds)
    big = rep.parts(2048.0, 300.0, 0.0, 300.0)
    assert big.bound == "host overhead"
    assert big.seconds == pytest.approx(2048 * 29.4e-6)
    assert big.seconds > bare.parts(2048.0, 300.0, 0.0, 300.0).seconds
    # a prefill chunk's prompts count once each, not per token
    chunk = rep.parts(0.0, 0.0, 8192.0, 2048.0)
    assert chunk.host_s == pytest.approx(4 * 29.4e-6)


def test_a_step_that_carries_a_prompt_is_dispatched_eagerly_where_graphs_are_decode_only():
    # TensorRT-LLM's PyTorch backend replays CUDA graphs for decode-only steps alone: a step
    # with a prompt pays each kernel's eager dispatch (10 µs) on the executor's one host thread,
    # after the per-request work, weighted by the chance the step carries a prompt
    rep = _moe(host_per_seq_s=29.4e-6, mixed_host_us_per_kernel=10.0)
    kernels = 48 * llm_step._kernels_per_layer(QWEN3_30B_A3B)  # the step's own kernel count
    assert rep.mixed_host_s == pytest.approx(kernels * 10e-6)
    plain = _moe(host_per_seq_s=29.4e-6)
    decode_only = (2048.0, 300.0, 0.0, 300.0)
    assert rep.parts(*decode_only).seconds == plain.parts(*decode_only).seconds
    mixed = (2048.0, 300.0, 450.0, 300.0)  # 1.5 prompts per step on average
    share = 1.0 - math.exp(-1.5)
    assert llm_step.mixed_share(450.0, 300.0) == pytest.approx(share)
    t = rep.parts(*mixed)
    assert t.host_s == pytest.approx((2048 + 2) * 29.4e-6 + share * rep.mixed_host_s)
    assert t.bound == "host overhead" and t.seconds == pytest.approx(t.host_s)
    assert t.seconds > plain.parts(*mixed).seconds
    # a chunk or a prefill is known to carry its prompt: the whole dispatch, whatever its size
    chunk = rep.parts(2048.0, 300.0, 150.0, 300.0, with_prompt=True)
    assert chunk.host_s == pytest.approx((2048 + 1) * 29.4e-6 + rep.mixed_host_s)
    assert rep.parts(*decode_only, with_prompt=True).host_s == plain.parts(*decode_only).host_s
    assert llm_step.mixed_share(0.0, 1000.0) == 0.0
    assert llm_step.mixed_share(50_000.0, 100.0) == pytest.approx(1.0)  # every step has one


def test_prompt_and_decode_attention_add_where_the_runtime_runs_them_as_two_kernels():
    # TensorRT-LLM's attention op runs the context requests' kernel, then the generation
    # requests' (thop/attentionOp.cpp): a mixed step pays max(KV read, decode FLOPs) + the
    # prompts' FLOPs, where one kernel over the batch would pay max(KV read, all FLOPs)
    two = RuntimeProfile(kernel_us=2.0, split_attention=True)
    split = llm_step.replica(
        H100, QWEN3_30B_A3B, weights="bf16", kv="bf16", n=1, decode=two, prefill=GRAPHS,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip
    one = _moe()
    assert split.split_attention == 1.0 and one.split_attention == 0.0
    d, ctx, f, p = 512.0, 4000.0, 1024.0, 2000.0
    kv = d * split.kv_at(ctx) * split.kv_b / split.bw
    att_d = 4.0 * split.layers * split.attn_width_decode * d * ctx / split.attn_flops
    att_p = 4.0 * split.layers * split.attn_width * f * p / 2.0 / split.attn_flops
    assert kv > att_d + att_p  # a decode batch whose KV read outlasts all its attention FLOPs
    extra = split.parts(d, ctx, f, p).gpu_s - one.parts(d, ctx, f, p).gpu_s
    assert extra == pytest.approx(att_p)  # one kernel hid the prompts' FLOPs under the KV read
    # a step of decodes alone, or of a prompt alone, is one kernel either way
    for step in [(d, ctx, 0.0, p), (0.0, 0.0, f, p)]:
        assert split.parts(*step).seconds == one.parts(*step).seconds
    # the prompts' attention is compute, not bytes: the step's split between them
    mixed = split.parts(d, ctx, f, p)
    assert mixed.compute_s == pytest.approx(one.parts(d, ctx, f, p).compute_s)


def test_the_tensorrt_llm_rows_run_prompt_and_decode_attention_as_two_kernels():
    from pathlib import Path

    from app.shipped.rules import load_efficiency

    table = load_efficiency(Path(__file__).resolve().parents[2] / "data")
    for regime in ("decode", "prefill"):
        assert table.profile(H100, "cuda", "tensorrt-llm", "bf16", regime).split_attention
        assert not table.profile(H100, "cuda", "vllm", "bf16", regime).split_attention


def test_an_moe_layer_moves_its_routed_copies_activations():
    per_token = llm_step.moe_activation_bytes(QWEN3_30B_A3B)
    # 48 layers × 8 copies × 2 bytes × (6 × 768 + 2 × 2048) values
    assert per_token == pytest.approx(48 * 8 * 2 * (6 * 768 + 2 * 2048))
    assert llm_step.moe_activation_bytes(LLAMA3_8B) == 0.0  # dense: no routed copies
    moe = _moe()
    no_traffic = dataclasses.replace(moe, moe_act_bytes=0.0)
    a, b = moe.parts(0.0, 0.0, 8192.0, 8192.0), no_traffic.parts(0.0, 0.0, 8192.0, 8192.0)
    assert a.seconds - b.seconds == pytest.approx(8192 * per_token / moe.bw)


DEEPSEEK_R1 = dataclasses.replace(
    LLAMA3_8B, params=671e9, active_params=37e9, experts=256, active_experts=8, layers=61,
    hidden_size=7168, num_heads=128, num_kv_heads=1, intermediate_size=2048, vocab_size=129280,
    kv_elements_per_token=35136, attention="mla", shared_experts=1,
)  # fmt: skip
FLOORS = RuntimeProfile(kernel_us=2.0, gemm_min_us=5.0, attention_min_us=5.0, moe_block_us=21.0)


def _r1(model=DEEPSEEK_R1, prof=FLOORS, n=8, w="fp8") -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights=w, kv="bf16", n=n, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_a_tensor_parallel_decode_step_pays_two_all_reduce_latencies_per_layer():
    rep = _replica(H100, 8, RuntimeProfile(span="tensor", kernel_us=2.0))
    step = rep.parts(1.0, 1000.0, 0.0, 1000.0)
    # one token's hidden state is 8 KB: the 64 all-reduces cost their latency, not their bytes
    assert step.comm_s >= 2 * 32 * rep.tp_link.latency_s
    assert step.comm_s == pytest.approx(2 * 32 * rep.tp_link.latency_s, rel=0.05)
    assert _replica().parts(1.0, 1000.0, 0.0, 1000.0).comm_s == 0.0  # one GPU: none


def test_each_kernel_has_a_floor_that_binds_where_a_gpus_share_is_tiny():
    # DeepSeek-R1 in fp8 on 8 GPUs at one token: each GPU reads ~37 GB / 8 of active weights
    # per step, ~26 µs a layer, but runs 7 GEMM kernels (MLA's 5, a shared expert's 2), each at
    # its floor: 61 × 7 × 5 µs; the routed block's small kernels add 21 µs a layer besides
    rep = _r1()
    floor = 61 * 7 * 5 * 1e-6
    block = 61 * 21e-6
    assert rep.gemm_floor_s == pytest.approx(floor)
    one = rep.parts(1.0, 2000.0, 0.0, 1000.0)
    bare = _r1(prof=GRAPHS).parts(1.0, 2000.0, 0.0, 1000.0)
    assert one.memory_s < floor  # the bytes are the smaller part
    # the floors replace the bytes (GEMMs, attention), they do not add to them; the routed
    # block's kernels do
    assert one.seconds - bare.seconds == pytest.approx(
        floor + 61 * 5e-6 - bare.memory_s + block, rel=0.02
    )
    assert one.launch_s > one.memory_s  # kernels, not bytes, bound the step
    # a dense 8B model on one GPU reads ~0.5 GB per layer's GEMMs: the GEMM floor changes
    # nothing (the attention's, 32 × 5 µs against a 44 µs cache read, adds ~0.12 ms)
    dense, dense_bare = _replica(prof=FLOORS), _replica()
    t, t_bare = dense.parts(1.0, 1000.0, 0.0, 1000.0), dense_bare.parts(1.0, 1000.0, 0.0, 1000.0)
    assert t.seconds == pytest.approx(t_bare.seconds, rel=0.025)
    # and at many tokens an MoE reads its experts: the bytes take over from the floor
    busy = rep.parts(256.0, 2000.0, 0.0, 1000.0)
    assert busy.memory_s > rep.gemm_floor_s


def test_latent_attention_and_shared_experts_set_the_layers_kernels():
    mla = _r1()
    gqa = _r1(dataclasses.replace(DEEPSEEK_R1, attention=None))
    no_shared = _r1(dataclasses.replace(DEEPSEEK_R1, attention=None, shared_experts=0))
    per = 61 * 2e-6
    block = 61 * 21e-6  # the routed block's small kernels, beside the gaps (moe_block_us)
    assert gqa.launch_s == pytest.approx(per * 17 + block)  # 10 + router, top-k, permute, ...
    assert mla.launch_s == pytest.approx(per * 22 + block)  # + 2 latent norms, q_b, 2 BMMs
    assert no_shared.launch_s == pytest.approx(per * 14 + block)  # no dense MLP beside them
    assert mla.gemm_floor_s - gqa.gemm_floor_s == pytest.approx(61 * 3 * 5e-6)
    assert gqa.gemm_floor_s - no_shared.gemm_floor_s == pytest.approx(61 * 2 * 5e-6)


def test_attention_runs_over_heads_times_head_size_not_the_hidden_size():
    # Qwen3-30B-A3B: 32 heads × 128 (its config.json's head_dim) = 4096 against hidden 2048; the
    # KV cache per token (48 layers × 2 × 4 KV heads × 128) says the head size
    qwen = dataclasses.replace(QWEN3_30B_A3B, kv_elements_per_token=48 * 2 * 4 * 128)
    assert llm_step.attention_width(qwen) == 32 * 128
    assert llm_step.attention_width(QWEN3_30B_A3B) == 2048  # no KV figure: hidden ÷ heads
    assert llm_step.attention_width(LLAMA3_8B) == 4096
    # latent attention decodes with absorbed weights: each of 128 heads over the 576-value latent
    assert llm_step.attention_width(DEEPSEEK_R1, decode_step=True) == 128 * 576
    assert llm_step.attention_width(DEEPSEEK_R1) == 7168  # its prefill: ordinary heads
    # a decode step's attention FLOPs follow the width (compute-bound: many long sequences)
    rep = _moe()
    wide = llm_step.replica(
        H100, qwen, weights="bf16", kv="bf16", n=1, decode=GRAPHS, prefill=GRAPHS,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip
    a, b = wide.parts(256.0, 8000.0, 0.0, 8000.0), rep.parts(256.0, 8000.0, 0.0, 8000.0)
    attn_flops = 4 * 48 * 256 * 8000.0
    assert a.compute_s - b.compute_s == pytest.approx(attn_flops * (4096 - 2048) / rep.attn_flops)


def test_the_dense_gemms_floors_stand_beside_the_routed_experts_grouped_gemms():
    # DeepSeek-R1 fp8 on 8 GPUs at 64 tokens: the routed experts' grouped GEMMs stream ~1.7 GB
    # a layer; the 7 small dense GEMMs a layer (each ~1 MB a GPU) take their 5 µs floors
    # one after the other with them, not hidden under their bytes
    grouped = dataclasses.replace(FLOORS, moe_tile_min=16, moe_tile_max=128)
    rep = _r1(prof=grouped)
    tokens = 64.0
    _w, _l, t_mm = rep.linear(tokens)
    dense = max(rep.dense_bytes / rep.bw, rep._dense_mm(tokens))
    assert dense < rep.gemm_floor_s < t_mm  # the floors used to vanish under max(t_mm, floors)
    assert rep.gemm_time(t_mm, tokens, 0.0, 1000.0) == pytest.approx(
        t_mm - dense + rep.gemm_floor_s
    )
    step = rep.parts(tokens, 2000.0, 0.0, 1000.0)
    # the step reports them as kernel time (its floors), beside the gaps
    assert step.launch_s >= rep.launch_s + rep.gemm_floor_s - dense - 1e-12
    # without grouped kernels one max covers them all, as before
    flat = _r1()
    _w, _l, flat_mm = flat.linear(tokens)
    assert flat.gemm_time(flat_mm, tokens, 0.0, 1000.0) == max(flat_mm, flat.gemm_floor_s)
    # the array step matches the replica to the last bit
    cols = llm_step.columns([rep, flat])
    got = cols.seconds(tokens, 2000.0, 8.0, 1000.0).tolist()
    assert got == [r.parts(tokens, 2000.0, 8.0, 1000.0).seconds for r in (rep, flat)]


def test_a_servers_average_moe_step_prices_the_experts_of_each_kind_of_step():
    # 8 decodes and, on average, 8 prompt tokens of 1024-token prompts: one step in ~128
    # carries a whole prompt, the rest none. The experts touched are concave in the tokens, so
    # the mean step's 16 tokens (40 % of DeepSeek's experts) over-count the mix of 8-token steps
    # (22 %) and rare prompt steps (~100 %): 23 % on average
    rep = _r1()
    d, f, p = 8.0, 8.0, 1024.0
    q = llm_step.mixed_share(f, p)
    # the LM head multiplies the decodes and each prompt's last token
    plain, mixed = rep.linear(d), rep.linear(d + f / q, d + f / q / p)
    want = [(1 - q) * a + q * b for a, b in zip(plain, mixed, strict=True)]
    assert rep.linear_step(d, f, p) == pytest.approx(want)
    share = rep.expert_bytes / rep.bw
    assert rep.linear(d + f)[0] - rep.dense_bytes / rep.bw == pytest.approx(
        share * (1 - (1 - 8 / 256) ** 16)
    )
    assert rep.linear_step(d, f, p)[0] < 0.65 * rep.linear(d + f)[0]
    # the step pays it; a step known to carry a prompt, a prefill alone and a dense model not
    avg, mean_tokens = rep.parts(d, 2000.0, f, p), rep.linear(d + f, d + f / p)
    assert avg.memory_s < dataclasses.replace(rep).parts(d, 2000.0, f, p, with_prompt=True).memory_s
    assert rep.linear_step(d, f, p, with_prompt=True) == mean_tokens
    assert rep.linear_step(0.0, 512.0, p) == rep.linear(512.0, 512.0 / p)
    dense = _replica()
    assert dense.linear_step(d, f, p) == dense.linear(d + f, d + f / p)
    # the array step does the same, to the last bit
    cols = llm_step.columns([rep])
    assert cols.seconds(d, 2000.0, f, p).tolist() == [avg.seconds]


def test_an_mla_decode_pads_each_gpus_query_heads_to_the_kernels_64_row_tile():
    # FlashMLA runs a sequence's query heads as the rows of a 64-row tile against the shared
    # latent: DeepSeek-R1's 128 heads over 8 GPUs are 16 a GPU, computed as 64 (4x the math);
    # over 2 GPUs 64 each, a full tile; ordinary attention is split by head, unpadded
    pad = llm_step.mla_head_padding
    assert [pad(DEEPSEEK_R1, tp) for tp in (1, 2, 4, 8)] == [1.0, 1.0, 2.0, 4.0]
    assert pad(dataclasses.replace(DEEPSEEK_R1, attention=None), 8) == 1.0
    assert pad(LLAMA3_8B, 8) == 1.0
    # the step's decode attention math grows by it; its bytes (the latent cache) do not
    rep = _r1()
    assert rep.attn_width_decode == 4.0 * llm_step.attention_width(DEEPSEEK_R1, decode_step=True)
    unpadded = dataclasses.replace(rep, attn_width_decode=rep.attn_width_decode / 4.0)
    step = (64.0, 8000.0, 0.0, 1000.0)  # many long sequences: the math outweighs the latent
    a, b = rep.parts(*step), unpadded.parts(*step)
    assert a.memory_s == b.memory_s
    math = 4.0 * 61 * 128 * 576 * 64 * 8000.0 / rep.attn_flops
    assert a.compute_s - b.compute_s == pytest.approx(3.0 * math)
    # at one sequence the latent's bytes (or the kernel's floor) still bound it: no change
    assert (
        rep.parts(1.0, 2000.0, 0.0, 1000.0).seconds
        == unpadded.parts(1.0, 2000.0, 0.0, 1000.0).seconds
    )
    # a dense MLA model's card columns pad as its replica does, to the last bit
    dense_mla = dataclasses.replace(
        DEEPSEEK_R1, experts=None, active_experts=None, active_params=None, params=20e9
    )
    job, card, cols = _one_card_columns(H100, dense_mla, FLOORS, [1.0, 8.0])
    for n, col in ((1, 0), (8, 1)):
        one = llm_step.replica(
            H100, dense_mla, weights="bf16", kv="bf16", n=n, decode=FLOORS, prefill=FLOORS,
            memory_efficiency=0.88, compute_efficiency=COMP, job=job, card=card, links=False,
        )  # fmt: skip
        assert cols.attn_width_decode[col] == one.attn_width_decode
        assert cols.seconds(*step)[col] == one.parts(*step).seconds


def test_a_step_of_tiny_kernels_is_bound_by_their_launches():
    # a one-token step whose GPU share of the weights is a few MB (a small model, or one
    # split widely): 32 layers × 10 kernels' gaps and floors outweigh the bytes
    tiny = dataclasses.replace(_replica(), dense_bytes=4e6)
    t = tiny.parts(1.0, 500.0, 0.0, 500.0)
    assert t.bound == "kernel launches"
    assert t.launch_s > t.memory_s and t.launch_s > t.compute_s
    # the same kernels at a real share of the weights: bound by the bytes again
    assert _replica().parts(1.0, 500.0, 0.0, 500.0).bound == "memory bandwidth"
    # and a large batch makes the tiny kernels do real work
    assert tiny.parts(4096.0, 500.0, 0.0, 500.0).bound != "kernel launches"


# ---------------------------------------------------------------- llama.cpp prompt datapaths


def test_llamacpp_mmq_prompt_runs_per_sm_clock_so_a_ga100_is_not_halved():
    """Quantised prompts run llama.cpp's MMQ, bound per SM-clock: an A100 (108 SMs at 1.41 GHz,
    64 FP32 lanes per SM) is priced at SMs × clock, not at its FP32 peak (which halves it)."""
    mmq = RuntimeProfile(compute_basis="sm", compute=1.9)
    a100 = _replica(A100, prefill=mmq, weights="int4")
    r4090 = _replica(RTX4090, prefill=mmq, weights="int4")
    assert a100.flops == pytest.approx(2 * 19.5e12 * 1.9)
    assert r4090.flops == pytest.approx(82.6e12 * 1.9)
    fp32 = _replica(A100, prefill=RuntimeProfile(compute_basis="fp32", compute=1.9), weights="int4")
    assert a100.flops == pytest.approx(2 * fp32.flops)


def test_llamacpp_mmq_prompts_name_their_int8_math_not_the_rate_basis():
    """MMQ's rate is per SM-clock (basis ``sm``), but its arithmetic is int8 MMA on q8_1
    activations: the shipped row says so, and the replica names that, for int4 and int8 GGUF."""
    from pathlib import Path

    from app.shipped.rules import load_efficiency

    table = load_efficiency(Path(__file__).resolve().parents[2] / "data")
    for weights in ("int4", "int8"):
        prof = table.profile(RTX4090, "cuda", "llama.cpp", weights, "prefill")
        assert prof.compute_basis == "sm"
        rep = _replica(RTX4090, prefill=prof, weights=weights)
        assert rep.compute_precision == "int8", weights


def test_fp16_accumulate_doubles_geforce_but_not_datacenter_gemms():
    """llama.cpp's F16 weights go through cuBLAS with CUBLAS_COMPUTE_16F: a GeForce part (whose
    catalog fp16 is its half-rate FP32-accumulate figure) runs them at twice that; an A100 runs
    both accumulations at one rate."""
    acc16 = RuntimeProfile(fp16_accumulate=True)
    plain = RuntimeProfile()
    g16 = _replica(RTX4090, prefill=acc16, weights="fp16")
    g32 = _replica(RTX4090, prefill=plain, weights="fp16")
    # twice the peak, each path at its own share of it (since session 42, sdc: the
    # FP32-accumulate half rate held whole, the FP16-accumulate full rate at 0.90)
    doubled = 2 * FP16_ACCUMULATE_GEMM_SHARE / HALF_RATE_GEMM_SHARE
    assert g16.flops == pytest.approx(doubled * g32.flops)
    assert g16.attn_flops == pytest.approx(g32.attn_flops)  # KQ runs at F32 precision
    d16 = _replica(A100, prefill=acc16, weights="fp16")
    d32 = _replica(A100, prefill=plain, weights="fp16")
    assert d16.flops == pytest.approx(d32.flops)


def test_a_part_without_a_published_tensor_figure_runs_on_the_derived_16bit_peak():
    """RTX 4000/5000 Ada publish no dense tensor figure (the catalog leaves fp16 null): the LLM
    step runs 16-bit and weight-only GEMMs on the 16-bit peak derived from FP32 by generation
    (peaks.TENSOR_RATIO, as the operator path does), not on the FP32 CUDA cores."""
    rtx5000 = dataclasses.replace(
        RTX4090, segment="workstation", fp32_tflops=65.28, fp16_tflops=None, bf16_tflops=None
    )
    assert llm_step.datapath(rtx5000, "fp16") == (pytest.approx(65.28 * 4), "fp16")
    assert llm_step.datapath(rtx5000, "int4")[1] == "fp16"
    # a published figure is kept as it is
    assert llm_step.datapath(RTX4090, "fp16") == (165.2, "fp16")


def test_a_cublas_prompt_path_dequantises_the_weights_in_each_pass_of_more_than_32_tokens():
    """llama.cpp before PR #8075 (and GGML_CUDA_FORCE_CUBLAS builds) converts each quantised
    weight matrix to FP16 before an FP16 cuBLAS GEMM in every pass of more than 32 tokens: a
    pass over the weights that reads the stored bytes and writes 2 per weight. A decode step
    (MMVQ) and a 16-bit model pay nothing."""
    cublas = RuntimeProfile(dequantize_min_tokens=32)
    q4 = _replica(RTX4090, prefill=cublas, weights="int4", own_bits=4.84)
    plain = _replica(RTX4090, weights="int4", own_bits=4.84)
    want = LLAMA3_8B.params * (4.84 / 8 + 2.0) / q4.bw
    assert q4.dequant_s == pytest.approx(want)
    prompt = (0.0, 0.0, 512.0, 512.0)
    assert q4.parts(*prompt).seconds == pytest.approx(plain.parts(*prompt).seconds + want)
    assert q4.parts(*prompt).memory_s > plain.parts(*prompt).memory_s
    # 32 tokens or fewer run MMQ, one token MMVQ: no dequantise pass
    for step in ((1.0, 100.0, 0.0, 1.0), (0.0, 0.0, 32.0, 32.0)):
        assert q4.parts(*step).seconds == plain.parts(*step).seconds
    f16 = _replica(RTX4090, prefill=cublas, weights="fp16")
    assert f16.dequant_s == 0.0
    # the arrays step as the replica does
    cols = llm_step.columns([q4, plain])
    for step in (prompt, (0.0, 0.0, 32.0, 32.0), (4.0, 300.0, 0.0, 1.0)):
        assert cols.seconds(*step).tolist() == [r.parts(*step).seconds for r in (q4, plain)]


def test_a_dequantising_pass_multiplies_the_fp16_copy_and_reads_its_2_bytes_a_weight():
    """The cuBLAS prompt path hands cuBLAS the FP16 buffer ``to_fp16_cuda`` wrote, so a pass
    of more than 32 tokens reads 2 bytes a weight in its GEMMs besides the dequantise pass
    (stored bytes read, 2 written); a pass of 32 or fewer (MMQ) reads the stored bytes. The
    read shows where the GEMMs are memory-bound (a short prompt), not at 512 tokens."""
    cublas = RuntimeProfile(dequantize_min_tokens=32)
    q4 = _replica(RTX4090, prefill=cublas, weights="int4", own_bits=4.84)
    plain = _replica(RTX4090, weights="int4", own_bits=4.84)
    # every weight but the untied input embedding's, which the GEMMs never read
    multiplied = LLAMA3_8B.params - 128256 * 4096
    stored = multiplied * 4.84 / 8 / q4.bw
    fp16 = multiplied * 2.0 / q4.bw
    assert q4.dequant_read_scale == pytest.approx(2.0 / (4.84 / 8))
    assert q4.linear(33.0)[0] == pytest.approx(fp16)
    assert q4.linear(32.0)[0] == pytest.approx(stored) == plain.linear(32.0)[0]
    # 40 tokens on a 4090: the GEMMs' FLOPs take less time than the FP16 copy's read, so
    # the pass costs the dequantise pass plus that read where the stored bytes' path costs
    # max(its read, the FLOPs)
    short = (0.0, 0.0, 40.0, 40.0)
    t_lin = q4.linear(40.0, 1.0)[1]  # one prompt: its last token's logits
    assert t_lin < fp16
    assert q4.parts(*short).seconds - plain.parts(*short).seconds == pytest.approx(
        q4.dequant_s + fp16 - max(stored, t_lin), rel=1e-9
    )
    # a 16-bit model reads what it stores
    assert _replica(RTX4090, prefill=cublas, weights="fp16").dequant_read_scale == 1.0
    cols = llm_step.columns([q4, plain])
    for step in (short, (0.0, 0.0, 32.0, 32.0)):
        assert cols.seconds(*step).tolist() == [r.parts(*step).seconds for r in (q4, plain)]


def test_a_power_capped_board_runs_its_cublas_prompt_gemms_at_the_clock_its_tdp_holds():
    """A prompt pass on the 16-bit tensor path keeps every SM busy: a board whose TDP × its
    architecture's sustained TFLOPS per watt is below the tensor peak its GEMMs run at holds
    that share of its boost clock, which slows its GEMMs and its attention alike. A GeForce
    4090 (450 W, 330 FP16-accumulate TFLOPS) stays under the Ada figure; a 300 W AD102 board
    (RTX 6000 Ada: 364) drops to 300 × 0.74 ÷ 364; the FP32 CUDA-core path is untouched."""
    ada = RuntimeProfile(fp16_accumulate=True, tensor_tflops_per_watt=0.74)
    plain = RuntimeProfile(fp16_accumulate=True)
    rtx6000 = dataclasses.replace(
        RTX4090, segment="workstation", tdp_w=300.0, fp16_tflops=364.0, bf16_tflops=364.0
    )
    share = 300 * 0.74 / 364
    assert llm_step.sustained_clock(rtx6000, ada) == pytest.approx(share)
    capped = _replica(rtx6000, prefill=ada, weights="fp16")
    free = _replica(rtx6000, prefill=plain, weights="fp16")
    assert capped.flops == pytest.approx(share * free.flops)
    assert capped.attn_flops == pytest.approx(share * free.attn_flops)
    prompt = (0.0, 0.0, 512.0, 512.0)
    assert capped.parts(*prompt).seconds > free.parts(*prompt).seconds
    # the 4090 holds its clock: 450 W × 0.74 = 333 ≥ 2 × 165.2
    assert llm_step.sustained_clock(RTX4090, ada) == 1.0
    g = _replica(RTX4090, prefill=ada, weights="fp16")
    assert g.flops == pytest.approx(_replica(RTX4090, prefill=plain, weights="fp16").flops)
    # without FP16 accumulation the 4090's GEMMs run at its 165 FP32-accumulate peak: no cap
    assert llm_step.sustained_clock(RTX4090, RuntimeProfile(tensor_tflops_per_watt=0.74)) == 1.0
    # the MMQ basis takes the clock in basis_tflops, not twice, against the die's full 16-bit
    # rate (this fixture's SMs × clock: 82.6 × 4), and its attention takes the same clock
    mmq = RuntimeProfile(compute_basis="sm", compute=1.9, tensor_tflops_per_watt=0.74)
    q4 = _replica(rtx6000, prefill=mmq, weights="int4")
    sm_share = min(1.0, 300 * 0.74 / (82.6 * 4))
    assert q4.flops == pytest.approx(82.6e12 * 1.9 * sm_share)
    assert llm_step.sustained_clock(rtx6000, mmq) == pytest.approx(sm_share)
    q4_free = _replica(
        rtx6000, prefill=RuntimeProfile(compute_basis="sm", compute=1.9), weights="int4"
    )
    assert q4.attn_flops == pytest.approx(sm_share * q4_free.attn_flops)


def test_a_layer_split_hands_each_boundary_the_hidden_state_in_the_runtimes_bytes():
    """A layer split of S GPUs hands the step's hidden state across S − 1 boundaries; llama.cpp's
    residual stream is F32 (ggml_mul_mat's result type), 4 bytes per value where the default
    is a 16-bit hand-off. A pp512 prompt is one -ub 512 micro-batch: the GPUs run it in turn,
    one card's whole-model time plus those hand-offs."""
    split = RuntimeProfile(kernel_us=2.0, span="layers", microbatch_tokens=512)
    f32 = dataclasses.replace(split, handoff_bytes=4.0)
    r16 = _replica(RTX4090, n=4, prof=split)
    r32 = _replica(RTX4090, n=4, prof=f32)
    assert r32.handoff_bytes == 4.0 and r16.handoff_bytes == 2.0
    hop = r16.hop_link
    hidden = LLAMA3_8B.hidden_size
    assert hidden is not None
    want = 3 * (512 * hidden * 4.0 / (hop.gbs * 1e9) + hop.latency_s)
    assert r32.comm(512.0) == pytest.approx(want)
    assert r32.comm(512.0) > r16.comm(512.0)
    one = _replica(RTX4090, prof=f32)
    prompt = (0.0, 0.0, 512.0, 512.0)
    assert r32.parts(*prompt).seconds == pytest.approx(one.parts(*prompt).seconds + want)
    # the array path hands off the same bytes
    _, _, cols = _one_card_columns(RTX4090, LLAMA3_8B, f32, [4.0], gpus=[RTX4090])
    assert cols.comm_of(0, 512.0, 0.0) == pytest.approx(r32.comm(512.0))


def test_a_cache_regrown_by_torch_cat_moves_three_times_its_bytes_per_decode_step():
    """generate()'s KV cache (transformers' legacy tuple cache, DynamicCache.update) grows by
    torch.cat every step: the whole old K and V read, a copy one token longer written, then
    attention reads it (kv_traffic 3); a preallocated cache is read once."""
    cat = _replica(prof=RuntimeProfile(kernel_us=2.0, kv_traffic=3.0))
    plain = _replica()
    a, b = plain.parts(64.0, 4000.0, 0.0, 4000.0), cat.parts(64.0, 4000.0, 0.0, 4000.0)
    values = LLAMA3_8B.kv_values(4000.0)
    assert values is not None
    cache = 64.0 * values * 2.0 / plain.bw
    assert b.memory_s - a.memory_s == pytest.approx(2.0 * cache)
    # a prefill has no cache to regrow
    assert cat.parts(0.0, 0.0, 512.0, 512.0).seconds == plain.parts(0.0, 0.0, 512.0, 512.0).seconds


def test_a_session_context_pass_pays_its_fixed_time_per_layer_and_a_decode_step_does_not():
    """TensorRT-LLM's static session runs its context phase as a plain TensorRT enqueue, never a
    CUDA graph (gptSession.cpp): the prefill profile's ``context_layer_us`` × layers is paid by
    a pass of prompt tokens without decodes, serially with its math and bytes. A decode step, a
    mixed step and a server's executor (``session_context=False``) pay none of it."""
    ctx = RuntimeProfile(kernel_us=2.0, context_layer_us=100.0)
    rep = _replica(prefill=ctx)
    plain = _replica()
    assert rep.context_s == pytest.approx(32 * 100e-6)
    prompt = (0.0, 0.0, 128.0, 128.0)
    a, b = rep.parts(*prompt), plain.parts(*prompt)
    assert a.seconds == pytest.approx(b.seconds + 32 * 100e-6)
    assert a.launch_s == pytest.approx(b.launch_s + 32 * 100e-6)  # an overhead, not math
    assert (a.compute_s, a.memory_s) == (b.compute_s, b.memory_s)
    for step in ((1.0, 500.0, 0.0, 500.0), (8.0, 500.0, 256.0, 512.0)):
        assert rep.parts(*step).seconds == plain.parts(*step).seconds
    # it is the prefill profile's: the decode profile's figure is not read
    assert _replica(decode=ctx).context_s == 0.0
    assert _replica(prefill=ctx, session_context=False).context_s == 0.0
    # the arrays step as the replica does, and a card's terms build the same column
    cols = llm_step.columns([rep, plain])
    for step in (prompt, (1.0, 500.0, 0.0, 500.0), (8.0, 500.0, 256.0, 512.0)):
        assert cols.seconds(*step).tolist() == [r.parts(*step).seconds for r in (rep, plain)]
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    card = llm_step.card_terms(
        H100, weights="bf16", decode=GRAPHS, prefill=ctx, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    dense = llm_step.dense_columns(
        job, llm_step.card_rows([card]), np.zeros(1, np.intp), np.ones(1)
    )
    assert dense.context_s.tolist() == [rep.context_s]
    assert dense.seconds(*prompt).tolist() == [rep.parts(*prompt).seconds]


def test_the_tensorrt_llm_prefill_row_sets_the_context_pass_time_and_decode_keeps_none():
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    table = load_efficiency(data)
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    for slug in ("h100-sxm", "a100-sxm4-80gb", "l40s"):
        prof = table.profile(gpus[slug], "cuda", "tensorrt-llm", "fp8", "prefill")
        assert prof.context_layer_us == pytest.approx(100.0)
        decode = table.profile(gpus[slug], "cuda", "tensorrt-llm", "fp8", "decode")
        assert decode.context_layer_us == 0.0
        vllm = table.profile(gpus[slug], "cuda", "vllm", "fp8", "prefill")
        assert vllm.context_layer_us == 0.0


def test_an_old_pytorchs_16_bit_cat_moves_the_regrown_cache_at_half_the_rate():
    """PyTorch before 2.8 copies a 16-bit tensor in torch.cat without vector loads, at half the
    bytes per second of a vectorised cat (pytorch PR #150233's before table): the cat's read and
    write of generate()'s cache cost as 4 ×, attention's read 1 ×: 5 × the cache where a
    current release moves 3 ×. A 32-bit cache and an unstated release keep the vectorised cat."""
    assert llm_step.cat_rate("2.1.1", 2.0) == 0.5
    assert llm_step.cat_rate("2.1.0+cu118", 2.0) == 0.5
    assert llm_step.cat_rate("2.7", 2.0) == 0.5
    assert llm_step.cat_rate("2.8.0", 2.0) == 1.0
    assert llm_step.cat_rate("", 2.0) == 1.0
    assert llm_step.cat_rate("2.1.1", 4.0) == 1.0
    prof = RuntimeProfile(kernel_us=2.0, kv_traffic=3.0)
    old = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16", torch_version="2.1.1")
    new = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    plain = _replica()
    a = plain.parts(64.0, 4000.0, 0.0, 4000.0)
    b = _replica(prof=prof, job=old).parts(64.0, 4000.0, 0.0, 4000.0)
    c = _replica(prof=prof, job=new).parts(64.0, 4000.0, 0.0, 4000.0)
    values = LLAMA3_8B.kv_values(4000.0)
    assert values is not None
    cache = 64.0 * values * 2.0 / plain.bw
    assert b.memory_s - a.memory_s == pytest.approx(4.0 * cache)
    assert c.memory_s - a.memory_s == pytest.approx(2.0 * cache)
    # a preallocated cache has no cat to slow down
    assert _replica(job=old).parts(64.0, 4000.0, 0.0, 4000.0).memory_s == a.memory_s


def test_the_masked_mha_kernel_does_decode_attention_math_on_the_cuda_cores():
    """TensorRT-LLM's masked MHA kernel (a run without XQA) runs one thread block per query
    head and sequence on the CUDA cores: a decode step's Q·K and A·V FLOPs (4 × layers × heads ×
    head size × context per sequence; Llama 3 8B: 32 × 4096) take the SM's issue rate (SMs ×
    clock: the FP32 peak on a 128-lane Hopper SM) × the decode profile's mmha_sm_share, not the
    16-bit tensor rate, and bound the attention when longer than its KV bytes. A prompt pass
    keeps the tensor rate; a job without the kernel, a profile without the share or a GPU
    without an FP32 figure are unchanged."""
    prof = RuntimeProfile(kernel_us=2.0, mmha_sm_share=0.1)
    card = llm_step.card_terms(
        H100, weights="bf16", decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    assert card.mmha_slowdown == pytest.approx(card.attn_flops / (67e12 * 0.1))
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16", mmha=True)
    assert job.mmha
    rep, plain = _replica(prof=prof, job=job), _replica(prof=prof)
    assert rep.decode_attn_slowdown == card.mmha_slowdown and plain.decode_attn_slowdown == 1.0
    a, b = plain.parts(64.0, 4000.0, 0.0, 4000.0), rep.parts(64.0, 4000.0, 0.0, 4000.0)
    math_s = 4.0 * 32 * 4096 * 64.0 * 4000.0 / (67e12 * 0.1)
    tensor_s = 4.0 * 32 * 4096 * 64.0 * 4000.0 / plain.attn_flops
    assert b.compute_s - a.compute_s == pytest.approx(math_s - tensor_s)
    # 6.7 TFLOP/s of CUDA-core math outlasts the step's KV bytes (8 KV heads, 16-bit)
    values = LLAMA3_8B.kv_values(4000.0)
    assert values is not None and math_s > 64.0 * values * 2.0 / rep.bw
    assert b.seconds - a.seconds == pytest.approx(math_s - 64.0 * values * 2.0 / rep.bw)
    # a prompt pass (context FMHA on the tensor cores) is the same
    assert rep.parts(0.0, 0.0, 8192.0, 2048.0) == plain.parts(0.0, 0.0, 8192.0, 2048.0)
    # no share in the profile, or no FP32 figure in the catalog: the tensor rate
    assert _replica(job=job).decode_attn_slowdown == 1.0
    no_fp32 = dataclasses.replace(H100, fp32_tflops=None)
    assert _replica(gpu=no_fp32, prof=prof, job=job).decode_attn_slowdown == 1.0


def test_the_masked_mha_kernel_runs_at_the_sm_issue_rate_not_the_fp32_lanes():
    """The masked MHA kernel converts each 16-bit or FP8 operand to float before its FMA, a
    mix bound by the SM's instruction issue, not its FP32 lanes: a GA100 SM (64 FP32 lanes,
    CUDA C++ Programming Guide) runs it at the rate per SM-clock a 128-lane GH100 SM does, so
    the A100's rate is twice its FP32 peak × the share (19.5 × 2 × 0.1 TFLOP/s), not 19.5 ×
    0.1 (which left its Mistral 7B static batches 1.4-1.6x faster than the engine)."""
    prof = RuntimeProfile(kernel_us=2.0, mmha_sm_share=0.1)
    card = llm_step.card_terms(
        A100, weights="fp16", decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    assert card.mmha_slowdown == pytest.approx(card.attn_flops / (19.5e12 * 2 * 0.1))
    # a part with no listed compute capability keeps its FP32 peak
    plain = dataclasses.replace(A100, compute_capability=None)
    card = llm_step.card_terms(
        plain, weights="fp16", decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    assert card.mmha_slowdown == pytest.approx(card.attn_flops / (19.5e12 * 0.1))


def test_repeat_kv_copies_a_grouped_cache_for_every_query_head_and_dispatches_more_ops():
    """transformers' repeat_kv expands grouped-query K/V to all g query heads of a group each
    step: it reads the cache, writes g copies, and attention reads those instead of the cache
    (2g more cache bytes; Llama 3 8B: 32 heads over 8 KV heads, g = 4), and it is ~8 more
    eager ops per layer. A model with as many KV heads as heads repeats nothing."""
    prof = RuntimeProfile(kernel_us=4.0, kv_traffic=3.0, ops_per_layer=81.0, host_us_per_op=10.0)
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16", kv_repeat=True)
    assert job.repeat_groups == 4
    rep, plain = _replica(prof=prof, job=job), _replica(prof=prof)
    a, b = plain.parts(64.0, 4000.0, 0.0, 4000.0), rep.parts(64.0, 4000.0, 0.0, 4000.0)
    values = LLAMA3_8B.kv_values(4000.0)
    assert values is not None
    cache = 64.0 * values * 2.0 / plain.bw
    assert b.memory_s - a.memory_s == pytest.approx(8.0 * cache)
    assert rep.host_s == pytest.approx(plain.host_s * (81 + llm_step.REPEAT_KV_HOST_OPS) / 81)
    # both old-stack terms at once: 1 + 2 / 0.5 + 2 × 4 = 13 × the cache
    both = llm_step.replica_job(
        LLAMA3_8B, weights="bf16", kv="bf16", kv_repeat=True, torch_version="2.1"
    )
    assert both.kv_traffic(3.0) == 13.0 and both.kv_traffic(1.0) == 9.0
    mha = dataclasses.replace(LLAMA3_8B, num_kv_heads=LLAMA3_8B.num_heads)
    assert llm_step.replica_job(mha, weights="bf16", kv="bf16", kv_repeat=True).repeat_groups == 1
    # a runtime without host dispatch gains no host ops
    assert _replica(job=job).host_s == 0.0


@pytest.mark.parametrize(
    ("transformers", "attn", "torch", "repeats"),
    [
        ("4.35.2", "eager", "2.1.1", True),
        ("4.35.0.dev0", "", "2.1.0", True),  # eager was the default before v4.36
        ("4.40.0", "", "2.3.0", True),  # SDPA, the default from v4.36, repeated until v4.54
        ("4.55.0", "", "2.6.0", False),  # SDPA with enable_gqa (PR #39412)
        ("4.55.0", "sdpa", "2.4.1", True),  # enable_gqa needs torch >= 2.5
        ("4.55.0", "eager", "", True),
        ("4.40.0", "flash_attention_2", "2.3.0", False),
        ("", "", "", False),  # an unstated stack is a current one
    ],
)
def test_which_transformers_stacks_repeat_kv(transformers, attn, torch, repeats):
    assert llm_step.transformers_repeats_kv(transformers, attn, torch) is repeats


def test_a_gptq_or_awq_linear_dispatches_more_host_ops_than_nn_linear():
    """AutoGPTQ's exllama QuantLinear (view, empty, kernel, view) and AutoAWQ's WQLinear_GEMM
    (no_grad, reshape, kernel, reshape) each dispatch ~3 more ops than nn.Linear's F.linear, on
    the seven linears of a layer: an eager decode step's host time grows by 21 ops per layer;
    a runtime without host dispatch (CUDA graphs) is unchanged."""
    prof = RuntimeProfile(kernel_us=4.0, ops_per_layer=81.0, host_us_per_op=10.0)
    plain = _replica(prof=prof)
    for fmt in ("gptq", "awq"):
        job = llm_step.replica_job(LLAMA3_8B, weights="int4", kv="bf16", quantization=fmt)
        assert job.extra_host_ops == 21.0
        assert _replica(prof=prof, weights="int4", job=job).host_s == pytest.approx(
            plain.host_s * (81 + 21) / 81
        )
        assert _replica(weights="int4", job=job).host_s == 0.0
    nf4 = llm_step.replica_job(LLAMA3_8B, weights="int4", kv="bf16", quantization="nf4")
    assert nf4.extra_host_ops == 0.0  # bitsandbytes' wrapper is not counted


# FlashInfer pull request #5301, TRTLLM NVFP4 column on a B200 (ms by tokens): TensorRT-LLM's
# NVFP4 MoE kernels on DeepSeek-V3 shapes, 32 local experts of 256 (an EP8 shard), top-8
B200_NVFP4_MOE_MS = {
    1: 0.036337, 2: 0.047984, 4: 0.061505, 8: 0.074912, 16: 0.086352, 32: 0.116641,
    64: 0.150450, 128: 0.155905, 256: 0.165025, 512: 0.176593,
}  # fmt: skip


def _b200_moe_layer(experts: int, active: int):
    """One DeepSeek-V3-shaped MoE layer (hidden 7168, expert FFN 2048, no dense MLP) of
    ``experts`` experts, ``active`` a token, as TensorRT-LLM runs it on a B200 in NVFP4: the
    replica and the block's fixed part (moe_block_us and the gaps of its 7 kernels)."""
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.domain.workload import ModelSpec
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    b200 = next(g for g in read_gpu_specs(data) if g.slug == "b200")
    table = load_efficiency(data)
    dec = table.profile(b200, "cuda", "tensorrt-llm", "bf16", "decode")
    pre = table.profile(b200, "cuda", "tensorrt-llm", "bf16", "prefill")
    expert, router = 3 * 7168 * 2048, 7168 * 256
    model = ModelSpec(
        family="decoder", params=experts * expert + router,
        active_params=active * expert + router, experts=experts, active_experts=active,
        shared_experts=0, layers=1, hidden_size=7168, num_heads=128, num_kv_heads=128,
        intermediate_size=2048, vocab_size=0, kv_elements_per_token=1,
    )  # fmt: skip
    rep = llm_step.replica(
        b200, model, weights="fp4", kv="fp8", n=1, decode=dec, prefill=pre,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip
    fixed = (dec.moe_block_us + llm_step.MOE_KERNELS_PER_LAYER * dec.kernel_us) * 1e-6
    return rep, dec, fixed


def _moe_block_s(rep, fixed: float, tokens: int) -> float:
    routed = rep.linear(float(tokens))[2] - rep.dense_bytes / rep.bw
    return routed + tokens * rep.moe_act_bytes / rep.bw + fixed


def test_an_moe_blocks_small_kernels_add_to_its_experts_bytes_at_every_token_count():
    # One MoE layer shaped as the sweep's shard: 32 experts of hidden 7168 × FFN 2048, each hit
    # by a token with probability 8/256 = 1/32 (top-1 of 32). The block is the touched experts'
    # NVFP4 bytes at the replica's bandwidth, plus its small kernels (moe_block_us) and the
    # gaps of its 7 kernels — not max(bytes, a floor), which fell 1.2-1.4x short from 32 tokens
    rep, dec, fixed = _b200_moe_layer(32, 1)
    for tokens, ms in B200_NVFP4_MOE_MS.items():
        block = _moe_block_s(rep, fixed, tokens)
        assert block == pytest.approx(ms * 1e-3, rel=0.25 if tokens < 16 else 0.05), tokens
    # the block's small kernels are charged per layer whatever the tokens, beside the gaps of
    # the layer's 14 kernels (no dense MLP beside the experts)
    assert rep.launch_s == pytest.approx((14 * dec.kernel_us + dec.moe_block_us) * 1e-6)


# FlashInfer pull request #3976, TRTLLM column (ms by tokens): TensorRT-LLM's NVFP4 MoE on one
# B200 holding all 256 of DeepSeek-V3's experts (EP1, TP1), top-8, CUDA graphs, CUPTI timing;
# the initial activation quantisation excluded. No constant of the engine came from it.
B200_NVFP4_MOE_ALL_EXPERTS_MS = {
    1: 0.060, 2: 0.095, 4: 0.147, 8: 0.239, 16: 0.391, 32: 0.603, 64: 0.819,
}  # fmt: skip


def test_the_additive_moe_block_holds_on_a_second_sweep_with_all_experts_on_one_gpu():
    # The same block (touched experts' bytes + moe_block_us + the gaps of its 7 kernels) on a
    # shape the constant was not taken from: 256 experts, 8 a token, so 1 to 64 tokens touch
    # 8 to ~222 experts (1 - (1 - 8/256)^T of them). It prices the sweep 1.03-1.14x slow: the
    # touched experts' bytes are counted, and a one-user MoE step is not under-priced here.
    rep, _, fixed = _b200_moe_layer(256, 8)
    for tokens, ms in B200_NVFP4_MOE_ALL_EXPERTS_MS.items():
        assert 1.0 <= _moe_block_s(rep, fixed, tokens) / (ms * 1e-3) <= 1.15, tokens


# vLLM pull request #24700 (benchmarks/kernels/benchmark_moe.py on an H100 80GB HBM3, kernel time
# of the whole fused_moe call in µs by tokens; random gating, so a balanced router). No constant
# of the engine came from it. Mixtral-8x7B in BF16 at TP2 (8 experts of hidden 4096 x FFN 7168 a
# GPU, top-2) under vLLM's tuned config for that shape:
H100_MIXTRAL_BF16_TP2_US = {
    1: 144.03, 4: 351.10, 16: 471.49, 64: 483.14, 128: 491.39, 256: 536.77, 512: 662.33,
    1024: 833.72, 1536: 1122.93,
}  # fmt: skip
# Qwen3-30B-A3B in FP8 (W8A8, per tensor) at TP1 (128 experts of hidden 2048 x FFN 768, top-8)
# under the pull request's improved default config (no tuned file for the shape), to 512 tokens
# (the excerpt read); at 1024-4096 tokens the old default ran at 144-188 TFLOP/s, half the
# engine's rate (docs/methodology.md §6.3, "MoE on Hopper").
H100_QWEN3_30B_FP8_US = {
    1: 40.44, 4: 78.10, 16: 164.64, 32: 210.07, 64: 237.26, 128: 247.67, 256: 262.38,
    512: 286.24,
}  # fmt: skip


def _h100_vllm_moe_layer(experts: int, active: int, hidden: int, ffn: int, weights: str):
    """One MoE layer (no dense MLP, no attention) as vLLM runs it on an H100, at the engine's
    own H100 efficiencies: the replica and the routed block's fixed part."""
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.domain import perf
    from app.domain.workload import ModelSpec
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    h100 = next(g for g in read_gpu_specs(data) if g.slug == "h100-sxm")
    table = load_efficiency(data)
    dec = table.profile(h100, "cuda", "vllm", weights, "decode")
    pre = table.profile(h100, "cuda", "vllm", weights, "prefill")
    eff = perf.efficiencies(h100, None)
    expert, router = 3 * hidden * ffn, hidden * experts
    model = ModelSpec(
        family="decoder", params=experts * expert + router,
        active_params=active * expert + router, experts=experts, active_experts=active,
        shared_experts=0, layers=1, hidden_size=hidden, num_heads=32, num_kv_heads=4,
        intermediate_size=ffn, vocab_size=0, kv_elements_per_token=1,
    )  # fmt: skip
    rep = llm_step.replica(
        h100, model, weights=weights, kv="bf16", n=1, decode=dec, prefill=pre,
        memory_efficiency=eff.memory, compute_efficiency=perf.llm_efficiency(eff),
    )  # fmt: skip
    fixed = (dec.moe_block_us + llm_step.MOE_KERNELS_PER_LAYER * dec.kernel_us) * 1e-6
    return rep, fixed


@pytest.mark.parametrize(
    ("shape", "sweep", "lo", "hi"),
    [
        ((8, 2, 4096, 7168, "bf16"), H100_MIXTRAL_BF16_TP2_US, 0.90, 1.30),
        ((128, 8, 2048, 768, "fp8"), H100_QWEN3_30B_FP8_US, 1.0, 1.25),
    ],
)
def test_the_moe_block_holds_on_hoppers_fused_moe_sweeps(shape, sweep, lo, hi):
    # The B200 block (touched experts' bytes or FLOPs, moe_block_us, the gaps of its 7 kernels)
    # on another architecture, runtime and kernel: vLLM's Triton fused_moe on an H100. It prices
    # both sweeps slow or near (0.92-1.26 and 1.02-1.22), from weight-bound single tokens to a
    # compute-bound 1,536: Hopper serving's MoE rows, priced fast (x1.34 held out), do not get
    # their speed from this block at these token counts.
    rep, fixed = _h100_vllm_moe_layer(*shape)
    for tokens, us in sweep.items():
        assert lo <= _moe_block_s(rep, fixed, tokens) / (us * 1e-6) <= hi, tokens


def test_a_pass_longer_than_the_runtimes_cuda_graphs_pays_each_kernels_eager_gap():
    # llama.cpp's CUDA backend replays a CUDA graph for one-token passes alone (ggml-cuda.cu:
    # graphs off when an ADD's second operand has more than one row): a 2-token step launches
    # its kernels eagerly, each gap eager_kernel_us instead of kernel_us; a 1-token step does not
    lcpp = RuntimeProfile(kernel_us=4.0, graph_max_tokens=1, eager_kernel_us=6.0)
    plain = RuntimeProfile(kernel_us=4.0)
    rep, base = _replica(RTX4090, prof=lcpp), _replica(RTX4090, prof=plain)
    kernels = 32 * llm_step.KERNELS_PER_LAYER
    assert rep.eager_launch_s == pytest.approx(kernels * 2e-6)
    one, two = rep.parts(1.0, 500.0, 0.0, 500.0), rep.parts(2.0, 500.0, 0.0, 500.0)
    assert one.seconds == base.parts(1.0, 500.0, 0.0, 500.0).seconds
    assert one.launch_s == pytest.approx(kernels * 4e-6)
    assert two.launch_s == pytest.approx(kernels * 6e-6)
    two_base = base.parts(2.0, 500.0, 0.0, 500.0)
    assert two.seconds == pytest.approx(two_base.seconds + kernels * 2e-6)
    # a prompt pass pays it too, once per pass (u micro-batches)
    pp = rep.parts(0.0, 0.0, 512.0, 512.0, with_prompt=True)
    pp_base = base.parts(0.0, 0.0, 512.0, 512.0, with_prompt=True)
    assert pp.seconds == pytest.approx(pp_base.seconds + kernels * 2e-6)
    # the column path prices every replica as the replica does, to the last bit
    cols = llm_step.columns([rep, base])
    for step in ((1.0, 500.0, 0.0, 500.0), (2.0, 500.0, 0.0, 500.0), (0.0, 0.0, 512.0, 512.0)):
        got = cols.seconds(*step)
        assert got[0] == rep.parts(*step).seconds and got[1] == base.parts(*step).seconds
    # no graph policy: the eager gap is never paid
    assert base.eager_launch_s == 0.0


def test_jobs_with_the_same_terms_compare_equal_whatever_each_kept() -> None:
    """``ReplicaJob ==`` is what fleet.loose_bounds steps precisions together by: BF16 and FP16
    weights (two bytes each) have the same replica terms, and what a job kept as it was worked
    out (its slowdowns, KV values, per-card results) does not tell them apart; 8-bit weights
    do differ."""
    bf16 = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    fp16 = llm_step.replica_job(LLAMA3_8B, weights="fp16", kv="fp16")
    assert bf16 == fp16
    bf16.kv_at(1000.0)
    bf16.per_card[("single",)] = (None, 1.0)
    assert bf16 == fp16
    assert llm_step.replica_job(LLAMA3_8B, weights="int8", kv="bf16") != bf16


def test_piecewise_cuda_graphs_cost_each_layer_of_every_pass_its_graph_split():
    # vLLM V1 before 0.11 captures its CUDA graphs piecewise: each layer's attention runs
    # eagerly between graph pieces, a fixed time per layer and pass that one whole-forward
    # graph does not pay (graph_split_us); the step's math and bytes are unchanged
    piecewise = RuntimeProfile(kernel_us=2.0, graph_split_us=13.0)
    rep, whole = _replica(prof=piecewise), _replica(prof=GRAPHS)
    per_pass = 32 * 13e-6  # Llama 3 8B's 32 layers
    for step in ((1.0, 1000.0, 0.0, 1000.0), (64.0, 1000.0, 0.0, 1000.0)):
        a, b = rep.parts(*step), whole.parts(*step)
        assert a.seconds == pytest.approx(b.seconds + per_pass)
        assert (a.memory_s, a.compute_s) == (b.memory_s, b.compute_s)
    # a prompt pass pays it too
    pp, pp_whole = (r.parts(0.0, 0.0, 512.0, 512.0, with_prompt=True) for r in (rep, whole))
    assert pp.seconds == pytest.approx(pp_whole.seconds + per_pass)
    # the array path prices it as the replica does
    _, _, cols = _one_card_columns(H100, LLAMA3_8B, piecewise, [1])
    assert cols.launch_s[0] == pytest.approx(rep.launch_s)
    assert llm_step.columns([rep]).seconds(1.0, 1000.0, 0.0, 1000.0)[0] == pytest.approx(
        rep.parts(1.0, 1000.0, 0.0, 1000.0).seconds
    )


def test_the_shipped_vllm_rows_capture_piecewise_and_sglang_rows_whole():
    from pathlib import Path

    from app.shipped.rules import load_efficiency

    table = load_efficiency(Path(__file__).resolve().parents[2] / "data")
    for regime in ("decode", "prefill"):
        # the mechanism is vLLM's, on either vendor's stack
        for gpu, backend in ((H100, "cuda"), (MI300X, "rocm")):
            assert table.profile(gpu, backend, "vllm", "bf16", regime).graph_split_us > 0.0
            assert table.profile(gpu, backend, "sglang", "bf16", regime).graph_split_us == 0.0
        assert table.profile(H100, "cuda", "tensorrt-llm", "bf16", regime).graph_split_us == 0.0
