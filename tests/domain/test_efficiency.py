"""Runtime efficiencies (data/efficiency.yaml): resolution, capacity in GiB, eager vs graphs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.domain import efficiency, perf
from app.domain.efficiency import EfficiencyTable, parse_table
from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, LLAMA3_8B, RESNET50, RTX4090, qlora_65b

HBM_H100 = dataclasses.replace(H100, memory_type="HBM3")
DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)

# A 1.7B decoder shaped like SmolLM2-1.7B (24 layers, hidden 2048).
SMOL = ModelSpec(
    family="decoder",
    params=1.71e9,
    layers=24,
    hidden_size=2048,
    num_heads=32,
    num_kv_heads=32,
    intermediate_size=8192,
    vocab_size=49152,
)


def _decode(runtime: str, batch: int = 1) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=SMOL,
        precision="bf16",
        batch_size=batch,
        seq_len=128,
        output_tokens=256,
        runtime=runtime,
        efficiency=TABLE,
    )


def test_most_specific_row_wins_per_field() -> None:
    table = parse_table(
        {
            "rows": [
                {"runtime": "x", "memory": 0.8, "kernel_us": 3.0},
                {"runtime": "x", "vendor": "nvidia", "memory_kind": "hbm", "memory": 0.5},
                {"runtime": "x", "vendor": "nvidia", "memory": 0.7},
            ]
        }
    )
    hbm = table.profile(HBM_H100, "cuda", "x", "bf16", "decode")
    gddr = table.profile(RTX4090, "cuda", "x", "bf16", "decode")
    assert (hbm.memory, hbm.kernel_us) == (0.5, 3.0)
    assert (gddr.memory, gddr.kernel_us) == (0.7, 3.0)
    other = table.profile(H100, "cuda", "y", "bf16", "decode")
    assert other == dataclasses.replace(efficiency.RuntimeProfile(), runtime="y", regime="decode")


def test_unknown_field_in_a_row_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown fields"):
        parse_table({"rows": [{"runtime": "x", "memroy": 0.5}]})


def test_every_shipped_row_cites_a_listed_source() -> None:
    from app.shipped import yamlio

    doc = yamlio.safe_load((DATA / "efficiency.yaml").read_text(encoding="utf-8"))
    for row in doc["rows"]:
        assert row.get("source") in doc["sources"], row
    for name, q in doc["quantization"].items():
        assert name == "none" or q["source"] in doc["sources"], name


def test_bits_per_weight_of_each_format() -> None:
    bits = TABLE.bits_per_weight
    assert bits["q4_0"] == 4.5 and bits["q8_0"] == 8.5
    assert 4.8 <= bits["q4_k_m"] <= 4.9
    assert 4.1 < bits["gptq"] < 4.3 and bits["awq"] == bits["gptq"]
    assert bits["nf4"] == pytest.approx(4.127)
    assert bits["mxfp4"] == 4.25 and bits["nvfp4"] == 4.5


def test_capacity_is_the_vendors_gib() -> None:
    # "80 GB" of HBM3 is 80 GiB = 85.9e9 bytes; vLLM keeps 10 % back
    assert efficiency.usable_gb(H100) == pytest.approx(85.9, abs=0.05)
    share = efficiency.device_share(TABLE, "vllm")  # gpu_memory_utilization
    assert efficiency.usable_gb(H100, share) == pytest.approx(0.9 * 85.9, abs=0.05)


def test_qlora_65b_fits_one_48gb_card_as_the_paper_ran_it() -> None:
    """Dettmers et al. (2023) fine-tuned LLaMA-65B with QLoRA "on a single 48GB GPU", and say
    why: "paged optimizers are critical to do 33B/65B QLoRA tuning on a single 24/48GB GPU"
    (their AdamW state lives in unified memory the driver evicts to the host). At the paper's
    own settings (artidoro/qlora scripts/finetune_guanaco_65b.sh: batch 4, 16 + 512 tokens,
    r 64 on every linear, NF4 with double quantisation, bf16, checkpointing, paged 32-bit
    AdamW) the job fits an L40S's CUDA total with the optimizer state paged out, and not a
    48 GB card with it resident."""
    work = qlora_65b(efficiency=TABLE)
    mem = memory_breakdown(work)
    # AdamW's m and v, fp32, for the ~0.8 B adapter parameters: the part paging evicts
    assert mem.optimizer == pytest.approx(0.7995e9 * 8 / 1e9, rel=0.01)
    l40s = dataclasses.replace(RTX4090, memory_gb=48, visible_memory_mib=45599)
    assert mem.total - mem.optimizer < efficiency.usable_gb(l40s)
    assert mem.total > efficiency.usable_gb(dataclasses.replace(RTX4090, memory_gb=48))


def test_eager_decode_is_host_bound_and_slower_than_a_graph_loop() -> None:
    """Measured on an H200: a bare eager loop is at least 2.5× slower than a CUDA graph (issue
    #11, a 1.7B decoder: 2.5–3.4×; issue #21, an 8B model: 13–20 ms per token against a ~4 ms
    roofline). Hugging Face generate() does more host work per layer still (published A100
    runs, tests/recommend/test_accuracy_eager.py)."""
    eager = perf.estimate(HBM_H100, _decode("pytorch"))
    hf = perf.estimate(HBM_H100, _decode("transformers"))
    graph = perf.estimate(HBM_H100, _decode("vllm"))
    assert eager.bottleneck == "host overhead" and hf.bottleneck == "host overhead"
    assert graph.bottleneck == "memory bandwidth"
    assert graph.throughput / eager.throughput >= 2.5
    assert hf.throughput < eager.throughput
    assert hf.runtime == "transformers" and hf.backend == "cuda"


def test_eager_decode_of_an_8b_model_on_an_a100_is_host_launch_bound_too() -> None:
    """The A100's 8B eager step is host-bound as the H100's is (14.4 ms of host dispatch
    against ~10 ms of GPU work a token): the row names the host, as its time does, not the
    bandwidth its GPU work waits on hidden under the host."""
    a100 = dataclasses.replace(A100, memory_type="HBM2e")
    work = dataclasses.replace(_decode("pytorch"), model=LLAMA3_8B, seq_len=512)
    eager = perf.estimate(a100, work)
    assert eager.ms_per_token is not None
    assert LLAMA3_8B.layers is not None
    host_ms = 45 * 10e-3 * LLAMA3_8B.layers  # the decode row: 45 ops a layer at 10 µs each
    assert eager.ms_per_token == pytest.approx(host_ms, rel=1e-6)  # the step is the host's
    assert eager.bottleneck == "host overhead"


def test_tensorrt_int8_beats_eager_16_bit_inference() -> None:
    base = WorkloadSpec(
        task="inference", model=RESNET50, precision="fp16", batch_size=256, efficiency=TABLE
    )
    eager = perf.estimate(A100, base)
    trt = perf.estimate(A100, dataclasses.replace(base, runtime="tensorrt", precision="int8"))
    assert trt.compute_precision == "int8"
    assert trt.throughput > 2.5 * eager.throughput


def test_no_table_means_eager_constants() -> None:
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16", batch_size=64)
    with_table = dataclasses.replace(work, efficiency=TABLE)
    a, b = perf.estimate(A100, work), perf.estimate(A100, with_table)
    assert a.throughput == pytest.approx(b.throughput, rel=1e-9)
    assert isinstance(TABLE, EfficiencyTable)


def test_eager_decode_of_an_8b_model_on_an_h200_is_host_launch_bound() -> None:
    """Measured on an H200 (issue #21): 13–20 ms per token for an 8B model in an eager loop,
    where the weights alone take ~4 ms; ~45 ops per layer at ~10 µs of Python, dispatcher and
    launch each (data/efficiency.yaml ``pytorch-dispatch-overhead``). A CUDA-graph runtime
    replays the step without the host and stays bandwidth-bound."""
    h200 = dataclasses.replace(
        HBM_H100, slug="h200-sxm", name="H200", memory_gb=141, memory_bandwidth_gbs=4800
    )
    work = dataclasses.replace(_decode("pytorch"), model=LLAMA3_8B, seq_len=512)
    eager = perf.estimate(h200, work)
    assert eager.bottleneck == "host overhead"
    assert eager.ms_per_token is not None and eager.ms_per_token >= 10.0
    for runtime in ("vllm", "tensorrt-llm"):
        graph = perf.estimate(h200, dataclasses.replace(work, runtime=runtime))
        assert graph.bottleneck == "memory bandwidth"
        assert graph.ms_per_token is not None and graph.ms_per_token < 0.5 * eager.ms_per_token


# ---------------------------------------------------------------- llama.cpp MMQ prompt basis


def test_sm_basis_counts_sms_times_clock_not_fp32_lanes() -> None:
    """MMQ is bound per SM-clock: an A100 (GA100, 64 FP32 lanes per SM) gets twice its FP32
    peak, a 4090 (AD102, 128 lanes) its FP32 peak; parts outside the lane table keep FP32."""
    prof = efficiency.RuntimeProfile()
    assert efficiency.basis_tflops(A100, "sm", prof) == pytest.approx(2 * 19.5)
    assert efficiency.basis_tflops(RTX4090, "sm", prof) == pytest.approx(82.6)
    assert efficiency.basis_tflops(A100, "fp32", prof) == pytest.approx(19.5)
    from tests.domain.fixtures import GTX1080TI

    assert efficiency.basis_tflops(GTX1080TI, "sm", prof) == pytest.approx(11.3)


def test_sm_basis_takes_the_power_capped_clock() -> None:
    """A board that cannot hold its boost clock under tensor load (TDP × sustained TFLOPS per
    watt below its 16-bit peak) runs its SMs at that share of the clock."""
    from tests.domain.fixtures import T4

    capped = efficiency.RuntimeProfile(tensor_tflops_per_watt=0.343)
    # the die's full 16-bit rate: 8.1 × 2 (SMs × clock × 256 FLOP) × 1024 ÷ 256 ≈ its 65
    share = 70 * 0.343 / (8.1 * 2 * 4)
    assert efficiency.basis_tflops(T4, "sm", capped) == pytest.approx(8.1 * 2 * share)


def test_the_sm_clock_share_reads_the_die_not_the_datasheets_accumulate_mode() -> None:
    """Two boards of one die at one TDP hold the same SM-clocks under MMQ, whatever their
    datasheets quote: the L40 lists its FP32-accumulate 181 TFLOPS (half rate), the RTX 6000
    Ada its full-rate 364, both 142 SMs × ~2.5 GHz × 1024 FLOP at 300 W. A GeForce 4090
    (450 W, 128 SMs) holds its clock."""
    ada = efficiency.RuntimeProfile(tensor_tflops_per_watt=0.74)
    rtx6000 = dataclasses.replace(
        RTX4090, segment="workstation", tdp_w=300, fp32_tflops=91.1, fp16_tflops=364.0
    )
    l40 = dataclasses.replace(
        RTX4090, segment="datacenter", tdp_w=300, fp32_tflops=90.5, fp16_tflops=181.05
    )
    assert efficiency.die_tensor16_tflops(rtx6000) == pytest.approx(364.4)
    assert efficiency.die_tensor16_tflops(l40) == pytest.approx(362.0)
    assert efficiency.sm_clock_share(l40, ada) == pytest.approx(300 * 0.74 / 362.0)
    assert efficiency.sm_clock_share(rtx6000, ada) == pytest.approx(300 * 0.74 / 364.4)
    capped_l40 = efficiency.basis_tflops(l40, "sm", ada)
    capped_6000 = efficiency.basis_tflops(rtx6000, "sm", ada)
    assert capped_l40 == pytest.approx(capped_6000) == pytest.approx(300 * 0.74 / 4)
    assert efficiency.sm_clock_share(RTX4090, ada) == 1.0
    # GA100: 2048 FLOP per SM-clock, 4 × the 64-lane SM's 2 × FP32 rate
    assert efficiency.die_tensor16_tflops(A100) == pytest.approx(19.5 * 2 * 8)
    # Hopper is outside the die table (its per-watt figure is wgmma's): no cap from it
    assert efficiency.die_tensor16_tflops(H100) is None


def test_llamacpp_prefill_on_cuda_uses_the_sm_basis() -> None:
    """The shipped llama.cpp CUDA prompt row prices MMQ per SM-clock, so an A100's prompt
    rate is not half a 3090's-per-SM as the FP32 peak would have it (issue 21)."""
    prof = TABLE.profile(A100, "cuda", "llama.cpp", "int4", "prefill")
    assert prof.compute_basis == "sm"
    from tests.domain.fixtures import RTX3090

    p3090 = TABLE.profile(RTX3090, "cuda", "llama.cpp", "int4", "prefill")
    a100 = efficiency.basis_tflops(A100, "sm", prof)
    r3090 = efficiency.basis_tflops(RTX3090, "sm", p3090)
    assert a100 is not None and r3090 is not None
    # SMs × boost clock: A100 108 × 1.41 GHz, 3090 82 × 1.695 GHz
    assert a100 / r3090 == pytest.approx((108 * 1.41) / (82 * 1.695), rel=0.02)


def test_llamacpp_f16_prompts_take_cublas_not_mmq() -> None:
    """F16 GGUF weights are not MMQ: the shipped row sends them to cuBLAS with FP16
    accumulation (no SM basis); quantised ones (int4, int8) keep the MMQ basis."""
    f16 = TABLE.profile(RTX4090, "cuda", "llama.cpp", "fp16", "prefill")
    assert f16.compute_basis is None and f16.fp16_accumulate
    q8 = TABLE.profile(RTX4090, "cuda", "llama.cpp", "int8", "prefill")
    assert q8.compute_basis == "sm" and not q8.fp16_accumulate


def test_llamacpp_cublas_prompts_on_ada_and_hopper_take_a_sustained_tflops_per_watt() -> None:
    """The shipped llama.cpp FP16 (cuBLAS) prompt rows carry Ada's, GA102's and Hopper's
    sustained 16-bit tensor TFLOPS per board watt (torch GEMM reports: L4, L40S; RTX A6000;
    H100 PCIe); MMQ's quantised rows carry Ada's and GA102's but not Hopper's (its figure is
    wgmma's); other runtimes none."""
    from tests.domain.fixtures import RTX3090

    ada = TABLE.profile(RTX4090, "cuda", "llama.cpp", "fp16", "prefill")
    hopper = TABLE.profile(HBM_H100, "cuda", "llama.cpp", "fp16", "prefill")
    assert ada.tensor_tflops_per_watt == pytest.approx(0.74)
    assert hopper.tensor_tflops_per_watt == pytest.approx(1.28)
    for precision in ("fp16", "int4", "int8"):
        ga102 = TABLE.profile(RTX3090, "cuda", "llama.cpp", precision, "prefill")
        assert ga102.tensor_tflops_per_watt == pytest.approx(0.40)
    for precision in ("int4", "int8"):
        mmq = TABLE.profile(RTX4090, "cuda", "llama.cpp", precision, "prefill")
        assert mmq.compute_basis == "sm"
        assert mmq.tensor_tflops_per_watt == pytest.approx(0.74)
        h = TABLE.profile(HBM_H100, "cuda", "llama.cpp", precision, "prefill")
        assert h.tensor_tflops_per_watt is None
    # every runtime's 16-bit tensor work takes the Ada / GA100 / GA10x figures since
    # 2026-12-05 (Hopper's stays llama.cpp's: a lower bound on the SXM parts)
    assert TABLE.profile(HBM_H100, "cuda", "vllm", "fp16", "prefill").tensor_tflops_per_watt is None
    vllm_ga102 = TABLE.profile(RTX3090, "cuda", "vllm", "fp16", "prefill")
    assert vllm_ga102.tensor_tflops_per_watt == pytest.approx(0.40)
    # the 8-bit datapath does not (its energy per op is about half)
    assert TABLE.profile(RTX3090, "cuda", "vllm", "int8", "prefill").tensor_tflops_per_watt is None
    # decode does not take it
    assert (
        TABLE.profile(RTX3090, "cuda", "llama.cpp", "int4", "decode").tensor_tflops_per_watt is None
    )


def test_llamacpp_mmq_prompts_on_300w_ga102_and_ad102_boards_hold_the_clock_their_tdp_feeds():
    """llama.cpp's MMQ prompt kernel keeps every SM busy, so a 300 W workstation or datacenter
    board of a GeForce die runs it at the clock its TDP holds (the shipped per-watt rows): an
    RTX A6000 and an A40 (GA102, 84 SMs) at the same rate as each other, below a 350 W RTX
    3090's per-SM-clock rate; a GeForce 4090 keeps its boost clock."""
    from tests.domain.fixtures import RTX3090

    a6000 = dataclasses.replace(
        RTX3090, slug="rtx-a6000", segment="workstation", tdp_w=300, fp32_tflops=38.7
    )
    a40 = dataclasses.replace(
        RTX3090, slug="a40", segment="datacenter", tdp_w=300, fp32_tflops=37.4
    )
    rates: dict[str, float] = {}
    for gpu in (a6000, a40, RTX3090, RTX4090):
        prof = TABLE.profile(gpu, "cuda", "llama.cpp", "int4", "prefill")
        rates[gpu.slug] = efficiency.basis_tflops(gpu, "sm", prof) or 0.0
    assert rates["rtx-a6000"] == pytest.approx(rates["a40"])
    assert rates["rtx-a6000"] == pytest.approx(300 * 0.40 / 4)
    assert rates["rtx-a6000"] / 38.7 < rates["rtx-3090"] / 35.6
    assert rates["rtx-4090"] == pytest.approx(82.6)


def test_llamacpp_cublas_prompts_on_ga100_take_its_sustained_tflops_per_watt() -> None:
    """The GA100 die (compute capability 8.0) carries its own sustained FP16 TFLOPS per board
    watt on llama.cpp's cuBLAS prompt path (torch GEMM report: the 250 W A100 PCIe 40GB), so a
    300 W A100 PCIe holds TDP × that ÷ 312 of its clock, the 400 W SXM part its full clock;
    the GA10x dies (8.6: RTX 3090, A40) are other silicon with their own figure."""
    from app.domain import llm_step
    from tests.domain.fixtures import RTX3090

    prof = TABLE.profile(A100, "cuda", "llama.cpp", "fp16", "prefill")
    per_watt = prof.tensor_tflops_per_watt
    assert per_watt is not None and per_watt > 0.0
    pcie = dataclasses.replace(A100, slug="a100-pcie-80gb", form_factor="PCIe", tdp_w=300)
    assert llm_step.sustained_clock(pcie, prof) == pytest.approx(300 * per_watt / 312)
    assert llm_step.sustained_clock(pcie, prof) < 1.0
    # 400 W × the figure is above the SXM part's 312 TFLOPS peak: no cap
    assert 400 * per_watt >= 312
    assert llm_step.sustained_clock(A100, prof) == 1.0
    # the GA10x dies (8.6) are other silicon: their own figure (RTX A6000), not GA100's
    ga102 = dataclasses.replace(RTX3090, segment="datacenter", tdp_w=300)
    ga102_prof = TABLE.profile(ga102, "cuda", "llama.cpp", "fp16", "prefill")
    assert ga102_prof.tensor_tflops_per_watt == pytest.approx(0.40)
    # MMQ (quantised weights on a current build) takes it too, against the die's 2048 FLOP
    # per SM-clock: the 165 W A30 (56 SMs × 1.44 GHz) holds 165 × 0.82 ÷ 165
    mmq = TABLE.profile(A100, "cuda", "llama.cpp", "int4", "prefill")
    assert mmq.tensor_tflops_per_watt == pytest.approx(per_watt)
    a30 = dataclasses.replace(A100, slug="a30", tdp_w=165, fp32_tflops=10.3)
    share = 165 * per_watt / (10.3 * 2 * 8)
    assert efficiency.basis_tflops(a30, "sm", mmq) == pytest.approx(10.3 * 2 * share)


def test_only_transformers_decode_regrows_its_kv_cache() -> None:
    """The transformers decode row prices the torch.cat cache (3 × its bytes per step); a
    server's preallocated or paged cache and a bare eager loop keep 1."""

    def kv(runtime: str, regime: str = "decode") -> float:
        return efficiency.resolve(TABLE, HBM_H100, "cuda", runtime, "fp16", regime).kv_traffic

    assert kv("transformers") == 3.0
    assert kv("vllm") == kv("pytorch") == kv("transformers", "infer") == 1.0
