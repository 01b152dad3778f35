"""llama.cpp's cuBLAS prompt path runs its whole pass at a share of the engine's GEMM estimate.

On that path (F16 weights; a quantised model on a build before PR #8075, which dequantised to
FP16 above 32 tokens) each cuBLAS GEMM is wrapped in an F32 -> FP16 conversion of its input and
an FP16 -> F32 conversion of its output, and ggml runs every norm, RoPE, add, SiLU, product,
cache copy and softmax as its own F32 kernel: time outside the GEMMs that the GEMM prior does
not hold. data/efficiency.yaml ``llamacpp-cublas-prompt`` sets the path's whole-pass factor from
llama.cpp maintainers' F16 pp512 runs (tests/data/llamacpp_cublas_prompt.yaml). It slows the
path's math alone (GEMMs and attention, not the bandwidth-bound passes) and leaves the MMQ path,
which has its own whole-pass row, alone."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _work(precision: str, prompt_gemm: str) -> WorkloadSpec:
    table = load_efficiency(DATA)
    quantised = precision == "int4"
    return WorkloadSpec(
        task="inference",
        model=load_presets(DATA)["llama-3-8b"].model,
        precision=precision,
        batch_size=1,
        seq_len=512,
        output_tokens=1,
        runtime="llama.cpp",
        quantization="q4_k_m" if quantised else "none",
        weight_bits=table.bits_per_weight["q4_k_m"] if quantised else None,
        efficiency=table,
        prompt_gemm=prompt_gemm,
    )


@pytest.mark.parametrize("slug", ["rtx-4090", "rtx-a6000", "h100-pcie"])
def test_the_cublas_path_runs_below_the_gemm_prior_and_mmq_keeps_its_own_row(slug: str) -> None:
    gpu = _gpus()[slug]
    f16 = perf.prefill_profile(gpu, _work("fp16", ""), "cuda")
    cublas_q4 = perf.prefill_profile(gpu, _work("int4", "cublas"), "cuda")
    mmq_q4 = perf.prefill_profile(gpu, _work("int4", ""), "cuda")
    assert 0.0 < f16.compute_scale < 1.0
    # a quantised model on a cuBLAS build takes the F16 weights' whole-pass share
    assert cublas_q4.compute_scale == f16.compute_scale
    # MMQ's prompt rate is its own whole-pass figure (compute_basis sm), not scaled again
    assert mmq_q4.compute_basis == "sm"
    assert mmq_q4.compute_scale == 1.0


@pytest.mark.parametrize("slug", ["rtx-4090", "rtx-a6000"])
def test_the_share_slows_the_math_and_not_the_bytes(slug: str) -> None:
    gpu = _gpus()[slug]
    work = _work("fp16", "")
    eff = perf.efficiencies(gpu, None)
    prefill = perf.prefill_profile(gpu, work, "cuda")
    decode = perf.profile_for(gpu, work, "cuda", "decode")

    def terms(profile: object) -> llm_step.CardTerms:
        return llm_step.card_terms(
            gpu,
            weights="fp16",
            decode=decode,
            prefill=profile,  # type: ignore[arg-type]
            memory_efficiency=eff.memory,
            compute_efficiency=perf.llm_efficiency(eff),
        )

    share = prefill.compute_scale
    assert share < 1.0
    shipped, whole = terms(prefill), terms(replace(prefill, compute_scale=1.0))
    assert shipped.flops == pytest.approx(share * whole.flops)
    assert shipped.attn_flops == pytest.approx(share * whole.attn_flops)
    assert shipped.bw == whole.bw


def test_a_compute_bound_prompt_takes_longer_by_the_share() -> None:
    """A 512-token F16 prompt of Llama 3 8B is compute-bound on an RTX 4090: its math time
    grows by 1 / share, its weight bytes' time does not move."""
    gpu = _gpus()["rtx-4090"]
    work = _work("fp16", "")
    eff = perf.efficiencies(gpu, None)
    rep = perf.llm_replica(gpu, work, 1, eff, "cuda")
    card = perf.llm_card(gpu, work, eff, "cuda")
    assert card.prefill.compute_scale < 1.0
    whole_card = replace(
        card, flops=card.flops / card.prefill.compute_scale,
        attn_flops=card.attn_flops / card.prefill.compute_scale,
    )  # fmt: skip
    whole = llm_step.replica(
        gpu, work.model, weights=work.precision, kv=work.kv_format, n=1, decode=card.decode,
        prefill=card.prefill, memory_efficiency=eff.memory,
        compute_efficiency=perf.llm_efficiency(eff), own_bits=work.own_bits,
        format_bits=work.format_bits, job=perf.llm_job(work), card=whole_card,
    )  # fmt: skip
    shipped, unscaled = rep.parts(0.0, 0.0, 512.0, 512.0), whole.parts(0.0, 0.0, 512.0, 512.0)
    assert shipped.bound == unscaled.bound == "compute"
    assert shipped.compute_s == pytest.approx(unscaled.compute_s / card.prefill.compute_scale)
    assert shipped.memory_s == pytest.approx(unscaled.memory_s)
