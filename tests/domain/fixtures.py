"""Hand-built GPUs and workloads: the domain tests never read the catalog."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.domain import cost, perf, rank
from app.domain.compat import FeatureRule, FrameworkRule, Rules
from app.domain.gpu import GpuSpec, Price
from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown

A100 = GpuSpec(
    slug="a100-sxm4-80gb",
    name="A100 SXM4 80GB",
    vendor="nvidia",
    architecture="Ampere",
    segment="datacenter",
    memory_gb=80,
    memory_bandwidth_gbs=2039,
    fp32_tflops=19.5,
    tf32_tflops=156,
    fp16_tflops=312,
    bf16_tflops=312,
    int8_tops=624,
    tdp_w=400,
    pcie_gen=4,
    pcie_lanes=16,
    interconnect="NVLink 3",
    form_factor="SXM4",
    compute_capability="8.0",
    backends=("cuda",),
    cloud_price=Price(usd=1.5, as_of="2025-01-01", provider="x"),
)
H100 = GpuSpec(
    slug="h100-sxm",
    name="H100 SXM",
    vendor="nvidia",
    architecture="Hopper",
    segment="datacenter",
    memory_gb=80,
    memory_bandwidth_gbs=3350,
    fp32_tflops=67,
    tf32_tflops=494.7,
    fp16_tflops=989.4,
    bf16_tflops=989.4,
    fp8_tflops=1978.9,
    tdp_w=700,
    pcie_gen=5,
    interconnect="NVLink 4",
    form_factor="SXM5",
    compute_capability="9.0",
    backends=("cuda",),
    cloud_price=Price(usd=3.0, as_of="2025-01-01", provider="x"),
)
# the H200 SXM: the H100's die with 141 GB at 4.8 TB/s (data/gpus, h200-sxm)
H200 = replace(H100, slug="h200-sxm", name="H200 SXM", memory_gb=141, memory_bandwidth_gbs=4800)
RTX4090 = GpuSpec(
    slug="rtx-4090",
    name="RTX 4090",
    vendor="nvidia",
    architecture="Ada Lovelace",
    segment="consumer",
    memory_gb=24,
    memory_bandwidth_gbs=1008,
    fp32_tflops=82.6,
    tf32_tflops=82.6,
    fp16_tflops=165.2,
    bf16_tflops=165.2,
    fp8_tflops=330.3,
    tdp_w=450,
    pcie_gen=4,
    pcie_lanes=16,
    form_factor="PCIe",
    compute_capability="8.9",
    backends=("cuda",),
    street_price=Price(usd=1800, as_of="2025-01-01"),
    cloud_price=Price(usd=0.5, as_of="2025-01-01", provider="x"),
)
RTX3090 = GpuSpec(
    slug="rtx-3090",
    name="RTX 3090",
    vendor="nvidia",
    architecture="Ampere",
    segment="consumer",
    memory_gb=24,
    memory_bandwidth_gbs=936,
    fp32_tflops=35.6,
    tf32_tflops=35.6,
    fp16_tflops=71,
    bf16_tflops=71,
    tdp_w=350,
    pcie_gen=4,
    compute_capability="8.6",
    backends=("cuda",),
    street_price=Price(usd=900, as_of="2025-01-01"),
)
T4 = GpuSpec(
    slug="t4",
    name="T4",
    vendor="nvidia",
    architecture="Turing",
    segment="datacenter",
    memory_gb=16,
    memory_bandwidth_gbs=300,
    fp32_tflops=8.1,
    fp16_tflops=65,
    tdp_w=70,
    pcie_gen=3,
    compute_capability="7.5",
    backends=("cuda",),
)
GTX1080TI = GpuSpec(
    slug="gtx-1080-ti",
    name="GTX 1080 Ti",
    vendor="nvidia",
    architecture="Pascal",
    segment="consumer",
    memory_gb=11,
    memory_bandwidth_gbs=484,
    fp32_tflops=11.3,
    fp16_tflops=0.18,
    tdp_w=250,
    compute_capability="6.1",
    backends=("cuda",),
)
MI300X = GpuSpec(
    slug="mi300x",
    name="MI300X",
    vendor="amd",
    architecture="CDNA 3",
    segment="datacenter",
    memory_gb=192,
    memory_bandwidth_gbs=5300,
    fp32_tflops=163.4,
    tf32_tflops=653.7,
    fp16_tflops=1307.4,
    bf16_tflops=1307.4,
    fp8_tflops=2614.9,
    tdp_w=750,
    interconnect="Infinity Fabric",
    form_factor="OAM",
    compute_capability="gfx942",
    backends=("rocm",),
)
M2 = GpuSpec(
    slug="apple-m2-max",
    name="Apple M2 Max",
    vendor="apple",
    architecture="M2",
    segment="soc",
    memory_gb=96,
    memory_bandwidth_gbs=400,
    fp32_tflops=13.6,
    tdp_w=90,
    backends=("mps",),
)
NOFIG = GpuSpec(
    slug="mystery",
    name="Mystery",
    vendor="intel",
    architecture="X",
    segment="consumer",
    memory_gb=16,
    memory_bandwidth_gbs=500,
    backends=("xpu",),
)

RULES = Rules(
    frameworks=(
        FrameworkRule("pytorch", "cuda", "nvidia", min_compute_capability="5.0"),
        FrameworkRule("pytorch", "rocm", "amd", gfx_targets=("gfx90a", "gfx942")),
        FrameworkRule("pytorch", "mps", "apple"),
        FrameworkRule("pytorch", "xpu", "intel"),
        FrameworkRule("tensorflow", "cuda", "nvidia", min_compute_capability="3.5"),
        FrameworkRule("tensorflow", "mps", "apple", status="experimental"),
        FrameworkRule("jax", "cuda", "nvidia", min_compute_capability="5.2"),
    ),
    features=(
        FeatureRule("tf32", "nvidia", min_compute_capability="8.0", backends=("cuda",)),
        FeatureRule("bf16", "nvidia", min_compute_capability="8.0", backends=("cuda",)),
        FeatureRule("bf16", "amd", gfx_targets=("gfx90a", "gfx942"), backends=("rocm",)),
        FeatureRule("fp8", "nvidia", min_compute_capability="8.9", backends=("cuda",)),
        FeatureRule("fp8", "amd", gfx_targets=("gfx942",), backends=("rocm",)),
        FeatureRule(
            "flash_attention_2", "nvidia", min_compute_capability="8.0", backends=("cuda",)
        ),
    ),
)

LLAMA3_8B = ModelSpec(
    family="decoder",
    params=8.03e9,
    layers=32,
    hidden_size=4096,
    num_heads=32,
    num_kv_heads=8,
    intermediate_size=14336,
    vocab_size=128256,
    max_context=8192,
)
# config.json of meta-llama/Llama-3.1-8B (torchtune's single-device recipes): Llama 3 8B's
# shape, its exact parameter count, no context limit stated
LLAMA31_8B = replace(LLAMA3_8B, params=8030261248, max_context=None)
# LLaMA-65B, as the QLoRA paper fine-tuned it (artidoro/qlora)
LLAMA_65B = ModelSpec(
    family="decoder",
    params=65.2e9,
    layers=80,
    hidden_size=8192,
    num_heads=64,
    intermediate_size=22016,
    vocab_size=32000,
)
LLAMA3_70B = ModelSpec(
    family="decoder",
    params=70.6e9,
    layers=80,
    hidden_size=8192,
    num_heads=64,
    num_kv_heads=8,
    intermediate_size=28672,
    vocab_size=128256,
    max_context=131072,
)
LLAMA2_7B = ModelSpec(
    family="decoder",
    params=6.74e9,
    layers=32,
    hidden_size=4096,
    num_heads=32,
    num_kv_heads=32,
    intermediate_size=11008,
    vocab_size=32000,
    max_context=4096,
)
BERT_LARGE = ModelSpec(
    family="encoder",
    params=340e6,
    layers=24,
    hidden_size=1024,
    num_heads=16,
    num_kv_heads=16,
    intermediate_size=4096,
    vocab_size=30522,
)
RESNET50 = ModelSpec(family="cnn", params=25.6e6, gflops_per_sample=8.2, input_size=224)
# DeepSeek-V3's config.json (R1 shares it): 61 layers, hidden 7168, 128 heads, q/kv latent
# ranks 1536 / 512, QK head 128 + 64 (rope), V 128, 256 routed experts (8 active), one shared
DEEPSEEK_V3 = replace(
    LLAMA3_8B, params=671e9, active_params=37e9, experts=256, active_experts=8, layers=61,
    hidden_size=7168, num_heads=128, num_kv_heads=1, intermediate_size=2048, vocab_size=129280,
    kv_elements_per_token=35136, attention="mla", shared_experts=1, q_lora_rank=1536,
    kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
)  # fmt: skip


def llm_inference(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="inference",
        model=LLAMA3_8B,
        precision="bf16",
        batch_size=1,
        seq_len=2048,
        output_tokens=256,
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def llama31_8b_finetune(**kw: object) -> WorkloadSpec:
    """torchtune's single-device Llama 3.1 8B fine-tune before any trainer-state option: the
    job the trainer-state tests vary one setting of at a time."""
    base = WorkloadSpec(
        task="fine-tuning",
        model=LLAMA31_8B,
        precision="bf16",
        batch_size=2,
        seq_len=2048,
        optimizer="adam8bit",
        gradient_checkpointing=True,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def qlora_65b(**kw: object) -> WorkloadSpec:
    """The QLoRA paper's 65B run at its own settings (artidoro/qlora
    scripts/finetune_guanaco_65b.sh: batch 4, 16 + 512 tokens, r 64, bf16, checkpointing)."""
    base = WorkloadSpec(
        task="fine-tuning",
        model=LLAMA_65B,
        precision="bf16",
        peft="qlora",
        batch_size=4,
        seq_len=16 + 512,
        gradient_checkpointing=True,
        lora_rank=64,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def candidate(gpu: GpuSpec, work: WorkloadSpec, n: int = 1) -> rank.Candidate:
    """A ranking candidate of ``work`` on ``n`` of ``gpu``: the engine's estimate and memory,
    costed over a 10-hour job (the rank tests' words read it)."""
    est = perf.estimate(gpu, work, num_gpus=n)
    return rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=n),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, n, est.throughput, 10.0),
    )


@functools.cache
def _shipped_presets() -> tuple[Any, Any]:
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    return load_presets(data), load_efficiency(data)


def preset_inference(preset: str, batch: int = 1, **kw: object) -> WorkloadSpec:
    """A shipped preset's inference job under eager PyTorch at its own precision, with the
    shipped efficiency table (its traced operator tables, its runtime rows)."""
    presets, eff = _shipped_presets()
    p = presets[preset]
    args: dict[str, object] = {
        "model": p.model,
        "task": "inference",
        "precision": p.defaults["precision"],
        "batch_size": batch,
        "runtime": "pytorch",
        "preset": preset,
        "efficiency": eff,
    }
    args.update(kw)
    return WorkloadSpec(**args)  # type: ignore[arg-type]
