"""One cost function for one operator kind (issue 21): the LLM step's prompt attention is the
operator path's fused attention forward (kernels.class_rates' flash forward × kernels
.shape_efficiency of the op operators.attention builds), not the GEMM rate; a runtime whose
attention is its batched GEMMs (llama.cpp without -fa) keeps the GEMM rate."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, operators, perf
from app.domain.efficiency import RuntimeProfile
from app.domain.gpu import GpuSpec
from app.domain.kernels import CLASS_INDEX, op_time
from app.domain.operators import ATTN_FLASH
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
PROMPT = 4096.0


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _job(runtime: str, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="inference",
        model=load_presets(DATA)["llama-3-8b"].model,
        runtime=runtime,
        precision="bf16",
        batch_size=1,
        seq_len=int(PROMPT),
        output_tokens=1,
        efficiency=load_efficiency(DATA),
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def _operator_path_seconds(gpu: GpuSpec, work: WorkloadSpec, tp: int = 1) -> float:
    """The operator path's time for the prompt's attention: its own op for one layer of one
    ``PROMPT``-long causal sequence over one GPU's heads, at the rate and shape efficiency its
    per-GPU terms give a fused forward (perf._on_gpu), once per layer."""
    on = perf._on_gpu(gpu, work, "pytorch", None, "cuda")
    assert on.rates is not None
    m = work.model
    heads = float(m.num_heads or 0) / tp
    (op,) = operators.attention(
        "attention", tokens_q=PROMPT, q_len=PROMPT, kv_len=PROMPT, heads=heads,
        head_dim=float(m.hidden_size or 0) / float(m.num_heads or 1), kv_heads=heads,
        count=1.0, act_b=2.0, causal=True, flash=True,
    )  # fmt: skip
    rate = on.rates[CLASS_INDEX[ATTN_FLASH]]
    return float(m.layers or 0) * op_time(op, {ATTN_FLASH: rate}, math.inf, 0.0, on.sms, on.balance)


@pytest.mark.parametrize("slug", ["a100-sxm4-80gb", "h100-sxm"])
@pytest.mark.parametrize("tp", [1, 2])
def test_the_llm_steps_prompt_attention_is_the_operator_paths(
    gpus: dict[str, GpuSpec], slug: str, tp: int
) -> None:
    """The same shape gives the same attention time on both paths, on Ampere and Hopper, on
    one GPU and split over two (each GPU runs half the heads)."""
    gpu, work = gpus[slug], _job("vllm")
    rep = perf.llm_replica(gpu, work, tp, perf.efficiencies(gpu, None), "cuda")
    assert rep.tp == tp and rep.fused is not None
    got = rep.prompt_attention_s(PROMPT, PROMPT)
    assert got == pytest.approx(_operator_path_seconds(gpu, work, tp), rel=1e-9)
    # not the GEMM rate it was priced at before: 4·L·h per (query, key) pair ÷ attn_flops
    gemm_rate = 4.0 * rep.layers * rep.attn_width * PROMPT * PROMPT / 2.0 / rep.attn_flops
    assert got != pytest.approx(gemm_rate, rel=0.02)


def test_a_long_prompts_attention_follows_the_shape_on_two_architectures() -> None:
    """The fused kernel's time per FLOP is the operator path's shape rule: a 64-wide head's
    softmax costs more beside its matmuls on a GPU whose tensor cores outrun its FP32 cores
    16× (A100) than 2× (RTX 4090); a short prompt of one sequence leaves most SMs idle."""
    rate = 200e12
    a100 = llm_step.FusedAttention(rate, 108, 16.0)
    rtx = llm_step.FusedAttention(rate, 128, 2.0)

    def per_flop(
        fused: llm_step.FusedAttention, width: float, heads: float, prompt: float
    ) -> float:
        s = llm_step.prompt_attention_seconds(1, width, 1.0, fused, heads, 1, prompt, prompt)
        return s / (4.0 * width * prompt * prompt / 2.0)

    # d = 64 against d = 128 at the same heads' work
    slow_a100 = per_flop(a100, 2048.0, 32.0, PROMPT) / per_flop(a100, 4096.0, 32.0, PROMPT)
    slow_rtx = per_flop(rtx, 2048.0, 32.0, PROMPT) / per_flop(rtx, 4096.0, 32.0, PROMPT)
    assert slow_a100 > slow_rtx > 1.0
    assert slow_a100 == pytest.approx((1 + 16 * 8 / 4 / 64) / (1 + 16 * 8 / 4 / 128), rel=0.02)
    # 8 heads of a 256-token prompt: 16 thread blocks on 108 SMs
    assert per_flop(a100, 1024.0, 8.0, 256.0) > 4.0 * per_flop(a100, 4096.0, 32.0, PROMPT)


def test_an_unfused_runtime_keeps_the_gemm_rate(gpus: dict[str, GpuSpec]) -> None:
    """llama.cpp without -fa runs K·Q and V·softmax as batched GEMMs (data/efficiency.yaml's
    llama.cpp row, attention: unfused): its prompt attention stays at the card's 16-bit rate."""
    gpu = gpus["a100-sxm4-80gb"]
    assert (
        llm_step.fused_attention(gpu, RuntimeProfile(attention="unfused"), 0.7, 312.0, "bf16")
        is None
    )
    work = _job("llama.cpp", precision="int4", weight_bits=4.84, seq_len=512)
    rep = perf.llm_replica(gpu, work, 1, perf.efficiencies(gpu, None), "cuda")
    assert rep.fused is None
    want = 4.0 * rep.layers * (rep.attn_width * 512.0 * 512.0 / 2.0) / rep.attn_flops
    assert rep.prompt_attention_s(512.0, 512.0) == want


def test_decode_attention_is_untouched_by_the_fused_kernel(gpus: dict[str, GpuSpec]) -> None:
    """A decode step's attention (KV reads, its own math rate) does not read the prompt kernel:
    the same step with and without it."""
    gpu = gpus["h100-sxm"]
    rep = perf.llm_replica(gpu, _job("vllm"), 1, perf.efficiencies(gpu, None), "cuda")
    plain = llm_step.Replica(**{f: getattr(rep, f) for f in rep.__dataclass_fields__})
    plain.fused = None
    assert rep.parts(64.0, 3000.0, 0.0, PROMPT) == plain.parts(64.0, 3000.0, 0.0, PROMPT)
    assert rep.parts(0.0, 0.0, PROMPT, PROMPT) != plain.parts(0.0, 0.0, PROMPT, PROMPT)
