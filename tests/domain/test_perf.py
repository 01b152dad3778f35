"""Roofline time model, precision defaults, overheads, scaling and calibration."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import perf
from app.domain.calibration import Calibration, Efficiencies
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import (
    A100,
    BERT_LARGE,
    GTX1080TI,
    H100,
    LLAMA3_8B,
    NOFIG,
    RESNET50,
    RTX3090,
    RTX4090,
    T4,
    llm_inference,
)


def test_decode_is_bandwidth_bound_and_reads_weights_per_token() -> None:
    est = perf.estimate(H100, llm_inference(output_tokens=256))
    assert est.bottleneck == "memory bandwidth"
    weights = (8.03e9 - 128256 * 4096) * 2  # the untied input table: a lookup, by its rows
    kv_mid = 2 * 32 * 8 * 128 * (2048 + 128) * 2  # KV cache at the mean context
    floor_ms = (weights + kv_mid) / (3350e9 * perf.MEMORY_EFFICIENCY) * 1e3
    launch_ms = 32 * perf.KERNELS_PER_LAYER_DECODE * perf.LAUNCH_S * 1e3
    assert est.ms_per_token is not None and est.ttft_ms is not None
    assert est.ms_per_token == pytest.approx(floor_ms + launch_ms, rel=0.01)
    assert est.unit == "tokens/s"
    assert est.throughput == pytest.approx(256 / (est.latency_ms / 1e3))  # type: ignore[operator]


def test_a_stated_fp8_kv_cache_is_read_at_one_byte_per_value() -> None:
    # TensorRT-LLM's published static batches run an FP8 KV cache (--fp8_kv_cache,
    # kv_cache_quant_algo FP8): the decode step reads it at 1 byte per value, not the 16-bit
    # default's 2 (tests/data/trtllm_static.yaml); the weights' bytes are unchanged.
    base = llm_inference(output_tokens=256, batch_size=16)
    fp8 = dataclasses.replace(base, kv_cache_precision="fp8")
    assert base.kv_format == "bf16" and fp8.kv_format == "fp8"
    t16 = perf.estimate(H100, base).ms_per_token
    t8 = perf.estimate(H100, fp8).ms_per_token
    assert t16 is not None and t8 is not None
    weights = 8.03e9 * 2
    kv16 = 2 * 32 * 8 * 128 * (2048 + 128) * 2 * 16  # 16 sequences at the mean context
    bw = 3350e9 * perf.MEMORY_EFFICIENCY
    assert t16 - t8 == pytest.approx(kv16 / 2 / bw * 1e3, rel=0.02)
    assert t8 > weights / bw * 1e3


def test_prefill_is_compute_bound() -> None:
    work = llm_inference(seq_len=8000, output_tokens=1)
    est = perf.estimate(A100, work)
    # every weight but the input embedding (a lookup) and the LM head (the last token's row)
    table = 128256 * 4096
    pre_flops = 2 * (8.03e9 - 2 * table) * 8000 + 2 * table + 2 * 32 * 8000**2 * 4096
    t = pre_flops / (312e12 * 0.80 * perf.MODEL_UTILISATION)
    assert est.ttft_ms == pytest.approx(t * 1e3, rel=0.05)


def test_training_flops_are_6pd_plus_attention() -> None:
    work = WorkloadSpec(task="training", model=LLAMA3_8B, precision="bf16", seq_len=2048)
    fwd = perf.forward_flops_per_sample(work)
    assert fwd == pytest.approx((2 * 8.03e9 + 4 * 32 * 2048 * 4096) * 2048)
    # the operator step: GEMMs 3× their forward (dgrad + wgrad), causal flash attention
    # 1 + 2.5× its forward, nothing else with FLOPs worth counting
    ops = perf.step_ops(work, True, 2.0)
    assert ops is not None
    gemms = sum(o.count * o.flops for o in ops if o.kind == "gemm" and o.phase == "fwd")
    attn = sum(o.count * o.flops for o in ops if o.kind == "attention" and o.phase == "fwd")
    assert attn == pytest.approx(2 * 32 * 2048 * 2048 * 4096)  # half of 4·L·s²·h: causal
    assert sum(o.count * o.flops for o in ops) == pytest.approx(3 * gemms + 3.5 * attn, rel=1e-3)
    est = perf.estimate(H100, work)
    best = (3 * gemms + 3.5 * attn) / (989.4e12 * 0.80)  # every FLOP at the best-shape GEMM rate
    assert best < est.compute_s < 1.5 * best
    # at batch 1, AdamW's pass over 8B fp32 states (28 B per parameter) is a real share
    adam = 8.03e9 * 28 / (3350e9 * perf.MEMORY_EFFICIENCY)
    assert est.step_time_s > est.compute_s + adam


def test_a_triton_attention_kernel_slows_long_sequences_most() -> None:
    # MPT's attn_impl: triton (FlashAttention in Triton) against FlashAttention-2: only the
    # attention kernels slow down, so the share lost grows with the sequence
    def step(seq: int, kernel: str) -> float:
        work = WorkloadSpec(
            task="training", model=LLAMA3_8B, precision="bf16", seq_len=seq,
            attention_kernel=kernel,
        )  # fmt: skip
        return perf.estimate(A100, work).step_time_s

    short = step(1024, "triton") / step(1024, "")
    long = step(16384, "triton") / step(16384, "")
    assert 1.0 < short < long < 2.0


def test_checkpointing_adds_a_forward() -> None:
    base = WorkloadSpec(task="training", model=BERT_LARGE, precision="fp16", batch_size=32)
    ckpt = base.with_flags(gradient_checkpointing=True)
    ops_a, ops_b = perf.step_ops(base, True, 2.0), perf.step_ops(ckpt, True, 2.0)
    assert ops_a is not None and ops_b is not None
    fwd = sum(o.count * o.flops for o in ops_a if o.phase == "fwd")
    assert sum(o.count * o.flops for o in ops_b) == pytest.approx(
        sum(o.count * o.flops for o in ops_a) + fwd
    )
    a, b = perf.estimate(A100, base), perf.estimate(A100, ckpt)
    assert a.step_time_s < b.step_time_s < a.step_time_s * 1.5


def test_pytorch_fp32_convnets_use_tf32_but_matmuls_stay_fp32() -> None:
    cnn = WorkloadSpec(task="training", model=RESNET50, precision="fp32", batch_size=256)
    bert = WorkloadSpec(task="training", model=BERT_LARGE, precision="fp32", batch_size=32)
    assert perf.estimate(A100, cnn).compute_precision == "tf32"
    assert perf.estimate(A100, bert).compute_precision == "fp32"
    ngc = WorkloadSpec(
        task="training", model=BERT_LARGE, precision="fp32", batch_size=32, allow_tf32_matmul=True
    )
    assert perf.estimate(A100, ngc).compute_precision == "tf32"
    assert perf.estimate(A100, ngc).throughput > 3 * perf.estimate(A100, bert).throughput
    tf = perf.estimate(A100, bert, framework="tensorflow")
    assert tf.compute_precision == "tf32"


def test_pascal_fp16_runs_at_fp32_rate() -> None:
    work = WorkloadSpec(task="training", model=RESNET50, precision="fp16", batch_size=64)
    est = perf.estimate(GTX1080TI, work)
    assert est.compute_precision == "fp32"


def test_model_beats_bare_roofline_shape() -> None:
    """Element-wise traffic makes bandwidth matter: 4090 vs 3090 fp16 ResNet-50."""
    work = WorkloadSpec(task="training", model=RESNET50, precision="fp16", batch_size=256)
    r = perf.estimate(RTX4090, work).throughput / perf.estimate(RTX3090, work).throughput
    # Lambda measured 1301 / 905 = 1.44; compute alone would say 165 / 71 = 2.3
    assert 1.1 < r < 1.8


def test_fixed_overheads_are_counted() -> None:
    tiny = WorkloadSpec(task="training", model=BERT_LARGE, precision="bf16", batch_size=1)
    est = perf.estimate(H100, tiny)
    ops = perf.step_ops(tiny, True, 2.0)
    assert ops is not None
    # one launch per operator run, at eager PyTorch's 4 µs
    assert est.overhead_s == pytest.approx(sum(o.count for o in ops) * perf.LAUNCH_S)
    assert est.step_time_s > est.compute_s + est.overhead_s * 0.99


def test_host_transfer_can_be_the_bottleneck() -> None:
    slow_link = GpuSpec(
        slug="x",
        name="X",
        vendor="nvidia",
        architecture="Hopper",
        segment="datacenter",
        memory_gb=80,
        memory_bandwidth_gbs=3350,
        fp32_tflops=67,
        bf16_tflops=989,
        fp16_tflops=989,
        pcie_gen=3,
        pcie_lanes=1,
        compute_capability="9.0",
    )
    tiny = WorkloadSpec(
        task="inference",
        model=RESNET50.__class__(family="cnn", params=1e6, gflops_per_sample=0.01),
        precision="fp16",
        batch_size=256,
    )
    assert perf.estimate(slow_link, tiny).bottleneck == "host transfer"


def test_missing_tensor_figure_is_derived_from_fp32() -> None:
    card = GpuSpec(
        slug="rtx-4080",
        name="RTX 4080",
        vendor="nvidia",
        architecture="Ada Lovelace",
        segment="consumer",
        memory_gb=16,
        memory_bandwidth_gbs=716.8,
        fp32_tflops=48.74,
        compute_capability="8.9",
    )
    peak, derived = perf.peak_tflops(card, "fp16")
    assert derived and peak == pytest.approx(2 * 48.74)
    assert perf.peak_tflops(A100, "fp16") == (312, False)
    assert perf.peak_tflops(NOFIG, "fp16") == (None, False)


def test_no_figures_gives_infinite_time() -> None:
    work = WorkloadSpec(task="training", model=RESNET50, precision="fp16", batch_size=8)
    assert perf.estimate(NOFIG, work).throughput == 0


def test_measured_efficiency_replaces_prior_family_gets_half() -> None:
    work = llm_inference()
    cal = Calibration.from_measurement(A100, Efficiencies(compute={"bf16": 0.9}, memory=0.5))
    own = perf.efficiencies(A100, cal)
    assert own.memory == 0.5 and own.source == "measured"
    other_ampere = dataclasses.replace(RTX3090)  # another object with the same figures
    fam = perf.efficiencies(other_ampere, cal)
    assert fam.memory == pytest.approx(0.5 * perf.MEMORY_EFFICIENCY + 0.5 * 0.5)
    assert fam.source == "family"
    assert perf.efficiencies(H100, cal).source == "prior"
    slow = perf.estimate(A100, work, calibration=cal)
    assert slow.throughput < perf.estimate(A100, work).throughput


def test_moe_decode_reads_active_experts_only_at_batch_1() -> None:
    moe = LLAMA3_8B.__class__(
        family="decoder",
        params=46.7e9,
        active_params=12.9e9,
        layers=32,
        hidden_size=4096,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=32000,
    )
    est = perf.estimate(H100, llm_inference(model=moe, precision="int4"))
    dense = perf.estimate(
        H100,
        llm_inference(
            model=moe.__class__(
                family="decoder",
                params=46.7e9,
                layers=32,
                hidden_size=4096,
                num_heads=32,
                num_kv_heads=8,
                vocab_size=32000,
            ),
            precision="int4",
        ),
    )
    assert est.throughput > 2 * dense.throughput


@pytest.mark.parametrize("gpu", [H100, A100, RTX4090, GTX1080TI], ids=lambda g: g.slug)
@pytest.mark.parametrize("batch", [1, 16])
def test_the_llm_throughput_bound_is_the_estimate_on_one_gpu_and_above_it_on_more(
    gpu: GpuSpec, batch: int
) -> None:
    work = llm_inference(batch_size=batch, output_tokens=256)
    one = perf.estimate(gpu, work, backend="cuda").throughput
    assert perf.llm_throughput_bound(gpu, work, backend="cuda") == pytest.approx(one, rel=1e-12)
    for n in (2, 4, 8, 16, 32):
        est = perf.estimate(gpu, work, num_gpus=n, backend="cuda").throughput
        bound = perf.llm_throughput_bound(gpu, work, num_gpus=n, backend="cuda")
        assert est <= bound * (1 + 1e-12), n
        assert bound <= n * one * (1 + 1e-12)  # no better than the work split N ways


def test_the_llm_throughput_bound_is_infinite_without_figures() -> None:
    # the estimate has no finite throughput there: a caller that sees inf evaluates it
    work = llm_inference()
    assert perf.estimate(NOFIG, work, backend="cuda").throughput == 0
    assert perf.llm_throughput_bound(NOFIG, work, backend="cuda") == float("inf")


def test_a_remembered_gpu_step_follows_the_gpu_and_the_calibration() -> None:
    """single_gpu remembers what it reads of a GPU with the runtime table: an edited GPU, or
    another calibration, is another answer, and each equals a step worked out afresh."""
    from app.domain.efficiency import parse_table

    table = parse_table({"rows": [{"runtime": "pytorch", "regime": "train", "traffic": 1.0}]})
    work = WorkloadSpec(task="training", model=RESNET50, batch_size=64, efficiency=table)
    plain = dataclasses.replace(work, efficiency=None)  # no table: nothing remembered

    def step(gpu: GpuSpec, cal: Calibration | None, w: WorkloadSpec = work) -> float:
        return perf.single_gpu(gpu, w, calibration=cal).step_s

    slow = Calibration.from_measurement(A100, Efficiencies(compute={"bf16": 0.3}, memory=0.3))
    fast = Calibration.from_measurement(A100, Efficiencies(compute={"bf16": 0.9}, memory=0.9))
    edited = dataclasses.replace(A100, bf16_tflops=(A100.bf16_tflops or 0) / 4)
    seen = {}
    for gpu, cal in [(A100, None), (A100, slow), (A100, fast), (edited, None), (A100, slow)]:
        got = step(gpu, cal)
        assert got == step(gpu, cal, plain)
        seen[(gpu.bf16_tflops, cal.by_slug[A100.slug].memory if cal else None)] = got
    assert len(set(seen.values())) == 4
    assert seen[(A100.bf16_tflops, 0.3)] > seen[(A100.bf16_tflops, 0.9)]
    assert seen[(edited.bf16_tflops, None)] > seen[(A100.bf16_tflops, None)]


# ---------------------------------------------------------------- how a replica spans GPUs

RTX3080 = dataclasses.replace(
    RTX3090, slug="rtx-3080-10gb", name="RTX 3080", memory_gb=10, memory_bandwidth_gbs=760.3,
    fp32_tflops=29.77, tf32_tflops=29.8, fp16_tflops=59.5, bf16_tflops=59.5,
)  # fmt: skip
LLAMA3_70B = dataclasses.replace(
    LLAMA3_8B, params=70.6e9, layers=80, hidden_size=8192, num_heads=64, num_kv_heads=8,
    intermediate_size=28672,
)  # fmt: skip


def _gguf_70b(runtime: str = "llama.cpp", **kw: object) -> WorkloadSpec:
    from app.shipped.rules import load_efficiency

    base: dict[str, object] = dict(
        model=LLAMA3_70B, precision="int4", weight_bits=4.84, seq_len=512, output_tokens=128,
        runtime=runtime, efficiency=load_efficiency(),
    )  # fmt: skip
    base.update(kw)
    return llm_inference(**base)


def test_a_layer_split_decodes_within_one_cards_bandwidth_bound() -> None:
    # llama.cpp --split-mode layer: a token passes the eight cards in turn, so a decode step is
    # the sum of each card's share of the weights — one card's bandwidth over all 42.7 GB
    work = _gguf_70b()
    eight = perf.estimate(RTX3080, work, num_gpus=8, backend="cuda")
    weights = 70.6e9 * 4.84 / 8
    bound = RTX3080.memory_bandwidth_gbs * 1e9 / weights  # tokens/s at 100 % of one card
    assert eight.ms_per_token is not None
    assert 1e3 / eight.ms_per_token <= bound
    assert 1e3 / eight.ms_per_token < 20  # not the 55 tok/s tensor parallelism would claim
    # more cards of the same split add memory, not speed
    four = perf.estimate(RTX3080, work, num_gpus=4, backend="cuda")
    assert four.ms_per_token == pytest.approx(eight.ms_per_token, rel=0.05)
    # the bound the ranking prunes with stays an upper bound
    ub = perf.llm_throughput_bound(RTX3080, work, num_gpus=8, backend="cuda")
    assert ub >= eight.throughput
    # a tensor-parallel runtime on the same cards does split the step
    vllm = perf.estimate(RTX3080, _gguf_70b("vllm", weight_bits=None), num_gpus=8, backend="cuda")
    assert vllm.ms_per_token is not None and vllm.ms_per_token < 0.5 * eight.ms_per_token


def test_transformers_device_map_runs_one_gpu_at_a_time() -> None:
    from app.shipped.rules import load_efficiency

    work = llm_inference(runtime="transformers", efficiency=load_efficiency(), output_tokens=64)
    one = perf.estimate(H100, work, num_gpus=1, backend="cuda")
    two = perf.estimate(H100, work, num_gpus=2, backend="cuda")
    assert two.ms_per_token == pytest.approx(one.ms_per_token, rel=0.05)
    assert two.ttft_ms == pytest.approx(one.ttft_ms, rel=0.05)


def test_a_fusing_runtime_prices_the_same_job_faster_through_its_operators() -> None:
    from app.domain.efficiency import parse_table

    table = parse_table(
        {
            "rows": [
                {"runtime": "pytorch", "kernel_us": 4.0},
                {"runtime": "torch-compile", "kernel_us": 2.0,
                 "fuse": ["act", "residual", "dropout", "copy", "cast"]},
            ]
        }
    )  # fmt: skip
    base = WorkloadSpec(
        task="training", model=BERT_LARGE, precision="bf16", batch_size=16, efficiency=table
    )
    eager = perf.estimate(A100, base, flash_attention=False)
    fused = perf.estimate(A100, base.with_flags(runtime="torch-compile"), flash_attention=False)
    assert fused.throughput > eager.throughput * 1.05
    assert fused.compute_s == pytest.approx(eager.compute_s)  # the GEMMs are the same


def test_a_diffusion_table_runs_once_per_pass_plus_the_rest_of_the_presets_flops() -> None:
    from app.domain.operators import parse_table

    unet = parse_table(
        {
            "model": "toy-unet",
            "ops": [{"kind": "gemm", "name": "proj", "count": 2, "m": 4096, "n": 640, "k": 640}],
        }
    )
    per_pass = 2 * 2 * 4096 * 640 * 640
    model = dataclasses.replace(
        RESNET50, family="diffusion", operators=unet, passes_per_sample=40,
        gflops_per_sample=(40 * per_pass + 1e12) / 1e9,
    )  # fmt: skip
    work = WorkloadSpec(task="inference", model=model, precision="fp16", batch_size=2)
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    assert sum(o.count * o.flops for o in ops if o.name == "proj") == pytest.approx(
        2 * 40 * per_pass
    )
    assert sum(o.count * o.flops for o in ops) == pytest.approx(2 * (40 * per_pass + 1e12))


def test_a_power_capped_board_runs_its_gemms_at_tdp_times_its_sustained_tflops_per_watt() -> None:
    from app.domain.efficiency import parse_table

    table = parse_table({"rows": [{"architecture": "turing", "tensor_tflops_per_watt": 0.343}]})
    big = WorkloadSpec(task="inference", model=BERT_LARGE, precision="fp16", batch_size=64)
    # a runtime with its own fused attention (TensorRT's): under PyTorch's SDPA the T4 would run
    # the first-generation kernel (perf._flash1), slower in the free step only, which the
    # energy bound does not see
    big = big.with_flags(runtime="tensorrt")
    capped = perf.estimate(T4, big.with_flags(efficiency=table))
    free = perf.estimate(T4, big)
    # 70 W × 0.343 = 24 TFLOPS of the 65 × 0.80 = 52 the prior allows: the GEMMs take 52/24×
    assert capped.compute_s == pytest.approx(free.compute_s * 52 / 24, rel=0.05)
    assert capped.memory_s == pytest.approx(free.memory_s, rel=0.05)
    # an architecture without a sustained figure (Ampere here) is untouched
    assert perf.estimate(A100, big.with_flags(efficiency=table)).throughput == pytest.approx(
        perf.estimate(A100, big).throughput
    )


def test_flash_attention_2_on_hopper_trains_at_35_percent_of_the_16_bit_peak() -> None:
    from app.domain.kernels import CLASSES, FLASH_FWD_FACTOR
    from app.shipped.rules import load_efficiency

    table = load_efficiency()
    fwd = CLASSES.index("attn_flash")

    def rates(gpu: GpuSpec, precision: str = "bf16", task: str = "training") -> tuple[float, ...]:
        work = WorkloadSpec(
            task=task, model=LLAMA3_8B, precision=precision, batch_size=1, seq_len=4096,
            efficiency=table,
        )  # fmt: skip
        on = perf._on_gpu(gpu, work, "pytorch", None, "cuda")
        assert on.rates is not None
        return on.rates

    hopper = rates(H100)
    assert hopper[fwd] == pytest.approx(0.35 * 989.4e12)
    assert hopper[fwd] < 0.5 * hopper[0]  # well below its GEMMs
    # Ampere keeps FlashAttention-2's GEMM-relative rate (73 % of peak at best)
    ampere = rates(A100)
    assert ampere[fwd] / ampere[0] == pytest.approx(FLASH_FWD_FACTOR)
    # fp8 GEMMs, attention still in 16 bits: the same 16-bit flash rate, far below the fp8 GEMMs
    fp8 = rates(H100, "fp8")
    assert fp8[fwd] == pytest.approx(hopper[fwd])
    assert fp8[fwd] < 0.25 * fp8[0]


def test_checkpointing_recomputes_the_blocks_not_the_lm_head_or_the_loss() -> None:
    def step(ckpt: bool) -> list[str]:
        work = WorkloadSpec(
            task="training", model=LLAMA3_8B, precision="bf16", batch_size=1, seq_len=2048,
            gradient_checkpointing=ckpt,
        )  # fmt: skip
        ops = perf.step_ops(work, True, 2.0)
        assert ops is not None
        return [o.name for o in ops]

    plain, ckpt = step(False), step(True)
    for name in ("lm_head", "loss.log_softmax", "loss.cast", "embed", "rmsnorm.final"):
        assert ckpt.count(name) == plain.count(name) == 1
    for name in ("q_proj", "attention", "mlp.up", "swiglu", "rmsnorm.attn"):
        assert ckpt.count(name) == 2 * plain.count(name) == 2


def test_the_power_cap_bounds_a_steps_energy_not_its_small_kernels() -> None:
    # the cap limits the board's average power: a small batch, whose kernels leave SMs idle and
    # whose bytes and launches take much of the step, draws less and keeps its boost clock
    from app.domain.efficiency import parse_table

    table = parse_table({"rows": [{"architecture": "turing", "tensor_tflops_per_watt": 0.343}]})
    small = WorkloadSpec(
        task="inference", model=BERT_LARGE, precision="fp16", batch_size=1, seq_len=128
    )
    capped = perf.estimate(T4, small.with_flags(efficiency=table))
    free = perf.estimate(T4, small)
    assert capped.throughput == pytest.approx(free.throughput, rel=0.1)
    # and no step beats its FLOPs at the capped rate (70 W × 0.343 = 24 TFLOPS)
    for batch in (1, 8, 64):
        est = perf.estimate(T4, dataclasses.replace(small, batch_size=batch, efficiency=table))
        flops = 2 * 335e6 * 128 * batch  # ~2 × params per token; attention adds to it
        assert batch / est.throughput >= flops / 24e12 * 0.95


def test_a_llamacpp_build_on_the_cublas_prompt_path_prices_q4_prompts_as_fp16_gemms() -> None:
    """llama.cpp before PR #8075 (June 2024) multiplied a quantised model's prompt with FP16
    cuBLAS after dequantising the weights (WorkloadSpec.prompt_gemm "cublas"): the prompt runs
    on the 16-bit tensor peak (FP16-accumulate: twice the catalog figure on GeForce) plus a
    dequantise pass, not on today's MMQ; decode (MMVQ) is the same either way, and an F16
    model has nothing to dequantise."""
    work = _gguf_70b(seq_len=512)
    old = dataclasses.replace(work, prompt_gemm="cublas")
    mmq = perf.estimate(A100, work, backend="cuda")
    cublas = perf.estimate(A100, old, backend="cuda")
    assert cublas.ms_per_token == mmq.ms_per_token
    assert mmq.ttft_ms is not None and cublas.ttft_ms is not None
    eff = perf.efficiencies(A100, None)
    rep = perf.llm_replica(A100, old, 1, eff, "cuda")
    assert rep.compute_precision == "fp16"
    assert rep.dequant_s == pytest.approx(70.6e9 * (4.84 / 8 + 2.0) / rep.bw, rel=0.02)
    # on an A100 FP16 tensor cores outrun MMQ (SM-bound: 108 SMs x 1.41 GHz) by far more than
    # the dequantise pass costs
    assert cublas.ttft_ms < mmq.ttft_ms
    f16 = dataclasses.replace(old, precision="fp16", weight_bits=None)
    assert perf.llm_replica(A100, f16, 1, eff, "cuda").dequant_s == 0.0
    with pytest.raises(ValueError, match="prompt GEMM"):
        perf.estimate(A100, dataclasses.replace(work, prompt_gemm="mmq2"), backend="cuda")


def test_a_pre_mmq_default_build_runs_an_a100_pp512_on_its_fp16_tensor_cores() -> None:
    """An A100 SXM's dense FP16 tensor cores do 2048 FLOP per SM-clock (312 TFLOPS at 108 SMs ×
    1.41 GHz), MMQ the profile's 1.9 × 256 (the `sm` basis: a 128-lane SM's FP32 rate; the
    400 W board holds its clock under either): a build before PR #8075 runs the 70B pp512's
    GEMMs 2048 × the engine's 16-bit GEMM efficiency ÷ (1.9 × 256) times faster than today's
    MMQ, and its prompt takes that gain less the dequantise pass, at the cuBLAS path's
    whole-pass share of the 16-bit GEMM prior."""
    work = _gguf_70b(seq_len=512)
    old = dataclasses.replace(work, prompt_gemm="cublas")
    eff = perf.efficiencies(A100, None)
    mmq_rep = perf.llm_replica(A100, work, 1, eff, "cuda")
    fp16_rep = perf.llm_replica(A100, old, 1, eff, "cuda")
    assert work.efficiency is not None
    mmq_prof = work.efficiency.profile(A100, "cuda", "llama.cpp", "int4", "prefill")
    assert mmq_prof.compute_basis == "sm" and mmq_prof.compute is not None
    # the cuBLAS path's whole pass runs at its compute_scale of the GEMM prior (its F32<->FP16
    # conversions and unfused F32 ops: methodology 6.7l)
    share = perf.prefill_profile(A100, old, "cuda").compute_scale
    assert 0.0 < share < 1.0
    ratio = 2048 * perf.llm_efficiency(eff)["fp16"] * share / (mmq_prof.compute * 256)
    assert 1.5 < ratio < 3.0  # the A100s' 2.5-3x under-prediction on the May-2024 rows
    assert fp16_rep.flops / mmq_rep.flops == pytest.approx(ratio)
    # one prompt: the LM head on its last token
    t_mmq, t_fp16 = mmq_rep.linear(512.0, 1.0)[1], fp16_rep.linear(512.0, 1.0)[1]
    assert t_mmq / t_fp16 == pytest.approx(ratio)
    mmq = perf.estimate(A100, work, backend="cuda")
    cublas = perf.estimate(A100, old, backend="cuda")
    assert mmq.ttft_ms is not None and cublas.ttft_ms is not None
    # at 512 tokens both are compute-bound: the FP16 copy's read hides under the GEMMs
    assert fp16_rep.linear(512.0)[0] < t_fp16
    want = mmq.ttft_ms - (t_mmq - t_fp16 - fp16_rep.dequant_s) * 1e3
    # past the GEMMs, the path's attention also runs at its share: slower by 1/share - 1 of
    # a 512-token prompt's attention, a small positive remainder
    assert want < cublas.ttft_ms < want * 1.01


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_replicas_split_a_batch_in_whole_samples(batch: int) -> None:
    """Two replicas of an inference job share its batch sample by sample: one sample leaves
    the second GPU idle (no faster than one GPU: 2 × B100 used to 'win' a batch-1 Stable
    Diffusion question by 0.03 %), three run as two and one."""
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16", batch_size=batch)
    one = perf.estimate(A100, work)
    two = perf.estimate(A100, work, num_gpus=2)
    busiest = -(-batch // 2)  # ⌈batch / 2⌉ samples on one of the two
    assert perf.split_ways(batch, 2) == batch / busiest
    if batch == 1:
        assert two.throughput == pytest.approx(one.throughput, rel=1e-12)
        assert two.scaling_efficiency == pytest.approx(0.5)
    else:
        assert one.throughput < two.throughput <= one.throughput * batch / busiest * (1 + 1e-9)
    assert perf.split_ways(1, 8) == 1.0 and perf.split_ways(256, 8) == 8.0


def test_a_sharded_step_splits_inside_samples() -> None:
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16", batch_size=1)
    one = perf.single_gpu(A100, work)
    assert perf.split_step_s(one, 4, sharded=True, batch=1) < perf.split_step_s(
        one, 4, sharded=False, batch=1
    )
    assert perf.split_step_s(one, 4, sharded=False, batch=1) == pytest.approx(one.step_s)


def test_the_host_limits_a_step_only_where_it_outlasts_the_gpus_work():
    # TensorRT ResNet-50 int8 at batch 256 on an H100: 1.79 ms of math, 1.38 ms of bytes and a
    # 3.06 ms input copy that overlaps them. The copy had been named the limit (the largest
    # single part), and the row advised pinned DataLoaders for a step the GPU bounds.
    eff = perf.efficiencies(H100, None)
    one = perf.OneGpu(
        eff, "cuda", 0.0, 1.785e-3, "int8", 0.0, 1.382e-3, 0.112e-3, 3.058e-3, 3.279e-3
    )
    assert perf._bottleneck(one, 0.0) == "compute"
    slow_bus = dataclasses.replace(one, host=3.5e-3, step_s=3.5e-3)
    assert perf._bottleneck(slow_bus, 0.0) == "host transfer"
    eager = dataclasses.replace(one, dispatch=3.4e-3, step_s=3.4e-3)
    assert perf._bottleneck(eager, 0.0) == "host overhead"
    assert perf._bottleneck(dataclasses.replace(eager, dispatch=3.0e-3), 0.0) == "compute"
    assert perf._bottleneck(one, 2.0e-3) == "interconnect"
