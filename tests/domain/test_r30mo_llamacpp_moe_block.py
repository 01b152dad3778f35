"""llama.cpp's one-token MoE block on CUDA is its counted kernels, not TensorRT-LLM's block
(data/efficiency.yaml, llamacpp-topk-moe; docs/methodology.md §6.7l).

The 21 µs ``moe_block_us`` stands for TensorRT-LLM's routing, quantisation, permute and
finalize kernels (FlashInfer's B200 sweep). llama.cpp's CUDA backend runs none of them at one
token: mul_mat_id reads the expert ids in its matrix-vector kernel, and the router's softmax,
top-k and get_rows (PR #16130) and the expert sum's k - 1 adds (PR #15631) are fused kernels
that the engine already counts among an MoE layer's 7. Metal keeps the block (separate
dispatches of those ops there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def table():
    return load_efficiency(DATA)


@pytest.fixture(scope="module")
def gpus():
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _decode(table, gpus, slug: str, backend: str, runtime: str = "llama.cpp"):
    return table.profile(gpus[slug], backend, runtime, "int4", "decode")


def test_llamacpp_on_cuda_and_rocm_charges_no_tensorrt_moe_block(table, gpus):
    assert _decode(table, gpus, "rtx-4090", "cuda").moe_block_us == 0.0
    assert _decode(table, gpus, "rtx-pro-6000-blackwell", "cuda").moe_block_us == 0.0
    assert _decode(table, gpus, "mi300x", "rocm").moe_block_us == 0.0


def test_other_runtimes_and_metal_keep_the_block(table, gpus):
    # the TensorRT-LLM / vLLM block on the same card, and llama.cpp's separate Metal dispatches
    vllm = _decode(table, gpus, "rtx-4090", "cuda", runtime="vllm")
    metal = _decode(table, gpus, "apple-m2-ultra", "metal")
    assert vllm.moe_block_us == metal.moe_block_us > 0.0


def _gpt_oss_step(table, gpus, slug: str, backend: str):
    model = load_presets(DATA)["gpt-oss-20b"].model
    dec = _decode(table, gpus, slug, backend)
    pre = table.profile(gpus[slug], backend, "llama.cpp", "int4", "prefill")
    rep = llm_step.replica(
        gpus[slug], model, weights="int4", kv="bf16", n=1, decode=dec, prefill=pre,
        memory_efficiency=0.88, compute_efficiency={"fp16": 0.5, "bf16": 0.5},
        format_bits=4.25,
    )  # fmt: skip
    return rep, dec, model


def test_a_cuda_moe_layer_costs_its_kernel_gaps_alone(table, gpus):
    # gpt-oss-20b: 24 MoE layers without a dense MLP or shared expert, 10 + 7 - 3 = 14 kernels
    # each; on CUDA the one-token pass's gaps are those kernels' and nothing more
    rep, dec, model = _gpt_oss_step(table, gpus, "rtx-4090", "cuda")
    kernels = llm_step._kernels_per_layer(model)
    assert kernels == 14
    assert rep.launch_s == pytest.approx(model.layers * kernels * dec.kernel_us * 1e-6)


def test_the_same_layer_on_metal_adds_the_block_per_layer(table, gpus):
    rep, dec, model = _gpt_oss_step(table, gpus, "apple-m2-ultra", "metal")
    gaps = model.layers * llm_step._kernels_per_layer(model) * dec.kernel_us * 1e-6
    assert rep.launch_s == pytest.approx(gaps + model.layers * dec.moe_block_us * 1e-6)
