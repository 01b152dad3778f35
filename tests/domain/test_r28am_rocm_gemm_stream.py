"""vLLM's GEMMs on CDNA 3 stream their weights at hipBLASLt's measured decode rate
(data/efficiency.yaml, source hf-mi300-kernels; docs/methodology.md §6.7j)."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import llm_step, perf
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, MI300X

TABLE = load_efficiency()
COMP = {"bf16": 0.385, "fp16": 0.385, "fp8": 0.385}

# Hugging Face's 'Torch time' of vLLM's FP8 GEMMs on one MI300X at M = 1, per TP-8 shard of
# Llama 3.1 405B: (N, K, µs) for QKV, gate-up and down (fp8: one byte a weight)
HF_M1 = ((2304, 16384, 14.938), (13312, 16384, 77.636), (16384, 6656, 31.066))


def _decode(gpu, runtime: str = "vllm"):
    backend = "cuda" if gpu.vendor == "nvidia" else "rocm"
    return TABLE.profile(gpu, backend, runtime, "bf16", "decode")


def _card(gpu, runtime: str = "vllm") -> llm_step.CardTerms:
    prof = _decode(gpu, runtime)
    return llm_step.card_terms(
        gpu, weights="fp8", decode=prof, prefill=prof,
        memory_efficiency=perf.prior_memory_efficiency(gpu), compute_efficiency=COMP,
    )  # fmt: skip


def test_vllm_on_cdna3_reads_weights_at_the_measured_hipblaslt_rate():
    weights = sum(n * k for n, k, _ in HF_M1)
    seconds = sum(us for _, _, us in HF_M1) * 1e-6
    measured = weights / seconds  # 2.95 TB/s
    assert measured / (MI300X.memory_bandwidth_gbs * 1e9) == pytest.approx(0.557, abs=0.001)
    bw = _card(MI300X).bw
    assert bw == pytest.approx(measured, rel=0.005)
    # the three GEMMs of a 405B shard then take what Hugging Face timed, not the copy-kernel
    # share CUDA's vLLM kernels get (~0.90 of a copy: 20 % quicker)
    assert weights / bw == pytest.approx(seconds, rel=0.005)
    generic = dataclasses.replace(_decode(MI300X), memory=_decode(H100).memory)
    fast = llm_step.card_terms(
        MI300X, weights="fp8", decode=generic, prefill=generic,
        memory_efficiency=perf.prior_memory_efficiency(MI300X), compute_efficiency=COMP,
    )  # fmt: skip
    assert fast.bw / bw == pytest.approx(0.792 / 0.663, rel=1e-6)


def test_other_stacks_keep_their_own_share():
    assert _decode(H100).memory == pytest.approx(0.792)  # CUDA: vllm-a100-sweep
    cdna4 = dataclasses.replace(MI300X, slug="mi355x", architecture="CDNA 4")
    assert _decode(cdna4).memory == pytest.approx(0.792)  # other silicon, not measured
    assert _decode(MI300X, "sglang").memory != pytest.approx(0.663)  # AITER's kernels
    assert _decode(MI300X).memory == pytest.approx(0.663)
