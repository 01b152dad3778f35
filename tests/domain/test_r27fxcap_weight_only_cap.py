"""A power-capped Ada or Ampere board's clock share (data/efficiency.yaml's
tensor_tflops_per_watt rows) binds every job whose tensor math is 16-bit, not only bf16/fp16
checkpoints: weight-only AWQ/GPTQ (W4A16) everywhere and FP8 Marlin (W8A16) on Ampere, which
has no FP8 tensor cores, run the same fp16 GEMMs at the same TDP, so their prompts cannot
outrun bf16's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
TABLE = load_efficiency(DATA)


def _card(gpu: GpuSpec, precision: str, runtime: str = "vllm") -> llm_step.CardTerms:
    eff = perf.efficiencies(gpu, None)
    return llm_step.card_terms(
        gpu,
        weights=precision,
        decode=TABLE.profile(gpu, "cuda", runtime, precision, "decode"),
        prefill=TABLE.profile(gpu, "cuda", runtime, precision, "prefill"),
        memory_efficiency=eff.memory,
        compute_efficiency=perf.llm_efficiency(eff),
    )


def _uncapped(gpu: GpuSpec) -> GpuSpec:
    return dataclasses.replace(gpu, tdp_w=10_000.0)


@pytest.mark.parametrize(
    ("slug", "share"),
    [("rtx-6000-ada", 300 * 0.74 / 364.0), ("l4", 72 * 0.74 / 121.0), ("rtx-a6000", None)],
)
def test_a_w4a16_prompt_holds_the_bf16_clock_share(slug: str, share: float | None) -> None:
    # RTX 6000 Ada: an AWQ prompt had run at the full boost clock (TTFT 141 ms against bf16's
    # 234 at 1500 tokens), though Marlin's GEMMs are fp16 tensor math at the same 300 W
    gpu = GPUS[slug]
    bf16, awq = _card(gpu, "bf16"), _card(gpu, "int4")
    assert awq.mode in ("fp16", "bf16")
    prof = TABLE.profile(gpu, "cuda", "vllm", "int4", "prefill")
    assert (
        prof.tensor_tflops_per_watt
        == TABLE.profile(gpu, "cuda", "vllm", "bf16", "prefill").tensor_tflops_per_watt
    )
    held = llm_step.sustained_clock(gpu, prof)
    assert held < 0.9
    if share is not None:
        assert held == pytest.approx(share)
    # the same 16-bit math at the same clock: no faster than bf16's GEMMs, and slower than
    # the same board at its boost clock
    assert awq.flops <= bf16.flops * 1.0001
    assert awq.flops < 0.9 * _card(_uncapped(gpu), "int4").flops
    assert awq.attn_flops <= bf16.attn_flops * 1.0001


@pytest.mark.parametrize("slug", ["rtx-a6000", "a10", "a100-pcie-40gb"])
def test_fp8_on_ampere_is_w8a16_and_holds_the_bf16_clock_share(slug: str) -> None:
    # no FP8 tensor cores: vLLM's FP8 Marlin dequantises to 16 bits (RTX A6000: fp8 TTFT had
    # been 326 ms against bf16's 424)
    gpu = GPUS[slug]
    bf16, fp8 = _card(gpu, "bf16"), _card(gpu, "fp8")
    assert fp8.mode == "bf16"
    assert fp8.flops == pytest.approx(bf16.flops)
    assert fp8.flops < 0.9 * _card(_uncapped(gpu), "fp8").flops


@pytest.mark.parametrize("slug", ["rtx-4090", "rtx-3090"])
def test_geforce_parts_stay_under_their_cap(slug: str) -> None:
    # half-rate FP32-accumulate tensor math: TDP x the per-watt figure exceeds the 16-bit peak
    gpu = GPUS[slug]
    for precision in ("int4", "fp4", "fp8"):
        assert _card(gpu, precision).flops == pytest.approx(_card(_uncapped(gpu), precision).flops)


def _ttft_ms(slug: str, **fields: str) -> float:
    # the repro's shape: Llama 3.1 8B, one 1500-token prompt (a 1-token answer: TTFT)
    body = {"preset": "llama-3.1-8b", "task": "inference", "batch_size": 1, "seq_len": 1500}
    work = resolve_workload(s.WorkloadIn.model_validate({**body, **fields}))[0]
    ttft = perf.estimate(GPUS[slug], work).ttft_ms
    assert ttft is not None
    return ttft


@pytest.mark.parametrize("slug", ["rtx-6000-ada", "rtx-a6000", "l4"])
def test_an_awq_prompt_is_no_faster_than_bf16s_on_a_capped_board(slug: str) -> None:
    # RTX 6000 Ada had been 1.7x faster under AWQ than bf16, RTX A6000 1.3x: both fp16 math
    assert _ttft_ms(slug, quantization="awq") > 0.9 * _ttft_ms(slug, precision="bf16")


def test_a_w8a16_prompt_is_no_faster_than_bf16s_on_an_rtx_a6000() -> None:
    assert _ttft_ms("rtx-a6000", precision="fp8") > 0.9 * _ttft_ms("rtx-a6000", precision="bf16")
