"""Which terms of a llama.cpp layer-split prompt can reorder GPUs (issue 21, session 44, lcs).

llama-bench's pp512 hands llama_decode one batch of min(512, n_batch) tokens (``test_prompt``;
defaults ``-b`` 2048, ``-ub`` 512), and llama_decode runs it as one ``-ub`` micro-batch: PR
#6017's pipeline has nothing to overlap, so the GPUs of a split run the prompt one after
another, one card's pass plus an F32 hand-off (512 x hidden x 4 bytes, host-staged on every
card: data/efficiency.yaml ``llamacpp-multi-gpu``, ``llamacpp-peer-access``) at each stage
boundary. A 1024-token prompt is two micro-batches, which do overlap.

What the tests pin: the split adds the same seconds to every card of one PCIe generation, and
the eager launch gaps are the same seconds on every card, so neither the missing overlap, the
hand-off nor the per-layer fixed costs can change the order of the GPUs in a group (the same
model, format and GPU count across cards): only the per-card GEMM rate (the build's prompt
path, its clock and efficiency) can. docs/methodology.md section 6.7z, "lcs"."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf, topology
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"

# Workstation and datacenter PCIe 4 cards of one group (the same job on each), and a PCIe 5 one
PCIE4 = ("rtx-4000-ada", "a40", "rtx-a6000", "rtx-6000-ada", "l40s", "a100-pcie-80gb")
PCIE5 = "h100-pcie"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _work(preset: str, quantised: bool, tokens: int) -> WorkloadSpec:
    """A llama-bench ppN on a May 2024 CUDA build (dequantise + FP16 cuBLAS prompts)."""
    table = load_efficiency(DATA)
    return WorkloadSpec(
        task="inference",
        model=load_presets(DATA)[preset].model,
        precision="int4" if quantised else "fp16",
        batch_size=1,
        seq_len=tokens,
        output_tokens=1,
        runtime="llama.cpp",
        quantization="q4_k_m" if quantised else "none",
        weight_bits=table.bits_per_weight["q4_k_m"] if quantised else None,
        efficiency=table,
        prompt_gemm="cublas",
    )


def _ttft_s(slug: str, work: WorkloadSpec, n: int) -> float:
    est = perf.estimate(_gpus()[slug], work, framework="pytorch", num_gpus=n, backend="cuda")
    assert est.ttft_ms is not None
    return est.ttft_ms / 1e3


def _hops_s(slug: str, work: WorkloadSpec, n: int) -> float:
    """n - 1 host-staged hand-offs of the prompt's F32 hidden state."""
    link = topology.host_staged_link(_gpus()[slug], n)
    assert work.model.hidden_size is not None
    bytes_ = work.seq_len * work.model.hidden_size * 4.0
    return (n - 1) * (bytes_ / (link.gbs * 1e9) + link.latency_s)


@pytest.mark.parametrize("slug", [*PCIE4, PCIE5])
@pytest.mark.parametrize(("preset", "quantised"), [("llama-3-8b", True), ("llama-3-8b", False)])
def test_a_512_token_prompt_on_four_gpus_is_one_cards_pass_plus_its_hand_offs(
    slug: str, preset: str, quantised: bool
) -> None:
    work = _work(preset, quantised, 512)
    one, four = _ttft_s(slug, work, 1), _ttft_s(slug, work, 4)
    assert four - one == pytest.approx(_hops_s(slug, work, 4), rel=1e-6)
    assert four > one  # one micro-batch: no overlap, so never faster than one card


@pytest.mark.parametrize("slug", [*PCIE4, PCIE5])
def test_two_micro_batches_overlap_across_the_split(slug: str) -> None:
    work = _work("llama-3-8b", True, 1024)
    assert _ttft_s(slug, work, 4) < 0.85 * _ttft_s(slug, work, 1)


@pytest.mark.parametrize(
    ("preset", "quantised"), [("llama-3-8b", True), ("llama-3-8b", False), ("llama-3-70b", True)]
)
def test_the_split_adds_the_same_seconds_to_every_card_so_it_keeps_their_order(
    preset: str, quantised: bool
) -> None:
    work = _work(preset, quantised, 512)
    # Q4_K_M 70B runs on one card of 48 GB or more (as the 2024 tables ran it), not the 20 GB one
    cards = [s for s in PCIE4 if preset != "llama-3-70b" or _gpus()[s].memory_gb >= 48]
    one = {s: _ttft_s(s, work, 1) for s in cards}
    four = {s: _ttft_s(s, work, 4) for s in cards}
    added = {s: four[s] - one[s] for s in one}
    assert max(added.values()) == pytest.approx(min(added.values()), rel=1e-9)
    assert sorted(one, key=one.__getitem__) == sorted(four, key=four.__getitem__)
    # PCIe 5 doubles the host-staged rate: the H100 PCIe pays about half the PCIe 4 cards' time
    work8 = _work("llama-3-8b", True, 512)
    h100 = _ttft_s(PCIE5, work8, 4) - _ttft_s(PCIE5, work8, 1)
    a6000 = _ttft_s("rtx-a6000", work8, 4) - _ttft_s("rtx-a6000", work8, 1)
    assert h100 == pytest.approx(a6000 / 2, rel=0.05)


@pytest.mark.parametrize("preset", ["llama-3-8b", "llama-3-70b"])
def test_the_launch_gaps_of_a_prompt_are_the_same_seconds_on_every_card(preset: str) -> None:
    work = _work(preset, True, 512)
    gaps = {
        s: perf.estimate(_gpus()[s], work, framework="pytorch", num_gpus=4, backend="cuda")
        for s in (*PCIE4, PCIE5)
    }
    values = {e.overhead_s for e in gaps.values()}
    assert len(values) == 1 and next(iter(values)) > 0


def test_every_card_of_a_may_2024_group_takes_the_fp16_cublas_prompt_path() -> None:
    """The build's path is one for every card of compute capability 8.0 and later: the quantised
    model takes the F16 weights' profile (dequantise + FP16 cuBLAS), not MMQ's ``sm`` basis."""
    work = _work("llama-3-8b", True, 512)
    for slug in (*PCIE4, PCIE5):
        gpu = _gpus()[slug]
        cublas = perf.prefill_profile(gpu, work, "cuda")
        mmq = perf.prefill_profile(gpu, replace(work, prompt_gemm=""), "cuda")
        assert cublas == perf.prefill_profile(gpu, work.with_precision("fp16"), "cuda"), slug
        assert cublas.compute_basis != "sm" and mmq.compute_basis == "sm", slug
        assert cublas.dequantize_min_tokens and not mmq.dequantize_min_tokens, slug
