"""Issue #21: the same job's memory from the inference path (workload.memory_breakdown,
evaluate.usable_gb) and from the serving path (serving.memory_plan) — one weight rule per
format, one reservation rule, one usable-memory function."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import efficiency, formats
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain.efficiency import EfficiencyTable
from app.domain.gpu import GpuSpec
from app.domain.workload import (
    INFERENCE_FRAGMENTATION,
    ModelSpec,
    WorkloadSpec,
    _inference_workspace,
    allocator_slack,
    memory_breakdown,
    on_backend,
)
from app.shipped.rules import load_efficiency
from app.vocab import QUANTIZATION_PRECISION
from tests.domain.fixtures import H100, LLAMA2_7B, M2, T4

TABLE = load_efficiency()
# What CUDA reports as total on each (data/gpus/nvidia-datacenter.yaml, visible_memory_mib):
# PyTorch's "total capacity" on a T4 (14.74 GiB), an L4 (22.03 GiB) and an H100 (79.11 GiB)
MIB = 2**20 / 1e9
T4_SEEN = dataclasses.replace(T4, visible_memory_mib=15094)
L4_SEEN = dataclasses.replace(
    T4, slug="l4", name="L4", architecture="Ada Lovelace", memory_gb=24,
    compute_capability="8.9", visible_memory_mib=22559,
)  # fmt: skip
H100_SEEN = dataclasses.replace(H100, visible_memory_mib=81009)
LLAMA70 = ModelSpec(
    family="decoder", params=70.6e9, layers=80, hidden_size=8192, num_heads=64, num_kv_heads=8,
    intermediate_size=28672, vocab_size=128256, max_context=131072,
)  # fmt: skip
VOCAB = 2 * 128256 * 8192  # input embedding + untied LM head
USERS, PROMPT, OUTPUT = 4, 1000, 300


def _job(precision: str, runtime: str = "vllm", quant: str = "none", **kw: object) -> WorkloadSpec:
    bits = TABLE.bits_per_weight.get(quant) if quant != "none" else None
    return WorkloadSpec(
        task="inference", model=LLAMA70, precision=precision, batch_size=USERS,
        seq_len=PROMPT, output_tokens=OUTPUT, runtime=runtime, quantization=quant,
        weight_bits=bits, efficiency=TABLE, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _rt(name: str) -> sv.RuntimeProfile:
    return sv.runtime_profile(TABLE, name, TABLE.profile(H100, "cuda", name, "bf16", "decode"))


def _serving(precision: str, runtime: str = "vllm", kv: str = "bf16", gpu=H100, rows=None):
    """Serving's per-GPU plan for one replica on one GPU, and its KV cache for the job's users;
    ``rows``: the --max-num-seqs the plan deploys (None: the runtime's default)."""
    rt = _rt(runtime)
    if rows is not None:
        rt = dataclasses.replace(rt, max_batch=rows, large_gpu=None)
    weights, act, fw, pool = sv.memory_plan(
        gpu, LLAMA70, sv.ServingConfig(1, 1, precision, kv, runtime), rt, efficiency.usable_gb(gpu)
    )
    kv_gb = USERS * sv.kv_values(LLAMA70, PROMPT + OUTPUT) * sv.KV_BYTES[kv] / 1e9
    return rt, weights, act, fw, pool, kv_gb


@pytest.mark.parametrize(
    ("precision", "quant"), [("bf16", "none"), ("fp8", "none"), ("int4", "awq"), ("fp4", "nvfp4")]
)
def test_the_same_job_has_the_same_weights_kv_and_usable_memory_in_both_paths(
    precision: str, quant: str
) -> None:
    inf = memory_breakdown(_job(precision, quant=quant))
    # both deploy --max-num-seqs = the users (inference: its batch; serving: a plan for them)
    rt, weights, _act, fw, pool, kv_gb = _serving(precision, rows=USERS)
    assert inf.weights == pytest.approx(weights, rel=1e-9)
    assert inf.kv_cache == pytest.approx(kv_gb, rel=1e-9)
    assert inf.framework == pytest.approx(fw, rel=1e-9)
    # usable memory: vLLM's gpu_memory_utilization of the GiB less its profiling peak over the
    # sequences deployed, in both
    usable = ev.usable_gb(H100, _job(precision, quant=quant))
    peak = efficiency.profiling_peak_gb(38.9, USERS, LLAMA70.vocab_size)
    assert usable == pytest.approx(0.9 * 80 * 2**30 / 1e9 - peak)
    assert usable == pytest.approx(efficiency.usable_gb(H100, rt.memory_utilization) - _act)
    # serving's KV pool is that budget less what it places beside the cache
    assert pool == pytest.approx(efficiency.usable_gb(H100, 0.9) - weights - _act - fw)
    # so a cache fits one path exactly when it fits the other: inference's total less its KV
    # cache is serving's weights and context (the step's activations live inside the peak)
    assert inf.total - inf.kv_cache == pytest.approx(weights + fw)
    assert usable - (inf.total - inf.kv_cache) == pytest.approx(pool)


def test_the_profiling_peak_is_bytes_per_logit_times_default_rows_times_vocab() -> None:
    """vLLM's startup profiling pass: the sampler over max_num_seqs rows of logits, 38.9 B per
    logit (llm-d's H100 logs), max_num_seqs 1024 on a GPU of 70 GiB and more but the A100,
    256 elsewhere (vLLM get_batch_defaults); runtimes without such a pass reserve nothing."""
    from tests.domain.fixtures import A100, RTX4090

    assert TABLE.serving["vllm"].profile_bytes_per_logit == 38.9
    assert efficiency.profiling_peak_gb(38.9, 1024, 128256) == pytest.approx(
        38.9 * 1024 * 128256 / 1e9
    )
    assert efficiency.profiling_peak_gb(None, 1024, 128256) == 0.0
    assert efficiency.profiling_peak_gb(38.9, 1024, None) == 0.0
    spec = TABLE.serving["vllm"]
    assert efficiency.default_max_seqs(spec, H100) == 1024
    for gpu in (A100, RTX4090):
        assert efficiency.default_max_seqs(spec, gpu) == 256
    h100 = efficiency.runtime_profiling_peak_gb(TABLE, "vllm", H100, 128256)
    # the log's 4.84 GiB for Llama 3.3 70B (and 4.76 for Llama 3.1 8B, the same vocabulary)
    assert h100 * 1e9 / 2**30 == pytest.approx(4.84, rel=0.02)
    assert efficiency.runtime_profiling_peak_gb(TABLE, "vllm", A100, 128256) == pytest.approx(
        h100 / 4
    )
    for runtime in ("sglang", "tensorrt-llm", "llama.cpp", "transformers", "mlx"):
        assert efficiency.runtime_profiling_peak_gb(TABLE, runtime, H100, 128256) == 0.0


@pytest.mark.parametrize("gpu_name", ["H100", "A100"])
def test_both_paths_reserve_the_same_profiling_peak(gpu_name: str) -> None:
    from tests.domain import fixtures

    gpu = getattr(fixtures, gpu_name)
    # a batch past the default max_num_seqs reserves the default's peak, as serving's default
    work = dataclasses.replace(_job("fp8"), batch_size=4096)
    peak = efficiency.runtime_profiling_peak_gb(TABLE, "vllm", gpu, LLAMA70.vocab_size)
    assert peak > 0
    assert ev.usable_gb(gpu, work) == pytest.approx(efficiency.usable_gb(gpu, 0.9) - peak)
    _, _, act, _, _, _ = _serving("fp8", gpu=gpu)
    assert act == pytest.approx(peak)
    # a batch of 4 deploys --max-num-seqs 4: the peak over 4 rows, as a serving plan of 4
    four = efficiency.profiling_peak_gb(38.9, USERS, LLAMA70.vocab_size)
    assert ev.usable_gb(gpu, _job("fp8")) == pytest.approx(efficiency.usable_gb(gpu, 0.9) - four)
    _, _, act4, _, _, _ = _serving("fp8", gpu=gpu, rows=USERS)
    assert act4 == pytest.approx(four)
    # whole on every tensor-parallel GPU (4.84 GiB at TP 1 and TP 2 in the log)
    rt = _rt("vllm")
    cfg = sv.ServingConfig(2, 1, "fp8", "bf16", "vllm")
    _, act2, _, _ = sv.memory_plan(gpu, LLAMA70, cfg, rt, efficiency.usable_gb(gpu))
    assert act2 == pytest.approx(peak)


def test_llama_70b_fp8_on_one_h100_has_no_kv_cache_at_vllm_defaults_in_both_paths() -> None:
    """vLLM's own startup log (llm-d, H100, defaults): weights 67.72 GiB + peak activations
    4.84 + non-torch 0.14 exceed the 71.26 GiB it may claim ('No available memory for the
    cache blocks', KV -1.44 GiB). At the default max_num_seqs both paths refuse it; each
    deploys fewer sequences instead (inference its batch, serving the most its pool holds),
    which leaves a cache (tests/domain/test_seqs_plan.py)."""
    work = _job("fp8")
    inf = memory_breakdown(work)
    at_default = dataclasses.replace(work, batch_size=1024)
    assert inf.total > ev.usable_gb(H100, at_default)
    assert inf.total <= ev.usable_gb(H100, work)  # --max-num-seqs 4
    _, weights, act, fw, pool, kv_gb = _serving("fp8")
    assert pool < 0 < kv_gb
    # the log's terms, in GiB: weights 67.72, peak activations 4.84, non-torch 0.14
    gib = 1e9 / 2**30
    assert (weights * gib, act * gib) == pytest.approx((67.72, 4.84), rel=0.02)
    assert fw * gib < 0.55
    # the engine's shortfall against the log's (-1.44 GiB against 71.26 GiB of 79.18)
    assert pool * 1e9 / 2**30 == pytest.approx(-1.44, abs=1.0)
    # on two GPUs it fits, as in the log (32 GiB of KV cache per GPU)
    tp2 = sv.memory_plan(
        H100, LLAMA70, sv.ServingConfig(2, 1, "fp8", "bf16", "vllm"), _rt("vllm"),
        efficiency.usable_gb(H100),
    )  # fmt: skip
    assert tp2[3] * 1e9 / 2**30 == pytest.approx(32.0, rel=0.15)
    assert ev.min_gpus(work, H100, "cuda", True, 8)[0] == 1  # at --max-num-seqs 4


def test_a_smaller_model_still_fits_one_h100_at_vllm_defaults() -> None:
    llama8 = ModelSpec(
        family="decoder", params=8.03e9, layers=32, hidden_size=4096, num_heads=32,
        num_kv_heads=8, intermediate_size=14336, vocab_size=128256, max_context=131072,
    )  # fmt: skip
    work = dataclasses.replace(_job("bf16"), model=llama8)
    assert memory_breakdown(work).total <= ev.usable_gb(H100, work)
    rt = _rt("vllm")
    _, _, _, pool = sv.memory_plan(
        H100, llama8, sv.ServingConfig(1, 1, "bf16", "bf16", "vllm"), rt, efficiency.usable_gb(H100)
    )
    # the log: 51.38 GiB of KV cache for Llama 3.1 8B on one H100
    assert pool * 1e9 / 2**30 == pytest.approx(51.38, rel=0.05)


def test_quantised_formats_keep_embeddings_and_head_in_16_bit_in_both_paths() -> None:
    for precision, quant in (("fp8", "none"), ("int4", "awq"), ("int4", "gptq"), ("fp4", "nvfp4")):
        work = _job(precision, quant=quant)
        bits = work.format_bits if work.format_bits is not None else formats.bits(precision)
        expected = (LLAMA70.params - VOCAB) * bits / 8 + VOCAB * 2.0
        assert work.weight_bytes == pytest.approx(expected)
        assert sv.weight_bytes(LLAMA70, precision) == pytest.approx(expected, rel=1e-9)
    # 70.6e9 fp8 parameters are 72.7 GB stored, not 70.6 (the audit's two figures)
    assert _job("fp8").weight_bytes / 1e9 == pytest.approx(72.70, abs=0.01)
    # a GGUF file's bits are a mean over every tensor: no 16-bit vocabulary on top
    gguf = _job("int4", runtime="llama.cpp", quant="q4_k_m")
    assert gguf.own_bits == TABLE.bits_per_weight["q4_k_m"] and gguf.format_bits is None
    assert gguf.weight_bytes == pytest.approx(LLAMA70.params * gguf.own_bits / 8)
    # a tied model stores its one vocabulary matrix once; an encoder has no vocabulary head
    tied = dataclasses.replace(LLAMA70, tied_embeddings=True)
    assert formats.sixteen_bit_params(tied) == VOCAB / 2
    bert = ModelSpec(family="encoder", params=110e6, layers=12, hidden_size=768, vocab_size=30522)
    table = 30522 * 768
    assert formats.weight_bytes(bert, "int8") == pytest.approx((110e6 - table) * 1 + table * 2)


def test_nvfp4_is_fp4_at_4_5_bits_in_both_paths() -> None:
    assert QUANTIZATION_PRECISION["nvfp4"] == "fp4" == QUANTIZATION_PRECISION["mxfp4"]
    # NVFP4: E2M1 values plus one E4M3 scale per 16 = 4.5 bits; the format row and the table
    assert formats.bits("fp4") == 4.5 == TABLE.bits_per_weight["nvfp4"]
    assert sv.WEIGHT_BITS["fp4"] == formats.bits("fp4")
    # AWQ/GPTQ g128: 4 + 16/128 + 4/128, the same figure in the table and the format row
    assert TABLE.bits_per_weight["awq"] == TABLE.bits_per_weight["gptq"] == formats.bits("int4")


def test_one_reservation_rule() -> None:
    # a runtime that claims memory up front (vLLM, SGLang, TensorRT-LLM) gets no allocator
    # slack on top in either path; one that allocates as it goes gets the same slack in both
    for runtime in ("vllm", "sglang", "tensorrt-llm"):
        share, of_free = efficiency.runtime_share(TABLE, runtime)
        assert share < 1.0
        assert allocator_slack(1e9, share, of_free) == 0.0
    for runtime in ("transformers", "llama.cpp", "mlx"):
        assert efficiency.runtime_share(TABLE, runtime) == (1.0, False)
    assert allocator_slack(1e9, 1.0, False) == pytest.approx(INFERENCE_FRAGMENTATION * 1e9)
    eager = memory_breakdown(_job("bf16", runtime="transformers"))
    sglang = memory_breakdown(_job("bf16", runtime="sglang"))
    slack = INFERENCE_FRAGMENTATION * eager.weights
    # SGLang's step activations live outside its claim (startup_activations_gb), eager's in
    # the breakdown: the two differ by the slack and those activations
    step = _inference_workspace(_job("bf16", runtime="transformers"), 2.0) / 1e9
    assert eager.workspace - sglang.workspace == pytest.approx(slack + step)
    rt, w, act, _, _, _ = _serving("bf16", runtime="transformers")
    claimed = dataclasses.replace(rt, memory_utilization=0.9)  # the same runtime, claiming
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", "transformers")
    _, act2, _, _ = sv.memory_plan(H100, LLAMA70, cfg, claimed, efficiency.usable_gb(H100))
    assert act - act2 == pytest.approx(INFERENCE_FRAGMENTATION * w)
    # inference and serving read the same share for the same runtime (vLLM less its
    # profiling peak, test_both_paths_reserve_the_same_profiling_peak)
    for runtime in ("vllm", "sglang"):
        job = _job("bf16", runtime=runtime)
        # the batch's --max-num-seqs (USERS rows) where the runtime profiles its sampler
        peak = efficiency.runtime_profiling_peak_gb(TABLE, runtime, H100, LLAMA70.vocab_size)
        peak *= min(1.0, USERS / 1024)
        if runtime == "sglang":
            assert peak == 0.0
        rt = _rt(runtime)
        share = efficiency.claimed_share(rt.memory_utilization, rt.reserve_rule, 1, H100)
        assert ev.usable_gb(H100, job) == pytest.approx(efficiency.usable_gb(H100, share) - peak)


def test_a_share_of_free_memory_fits_the_same_cache_in_both_paths() -> None:
    """TensorRT-LLM's KV pool is free_gpu_memory_fraction of what weights and activations leave:
    the inference breakdown counts the free memory that pool needs, so a cache fits it exactly
    when it fits serving's pool."""
    work = _job("fp8", runtime="tensorrt-llm")
    inf = memory_breakdown(work)
    usable = ev.usable_gb(H100, work)
    rt, weights, act, fw, pool, kv_gb = _serving("fp8", runtime="tensorrt-llm")
    # the warm-up forward's activations are kept out of usable memory in inference, out of
    # the pool's free memory in serving: the same figure
    assert usable == pytest.approx(efficiency.usable_gb(H100) - act)
    usable += act  # serving's pool reads usable memory at share 1 and places act beside it
    assert rt.of_free
    fixed_inf = inf.total - inf.kv_cache / rt.memory_utilization
    assert pool == pytest.approx(rt.memory_utilization * (usable - weights - act - fw))
    # the inference total is at most usable exactly when its cache fits a pool of its own fixed
    # memory: fixed + kv / share <= usable  <=>  kv <= share * (usable - fixed)
    assert inf.total == pytest.approx(fixed_inf + kv_gb / rt.memory_utilization)
    assert fixed_inf == pytest.approx(weights + fw)


def test_unified_memory_is_counted_once_by_serving() -> None:
    """macOS wires ~3/4 of unified memory for the GPU: usable_gb applies it; MLX's serving
    plan does not apply it again."""
    share, of_free = efficiency.runtime_share(TABLE, "mlx")
    assert (share, of_free) == (1.0, False)
    rt = sv.runtime_profile(TABLE, "mlx")
    weights, act, fw, pool = sv.memory_plan(
        M2, LLAMA70, sv.ServingConfig(1, 1, "int4", "bf16", "mlx"), rt, efficiency.usable_gb(M2)
    )
    assert pool == pytest.approx(efficiency.usable_gb(M2) - weights - act - fw)
    assert efficiency.usable_gb(M2) == pytest.approx(M2.memory_gb * 2**30 / 1e9 * 0.75)


def test_fp4_weights_run_weight_only_where_the_runtime_has_such_kernels() -> None:
    """vLLM runs NVFP4/MXFP4 checkpoints without FP4 tensor cores through its Marlin FP4
    kernels (compute capability 7.5+, 16-bit activations): serving's format check and the
    LLM step read the same rule; runtimes without such kernels need Blackwell."""
    from app.domain import llm_step
    from tests.domain.fixtures import A100, MI300X, T4

    vllm_min = efficiency.fp4_weight_only_min_cc(TABLE, "vllm")
    assert vllm_min == "7.5"
    assert efficiency.fp4_weight_only_min_cc(TABLE, "tensorrt-llm") is None
    for gpu in (H100, A100, T4):
        assert llm_step.fp4_weight_only(gpu, vllm_min)
        assert sv.supports_weights(gpu, "fp4", _rt("vllm")) is None
        assert sv.supports_weights(gpu, "fp4", _rt("tensorrt-llm")) is not None
    volta = dataclasses.replace(H100, compute_capability="7.0")
    blackwell = dataclasses.replace(H100, compute_capability="10.0")
    assert not llm_step.fp4_weight_only(volta, vllm_min)
    assert not llm_step.fp4_weight_only(blackwell, vllm_min)  # native FP4 there
    assert not llm_step.fp4_weight_only(MI300X, vllm_min)
    # weight-only: the GEMMs run at the 16-bit peak, not fp8's
    prof = TABLE.profile(H100, "cuda", "vllm", "fp4", "decode")
    assert llm_step.datapath(H100, "fp4", prof)[1] == "bf16"


def test_a_job_the_profiling_peak_keeps_off_one_gpu_names_the_max_num_seqs_that_fits() -> None:
    """The answer says what would fit: vLLM serve's --max-num-seqs, whose peak leaves room."""
    from app.domain.units import vram

    room = 2.0  # GB for the peak once weights, context and the cache are placed
    rows = efficiency.seqs_for_room(38.9, 128256, room)
    assert efficiency.profiling_peak_gb(38.9, rows, 128256) <= room
    assert efficiency.profiling_peak_gb(38.9, rows + 1, 128256) > room
    hint = efficiency.fewer_seqs_hint(38.9, 128256, 1024, room)
    assert f"--max-num-seqs {rows}" in hint
    assert f"{vram(efficiency.profiling_peak_gb(38.9, 1024, 128256)):.1f} GiB" in hint
    # none where even one row does not fit, or fewer than the job's own batch would
    assert efficiency.fewer_seqs_hint(38.9, 128256, 1024, 1e-6) == ""
    assert efficiency.fewer_seqs_hint(38.9, 128256, 1024, room, least=rows + 1) == ""
    # serving's refusal of Llama 3.3 70B fp8 on one H100 names it
    cfg = sv.ServingConfig(1, 1, "fp8", "bf16", "vllm")
    load = sv.ServingLoad(concurrent_requests=USERS, prompt_tokens=PROMPT, output_tokens=OUTPUT)
    why = sv.unfit(H100, LLAMA70, cfg, load, _rt("vllm"))
    assert why is not None and "--max-num-seqs" in why
    # and with the suggested rows the KV pool holds that request
    n = int(why.split("--max-num-seqs ")[1].split()[0])
    rt = dataclasses.replace(_rt("vllm"), max_batch=n, large_gpu=None)
    assert sv.unfit(H100, LLAMA70, cfg, load, rt) is None


# ---------------------------------------------------------------- SGLang and TensorRT-LLM at startup

LLAMA8 = ModelSpec(
    family="decoder", params=8.03e9, layers=32, hidden_size=4096, num_heads=32,
    num_kv_heads=8, intermediate_size=14336, vocab_size=128256, max_context=131072,
)  # fmt: skip
GIB = 2**30 / 1e9  # GB per GiB


def _sglang_05_share(mib: float, tp: int) -> float:
    """SGLang 0.5.5.post1's mem_fraction_static as server_args._handle_gpu_memory_settings
    writes it (no DP attention, no speculative decoding, text only), in MiB."""
    if mib < 20 * 1024:
        chunk, graph_bs = 2048, 8
    elif mib < 35 * 1024:
        chunk, graph_bs = 2048, 24 if tp < 4 else 80
    elif mib < 60 * 1024:
        chunk, graph_bs = 4096, 32 if tp < 4 else 160
    elif mib < 160 * 1024:
        chunk, graph_bs = 8192, 256 if tp < 4 else 512
    else:
        chunk, graph_bs = 16384, 512
    reserved = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2 + tp * 1 / 8 * 1024
    if mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((mib - reserved) / mib, 3)


def test_sglang_05_claims_a_share_computed_from_the_gpus_memory_and_tp() -> None:
    """SGLang 0.5.5.post1 computes mem_fraction_static from nvidia-smi's total and tp size
    (server_args._handle_gpu_memory_settings): 0.835 on an H100's 81,559 MiB at tp 1, not 0.4's
    0.88 on every GPU. Both paths read it on the GPU at hand; 0.88 only where none is known;
    the deploy command leaves the flag to SGLang."""
    from app.recommend import deploy

    seen = {
        "h100": (81559, {1: 0.835, 2: 0.834, 4: 0.824, 8: 0.818}),
        "h200": (143771, {1: 0.907, 8: 0.897}),
        "b200": (183359, {1: 0.857, 8: 0.852}),
        "l40s": (46068, {1: 0.851, 4: 0.837}),
        "l4": (23034, {1: 0.837, 4: 0.815}),
        "t4": (15360, {1: 0.757}),
    }
    for slug, (mib, want) in seen.items():
        gpu = dataclasses.replace(H100, slug=slug, name=slug, visible_memory_mib=mib)
        for tp, share in want.items():
            assert _sglang_05_share(mib, tp) == share
            assert efficiency.runtime_share(TABLE, "sglang", tp, gpu) == (share, False)
            job = _job("fp8", runtime="sglang")
            assert ev.usable_gb(gpu, job, tp) == pytest.approx(efficiency.usable_gb(gpu, share))
            cfg = sv.ServingConfig(tp, 1, "fp8", "bf16", "sglang")
            w, act, fw, pool = sv.memory_plan(
                gpu, LLAMA70, cfg, _rt("sglang"), efficiency.usable_gb(gpu)
            )
            assert pool == pytest.approx(efficiency.usable_gb(gpu, share) - w - act - fw)
    # without a GPU, SGLang's own fallback
    assert efficiency.runtime_share(TABLE, "sglang", 8) == (0.88, False)
    assert deploy.memory_fraction("sglang", 8) == 0.88
    for runtime in ("vllm", "tensorrt-llm"):
        assert efficiency.runtime_share(TABLE, runtime, 8, H100) == efficiency.runtime_share(
            TABLE, runtime
        )


def test_sglang_05_picks_its_chunked_prefill_size_by_the_gpus_memory() -> None:
    """chunked_prefill_size 2,048 below 35 GiB, 4,096 below 60, 8,192 below 160, 16,384 above
    (server_args._handle_gpu_memory_settings), the tokens of a step the serving model reads."""
    rt = _rt("sglang")
    spec = TABLE.serving["sglang"]
    for mib, chunk in ((15360, 2048), (23034, 2048), (46068, 4096), (81559, 8192),
                       (143771, 8192), (183359, 16384)):  # fmt: skip
        gpu = dataclasses.replace(H100, visible_memory_mib=mib)
        assert rt.on(gpu).chunk_tokens == chunk
        assert efficiency.default_max_tokens(spec, gpu) == chunk


def test_sglang_keeps_its_activations_outside_its_claim_in_both_paths() -> None:
    """SGLang's KV pool is mem_fraction_static x the free memory less the weights
    (model_runner.profile_max_num_token): chunked prefill, CUDA graphs and the sampler use the
    remainder, so neither path takes activations out of the pool (serving took one 8,192-token
    chunk's intermediates and 1,024 rows of fp32 logits, 1.26 GB for Llama 3.1 8B)."""
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", "sglang")
    _, act, _, _ = sv.memory_plan(H100, LLAMA8, cfg, _rt("sglang"), efficiency.usable_gb(H100))
    assert act == 0.0
    job = dataclasses.replace(_job("bf16", runtime="sglang"), model=LLAMA8)
    share = efficiency.runtime_share(TABLE, "sglang", 1, H100)[0]
    assert ev.usable_gb(H100, job) == pytest.approx(efficiency.usable_gb(H100, share))
    inf = memory_breakdown(job)
    assert inf.workspace == 0.0


def test_sglang_kv_pool_rule_reproduces_its_startup_logs() -> None:
    """The pool rule (profile_max_num_token, the same in 0.5.5.post1) on each 0.4.3 log's own
    figures and share (GiB, SGLang's 'GB'): mem_fraction_static x the memory free before the
    weights load, less the weights, is the K + V it allocates.
    Llama 3.1 8B, tp 1, 80 GB GPU (SGLang docs): 0.88 x 78.81 - 15.09 = 54.26 = 27.13 x 2,
    444,500 tokens of 128 KiB. QwQ-32B, tp 4, L4 (llms-in-clouds): 0.85 x 21.63 - 15.54 =
    2.84 = 1.42 x 2, 46,611 tokens of 64 KiB (64 layers, 8 KV heads / 4 GPUs, head 128)."""
    kv = efficiency.kv_pool_gb(78.81, 15.09, 0.88, False)
    assert kv == pytest.approx(27.13 * 2, abs=0.02)
    assert kv * 2**30 / (32 * 8 * 128 * 2 * 2) == pytest.approx(444_500, rel=1e-3)
    kv4 = efficiency.kv_pool_gb(21.63, 15.54, 0.85, False)
    assert kv4 == pytest.approx(1.42 * 2, abs=0.02)
    assert kv4 * 2**30 / (64 * 2 * 128 * 2 * 2) == pytest.approx(46_611, rel=5e-3)


def _sglang_04(share: float) -> tuple[EfficiencyTable, sv.RuntimeProfile]:
    """The table and serving profile with SGLang at a fixed share, as the 0.4 release that
    wrote the startup logs claimed (0.88 at tp 1, 0.85 at tp 4), the pool rule unchanged."""
    spec = dataclasses.replace(TABLE.serving["sglang"], memory_utilization=share, reserve_rule=None)
    table = dataclasses.replace(TABLE, serving={**TABLE.serving, "sglang": spec})
    return table, dataclasses.replace(_rt("sglang"), memory_utilization=share, reserve_rule=None)


def test_sglang_llama_8b_on_one_h100_holds_the_kv_tokens_its_log_reports() -> None:
    """SGLang's docs log Llama 3.1 8B at its defaults on an 80 GB GPU: max_total_num_tokens
    444,500. The engine's KV pool (80 GiB, not the 78.81 free at start; weights 16.06 GB against
    the log's 15.09 GiB; a 0.5 GiB context) holds within 2 % of it, in serving and inference,
    at the log's own share (0.4.3's 0.88; 0.5.5.post1 claims 0.836 there)."""
    table, rt = _sglang_04(0.88)
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", "sglang")
    _, _, _, pool = sv.memory_plan(H100, LLAMA8, cfg, rt, efficiency.usable_gb(H100))
    per_token = sv.kv_values(LLAMA8, 1) * sv.KV_BYTES["bf16"] / 1e9
    assert pool / per_token == pytest.approx(444_500, rel=0.02)
    job = dataclasses.replace(_job("bf16", runtime="sglang"), model=LLAMA8, efficiency=table)
    inf = memory_breakdown(job)
    assert ev.usable_gb(H100, job) - (inf.total - inf.kv_cache) == pytest.approx(pool)


def test_trtllm_reserves_one_warm_up_forward_of_max_num_tokens_in_both_paths() -> None:
    """TensorRT-LLM's PyTorch backend sizes its KV pool after dummy context requests of
    max_num_tokens (8,192) in all, one output token each (KvCacheCreator): the activations of
    one 8,192-token forward, not 2,048 rows of fp32 logits beside it (0.99 GB for Llama 3.3
    70B's vocabulary at TP 1, which serving used to add); and inference reserves the same
    figure, not the job's own batch's intermediates."""
    for tp in (1, 2, 4):
        want = efficiency.warmup_forward_gb(8192, 8192.0, 28672.0, tp)
        assert want == pytest.approx(8192 * (4 * 8192 + 2 * 28672 / tp) * 2 / 1e9)
        cfg = sv.ServingConfig(tp, 1, "fp8", "bf16", "tensorrt-llm")
        rt = _rt("tensorrt-llm")
        _, act, _, _ = sv.memory_plan(H100, LLAMA70, cfg, rt, efficiency.usable_gb(H100))
        assert act == pytest.approx(want)
        job = _job("fp8", runtime="tensorrt-llm")
        assert ev.usable_gb(H100, job, tp) == pytest.approx(efficiency.usable_gb(H100) - want)
        assert efficiency.runtime_startup_activations_gb(
            TABLE, "tensorrt-llm", H100, vocab=LLAMA70.vocab_size, hidden=8192.0,
            intermediate=28672.0, tp=tp,
        ) == pytest.approx(want)  # fmt: skip
    # the breakdown leaves the job's own step activations to that reserve
    assert memory_breakdown(_job("fp8", runtime="tensorrt-llm")).workspace == pytest.approx(
        memory_breakdown(_job("fp8", runtime="tensorrt-llm")).kv_cache * (1 / 0.9 - 1)
    )


@pytest.mark.parametrize("gpu", [H100, H100_SEEN, L4_SEEN], ids=["h100", "h100-seen", "l4-seen"])
@pytest.mark.parametrize("runtime", ["vllm", "sglang", "tensorrt-llm"])
@pytest.mark.parametrize("tp", [1, 2, 4])
def test_inference_and_serving_leave_the_same_room_for_the_cache(
    runtime: str, tp: int, gpu: GpuSpec
) -> None:
    """The same job sized by both paths: inference's usable memory at tp GPUs less its fixed
    per-GPU memory is serving's KV pool (a share of free memory: the pool it needs), so a cache
    fits one exactly when it fits the other, for every runtime that sizes its pool at startup,
    from the vendor's GiB or from the memory CUDA reports (visible_memory_mib) alike."""
    job = _job("fp8", runtime=runtime)
    inf = memory_breakdown(job, num_gpus=tp)
    usable = ev.usable_gb(gpu, job, tp)
    cfg = sv.ServingConfig(tp, 1, "fp8", "bf16", runtime)
    rt = _rt(runtime)
    if rt.profile_bytes_per_logit is not None:  # vLLM deploys --max-num-seqs = the batch
        rt = dataclasses.replace(rt, max_batch=USERS, large_gpu=None)
    w, _act, fw, pool = sv.memory_plan(gpu, LLAMA70, cfg, rt, efficiency.usable_gb(gpu))
    assert inf.weights == pytest.approx(w) and inf.framework == pytest.approx(fw)
    share, of_free = efficiency.runtime_share(TABLE, runtime, tp)
    cache_need = inf.kv_cache / share if of_free else inf.kv_cache
    room = usable - (inf.total - cache_need)
    assert (room * share if of_free else room) == pytest.approx(pool)


def test_usable_memory_starts_from_what_cuda_reports_where_the_catalog_has_it() -> None:
    """efficiency.usable_gb, the one usable-memory rule: the memory CUDA reports as total
    (visible_memory_mib) where known, else the vendor's GiB; the runtime's share applies to
    either (vLLM's gpu_memory_utilization is a share of CUDA's total)."""
    assert efficiency.usable_gb(T4) == pytest.approx(16 * 2**30 / 1e9)
    assert efficiency.usable_gb(T4_SEEN) == pytest.approx(15094 * MIB)
    assert efficiency.usable_gb(L4_SEEN, 0.9) == pytest.approx(0.9 * 22559 * MIB)
    assert efficiency.usable_gb(H100_SEEN) == pytest.approx(81009 * MIB)
    assert efficiency.usable_gb(H100_SEEN) < efficiency.usable_gb(H100)


def test_a_job_that_fits_a_t4_by_the_vendor_gib_but_not_by_what_cuda_reports_is_refused() -> None:
    """Llama 2 7B in fp16 under eager Transformers needs about 16.5 GB for 2 users: within a
    T4's 16 GiB (17.18 GB) but not within the 14.74 GiB CUDA reports (15.83 GB), so one T4
    no longer holds it."""
    job = WorkloadSpec(
        task="inference", model=LLAMA2_7B, precision="fp16", batch_size=2, seq_len=1000,
        output_tokens=200, runtime="transformers", efficiency=TABLE,
    )  # fmt: skip
    need = memory_breakdown(job).total
    assert efficiency.usable_gb(T4_SEEN) < need < efficiency.usable_gb(T4)
    assert ev.min_gpus(job, T4, "cuda", False, 1)[0] == 1
    assert ev.min_gpus(job, T4_SEEN, "cuda", False, 1)[0] is None
    assert ev.min_gpus(job, T4_SEEN, "cuda", False, 8)[0] == 2


QWQ32 = ModelSpec(
    family="decoder", params=32.76e9, layers=64, hidden_size=5120, num_heads=40, num_kv_heads=8,
    intermediate_size=27648, vocab_size=152064, max_context=131072,
)  # fmt: skip


def test_serving_kv_pool_on_an_l4_starts_from_what_cuda_reports() -> None:
    """SGLang on 4 x L4, QwQ-32B bf16 at its defaults (didier-durand/llms-in-clouds
    docs/sglang.md @ 3e1df42): K + V 2.84 GiB (3.05 GB). From the vendor's 24 GiB the engine's
    pool was 4.99 GB (+64 %); from the 22.03 GiB CUDA reports it is 3.19 GB (+5 %): the pool is
    smaller by SGLang's share of the difference, and inference leaves the same room (at the
    log's own share, 0.4.3's 0.85 at tp 4)."""
    table, rt = _sglang_04(0.85)
    cfg = sv.ServingConfig(4, 1, "bf16", "bf16", "sglang")
    l4 = dataclasses.replace(L4_SEEN, visible_memory_mib=None)
    *_, pool_gib = sv.memory_plan(l4, QWQ32, cfg, rt, efficiency.usable_gb(l4))
    *_, pool = sv.memory_plan(L4_SEEN, QWQ32, cfg, rt, efficiency.usable_gb(L4_SEEN))
    assert pool_gib - pool == pytest.approx(0.85 * (24 * 1024 - 22559) * MIB)
    log = 2.84 * 2**30 / 1e9
    assert pool == pytest.approx(log, rel=0.08)
    assert pool_gib > 1.5 * log
    job = dataclasses.replace(_job("bf16", runtime="sglang"), model=QWQ32, efficiency=table)
    inf = memory_breakdown(job, num_gpus=4)
    assert ev.usable_gb(L4_SEEN, job, 4) - (inf.total - inf.kv_cache) == pytest.approx(pool)


@pytest.mark.parametrize(
    ("precision", "runtime", "quant"),
    [("bf16", "pytorch", "none"), ("fp8", "vllm", "none"), ("int4", "llama.cpp", "q4_k_m")],
)
@pytest.mark.parametrize("num_gpus", [1, 2, 8])
def test_an_inference_jobs_memory_on_another_backend_differs_only_in_its_context(
    precision: str, runtime: str, quant: str, num_gpus: int
) -> None:
    """workload.on_backend (a request works an inference job's memory out once per count,
    then puts in each backend's context): every part, and the total to the last bit, as
    memory_breakdown gives them on that backend with either attention kernel."""
    job = _job(precision, runtime, quant)
    backends = ("cuda", "rocm", "mps", "xpu", "hpu")
    for made_on in backends:
        mem = memory_breakdown(job, num_gpus=num_gpus, backend=made_on)
        for backend in backends:
            for flash in (True, False):
                want = memory_breakdown(
                    job, num_gpus=num_gpus, backend=backend, flash_attention=flash
                )
                got = on_backend(mem, job, backend)
                assert got == want and got.total == want.total
                assert (got is mem) == (backend == made_on or want.framework == mem.framework)


def _inference(**kw: object) -> WorkloadSpec:
    base = dict(
        task="inference", model=LLAMA2_7B, precision="int4", batch_size=1, seq_len=512,
        output_tokens=128, efficiency=TABLE,
    )  # fmt: skip
    return WorkloadSpec(**{**base, **kw})  # type: ignore[arg-type]


def test_the_quantised_weights_note_says_what_the_bits_cover() -> None:
    # A GGUF type's bits are a whole-file mean (llama-quantize counts the embeddings and
    # output too), a named format's are per quantised weight with a 16-bit embedding and head:
    # the note said "embeddings, LM head ... kept in 16-bit" of a GGUF Q4_K_M file as well
    gguf = memory_breakdown(
        _inference(runtime="llama.cpp", quantization="q4_k_m", weight_bits=4.84)
    ).notes
    assert gguf == (
        "weights in GGUF Q4_K_M (4.84 bits per weight over the whole file, embeddings and "
        "output included); activations in 16-bit, KV cache in 16-bit",
    )
    named = memory_breakdown(
        _inference(runtime="llama.cpp", quantization="mxfp4", weight_bits=4.25)
    ).notes
    assert named[0].startswith("weights in MXFP4 (4.25 bits per quantised weight); embeddings")
    bare = memory_breakdown(_inference(precision="int8", kv_cache_precision="fp8")).notes
    assert bare == (
        "weights quantised to int8; embeddings, LM head and activations kept in 16-bit, "
        "KV cache in fp8",
    )


def test_a_release_and_a_format_a_runtime_reads_size_alike_in_both_paths() -> None:
    # gpt-oss-style: weights released in MXFP4 (4.25 bits per quantised weight). Serving at
    # fp4 sized them at NVFP4's 4.5 bits where inference, naming the format, took 4.25; and
    # llama.cpp, which reads MXFP4 through its Q4 types' integer-dot kernels, sized them at its
    # own GGUF Q4_K_M whole-file mean
    from app.domain import serving_step

    def served(job: WorkloadSpec, runtime: str) -> float:
        rt = serving_step.runtime_profile(job, H100, "cuda", runtime)
        cfg = sv.ServingConfig(1, 1, job.precision, "bf16", runtime)
        return sv.memory_plan(H100, LLAMA70, cfg, rt, efficiency.usable_gb(H100))[0]

    mxfp4 = memory_breakdown(_job("fp4", quant="mxfp4")).weights
    assert mxfp4 < memory_breakdown(_job("fp4", quant="nvfp4")).weights
    release = _job("fp4", released_format="mxfp4")
    assert served(release, "vllm") == pytest.approx(mxfp4, rel=1e-9)
    read = _job("int4", runtime="llama.cpp", quant="mxfp4")
    assert memory_breakdown(read).weights == pytest.approx(mxfp4, rel=1e-9)
    assert served(read, "llama.cpp") == pytest.approx(mxfp4, rel=1e-9)
    # what llama.cpp reads comes from its data row, and only for the weights the job runs
    assert TABLE.serving["llama.cpp"].int4_reads == ("mxfp4",)
    assert serving_step.reads(release, ("mxfp4",)) == "mxfp4"
    assert serving_step.reads(_job("bf16", released_format="mxfp4"), ("mxfp4",)) is None
    assert serving_step.reads(_job("fp4", quant="nvfp4"), ("mxfp4",)) is None
    assert serving_step.reads(release, ()) is None
