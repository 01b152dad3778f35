"""Eager diffusion inference as operators: classifier-free guidance, NCHW convolutions with a
bias, fused attention at Stable Diffusion's head dims, and the VAE decode's own table."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import llm_step, perf
from app.domain.kernels import head_dim_fill, shape_efficiency
from app.domain.operators import attention, parse_table, table_ops
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import A100, RESNET50, RTX4090

CONV = {
    "kind": "conv", "name": "c", "count": 2, "c_in": 320, "c_out": 640, "h_in": 64, "w_in": 64,
    "h_out": 32, "w_out": 32, "r": 3, "s": 3, "stride": 2, "groups": 1,
}  # fmt: skip
UNET = parse_table(
    {
        "model": "toy-unet",
        "ops": [
            CONV,
            {"kind": "gemm", "name": "proj", "count": 1, "m": 4096, "n": 640, "k": 640},
            {"kind": "norm", "name": "gn", "count": 1, "elements_in": 1e6, "elements_out": 1e6},
        ],
    }
)


def test_head_dims_between_the_kernels_steps_pad_to_the_next_one() -> None:
    assert head_dim_fill(64) == head_dim_fill(128) == head_dim_fill(160) == 1.0
    assert head_dim_fill(40) == pytest.approx(40 / 64)
    assert head_dim_fill(80) == pytest.approx(80 / 96)

    def attn(d: int) -> float:
        (op,) = attention(
            "a", tokens_q=2 * 4096, q_len=4096, kv_len=4096, heads=8, head_dim=d,
            kv_heads=8, count=1, act_b=2.0, causal=False, flash=True,
        )  # fmt: skip
        return shape_efficiency(op, 108)

    # same grid of blocks and key loop: only the padded matmuls differ
    assert attn(40) == pytest.approx(attn(64) * 0.625)


def test_an_eager_convolution_with_a_bias_adds_a_bias_pass() -> None:
    plain = table_ops(UNET, 4)
    eager = table_ops(UNET, 4, conv_bias=True)
    (bias,) = [o for o in eager if o not in plain]
    assert bias.role == "bias" and bias.flops == 0
    out_b = 4 * 640 * 32 * 32 * 2.0
    assert bias.bytes == pytest.approx(2 * out_b)  # reads and writes the output once
    assert bias.count == 2  # once per conv run


def test_eager_diffusion_convolutions_pay_the_nchw_transforms() -> None:
    work = _diffusion()
    ops = perf.step_ops(work, True, 2.0)
    assert ops is not None
    (conv,) = [o for o in ops if o.kind == "conv"]
    (layout,) = [o for o in ops if o.role == "layout"]
    in_b, out_b = 2 * 3 * 320 * 64 * 64 * 2.0, conv.bytes_written
    # input, filter and output, each read and written once more, as often as the conv runs
    # (cuDNN converts the KCRS filter to KRSC on every call: operators.nchw_transposes)
    w_b = conv.n * conv.k * 2.0
    assert layout.bytes == pytest.approx(2 * (in_b + out_b + w_b))
    assert layout.count == conv.count
    # TensorRT prices the same table but picks its own layouts and fuses the bias: no
    # transforms, no bias passes
    trt = perf.step_ops(_diffusion(runtime="tensorrt"), True, 2.0)
    assert trt is not None and not [o for o in trt if o.role in ("layout", "bias")]


def _diffusion(decoder: bool = False, runtime: str = "pytorch") -> WorkloadSpec:
    per_pass = UNET.gflops * 1e9
    model = dataclasses.replace(
        RESNET50, family="diffusion", operators=UNET, passes_per_sample=50,
        gflops_per_sample=(50 * per_pass + 2e12) / 1e9,
        decoder_operators=UNET if decoder else None,
    )  # fmt: skip
    return WorkloadSpec(
        task="inference", model=model, precision="fp16", batch_size=3, runtime=runtime
    )


def test_guidance_runs_the_unet_once_per_step_on_twice_the_batch() -> None:
    ops = perf.forward_ops(_diffusion(), True, 2.0)
    assert ops is not None
    proj = [o for o in ops if o.name == "proj"]
    (p,) = proj
    assert p.m == 2 * 3 * 4096  # conditional + unconditional latents in one GEMM
    assert p.count == 25  # 50 passes = 25 steps × 2, one launch per step
    unet = [o for o in ops if o.name != "rest"]
    assert sum(o.count * o.flops for o in unet) == pytest.approx(3 * 50 * UNET.gflops * 1e9)


def test_the_vae_decode_is_priced_from_its_table_with_the_rest_of_the_flops() -> None:
    work = _diffusion(decoder=True)
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    assert not any(o.name == "rest" for o in ops)
    assert sum(o.count * o.flops for o in ops) == pytest.approx(3 * (50 * UNET.gflops * 1e9 + 2e12))
    # the decoder's eager convolutions carry their bias and layout passes too
    assert sum(o.role == "bias" for o in ops) == 2
    steps = perf.step_ops(work, True, 2.0)
    assert steps is not None and sum(o.role == "layout" for o in steps) == 2
    # and a decode of memory-bound passes takes longer than one cubic GEMM of its FLOPs
    from tests.domain.fixtures import A100

    with_table = perf.estimate(A100, work).step_time_s
    without = perf.estimate(A100, _diffusion()).step_time_s
    assert with_table > without


def test_a_group_norm_reads_its_input_twice_a_layer_norm_once() -> None:
    table = parse_table(
        {
            "model": "toy",
            "ops": [
                {"kind": "norm", "name": "gn", "count": 1, "elements_in": 100,
                 "elements_out": 100, "groups": 32},
                {"kind": "norm", "name": "ln", "count": 1, "elements_in": 100,
                 "elements_out": 100},
            ],
        }
    )  # fmt: skip
    gn, ln = table_ops(table, 2)
    assert gn.bytes_read == pytest.approx(2 * ln.bytes_read)
    assert gn.bytes_written == ln.bytes_written
    assert gn.role == "norm"  # not foldable like an inference batch norm
    assert ln.role == "bn"


def test_an_eager_host_dispatches_the_tables_aten_calls_per_network_call() -> None:
    unet = dataclasses.replace(UNET, aten_calls=1000)
    vae = dataclasses.replace(UNET, aten_calls=100)
    work = _diffusion(decoder=True)
    model = dataclasses.replace(work.model, operators=unet, decoder_operators=vae)
    work = dataclasses.replace(work, model=model)
    # 25 UNet calls (50 passes under guidance) and one decode of the batch, whatever the batch
    assert perf.table_host_calls(work) == pytest.approx(25 * 1000 + 100)
    assert perf.table_host_calls(dataclasses.replace(work, batch_size=9)) == pytest.approx(25_100)
    # a denoising-step workload (no decode in its FLOPs) makes the UNet's calls only
    step = dataclasses.replace(
        model, passes_per_sample=2, gflops_per_sample=2 * UNET.gflops, decoder_operators=vae
    )
    assert perf.table_host_calls(dataclasses.replace(work, model=step)) == 1000
    # a table without the count: None (the kernels stand in)
    assert perf.table_host_calls(_diffusion()) is None


def test_the_shipped_unet_tables_count_their_host_calls() -> None:
    from pathlib import Path

    from app.recommend.presets import load_presets

    presets = load_presets(Path(__file__).resolve().parents[2] / "data")
    for key in ("stable-diffusion-1.5", "sdxl"):
        m = presets[key].model
        assert m.operators is not None and m.decoder_operators is not None
        kernels = sum(float(o.get("count") or 1) for o in m.operators.ops)
        # views and reshapes outnumber the kernels in diffusers' blocks
        assert (m.operators.aten_calls or 0) > 1.5 * kernels


def test_eager_diffusion_is_host_bound_at_batch_one_on_a_fast_gpu_and_gpu_bound_when_large() -> (
    None
):
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    sd = load_presets(data)["stable-diffusion-1.5"].model
    work = WorkloadSpec(task="inference", model=sd, precision="fp16", batch_size=1,
                        runtime="pytorch", efficiency=load_efficiency(data))  # fmt: skip
    assert perf.phase_regime(work) == "infer-diffusion"
    a100, h100 = gpus["a100-sxm4-40gb"], gpus["h100-sxm"]
    prof = perf.profile_for(a100, work, "cuda", "infer-diffusion")
    assert prof.host_us_per_op > 0
    one = perf.single_gpu(a100, work)
    calls = perf.table_host_calls(work)
    assert calls is not None
    us = prof.host_us_per_op * 1e-6
    dec_calls = perf.decode_host_calls(work)
    assert sd.decoder_operators is not None and sd.decoder_operators.aten_calls
    assert dec_calls == sd.decoder_operators.aten_calls > 0
    # batch 1: the host's calls set the denoising loop, the same on a faster GPU; the VAE
    # decode after it is bound by its GPU time (few calls, 512² convolutions), which a faster
    # GPU shortens
    loop_host = (calls - dec_calls) * us
    assert one.decode_s > dec_calls * us
    assert one.step_s == pytest.approx(loop_host + one.decode_s)
    fast = perf.single_gpu(h100, work)
    assert fast.step_s == pytest.approx(loop_host + fast.decode_s)
    assert fast.decode_s < one.decode_s and fast.step_s < one.step_s
    # a large batch: the GPU's work, and the faster GPU wins
    big = dataclasses.replace(work, batch_size=32)
    assert perf.single_gpu(a100, big).step_s > perf.single_gpu(a100, big).host
    assert perf.single_gpu(h100, big).step_s < perf.single_gpu(a100, big).step_s


def _attention_unet() -> WorkloadSpec:
    table = parse_table(
        {
            "model": "toy-attention-unet",
            "ops": [
                CONV,
                {"kind": "attention", "name": "attn1", "count": 1, "q_len": 4096,
                 "kv_len": 4096, "heads": 8, "head_dim": 40},
            ],
        }
    )  # fmt: skip
    model = dataclasses.replace(
        RESNET50, family="diffusion", operators=table, passes_per_sample=2,
        gflops_per_sample=2 * table.gflops,
    )  # fmt: skip
    return WorkloadSpec(task="inference", model=model, precision="fp16", batch_size=16)


def test_sdpa_below_sm80_and_a_pre_flash_attention_2_stack_run_the_first_generation_kernel() -> (
    None
):
    from tests.domain.fixtures import A100, T4

    work = _attention_unet()
    # today's PyTorch runs FlashAttention-2 from sm80, the memory-efficient kernel below it
    assert perf._attention_kernel(A100, work, "cuda") == ""
    assert perf._attention_kernel(T4, work, "cuda") == "flash1"
    # a PyTorch <= 2.1 / xformers <= 0.0.20 stack runs the first generation everywhere
    old = dataclasses.replace(work, attention_kernel="flash1")
    assert perf._attention_kernel(A100, old, "cuda") == "flash1"
    # a runtime with its own fused kernels (TensorRT) is not PyTorch's choice
    assert perf._attention_kernel(T4, dataclasses.replace(work, runtime="tensorrt"), "cuda") == ""
    # the step is slower by the attention's share only
    new_s, old_s = perf.single_gpu(A100, work).step_s, perf.single_gpu(A100, old).step_s
    assert 1.0 < old_s / new_s < 1.0 / 0.548


def test_eager_diffusion_attention_on_hopper_runs_at_flash_attention_2s_hopper_share() -> None:
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.domain.kernels import CLASSES
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    h100 = next(g for g in read_gpu_specs(data) if g.slug == "h100-sxm")
    sd = load_presets(data)["stable-diffusion-1.5"].model
    work = WorkloadSpec(task="inference", model=sd, precision="fp16", batch_size=16,
                        runtime="pytorch", efficiency=load_efficiency(data))  # fmt: skip
    # FlashAttention-2 reaches 35 % of an H100's 16-bit peak [FA3], not 0.84 × its GEMMs
    assert perf.profile_for(h100, work, "cuda", "infer-diffusion").flash_peak_share == 0.35
    on = perf._on_gpu(h100, work, "pytorch", None, "cuda")
    assert on.rates is not None
    fwd = on.rates[CLASSES.index("attn_flash")]
    assert fwd == pytest.approx(0.35 * (h100.fp16_tflops or 0) * 1e12)
    old = perf._on_gpu(h100, dataclasses.replace(work, attention_kernel="flash1"), "pytorch",
                       None, "cuda")  # fmt: skip
    assert old.rates is not None
    assert old.rates[CLASSES.index("attn_flash")] == pytest.approx(fwd * 0.40 / 0.73)


def test_a_pipeline_of_two_phases_binds_each_apart() -> None:
    # loop host-bound (2 s of dispatch over 1 s of GPU), decode GPU-bound (0.3 s over 0.01 s)
    assert perf.phased_step(1.0, 2.0, 0.3, 0.01) == pytest.approx(2.3)
    # one max over the whole pipeline would say 2.01: the loop's idle GPU cannot run the decode
    assert perf.phased_step(1.0, 2.0, 0.3, 0.01) > max(1.0 + 0.3, 2.0 + 0.01)
    # both GPU-bound: the plain sum of the GPU times
    assert perf.phased_step(3.0, 2.0, 0.3, 0.01) == pytest.approx(3.3)
    # both host-bound: the plain sum of the dispatches
    assert perf.phased_step(1.0, 2.0, 0.01, 0.3) == pytest.approx(2.3)


def test_the_vae_decode_ops_and_their_layout_transforms_run_in_the_decode_phase() -> None:
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.domain.operators import DECODE_PHASE
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    sd = load_presets(data)["stable-diffusion-1.5"].model
    work = WorkloadSpec(task="inference", model=sd, precision="fp16", batch_size=1,
                        runtime="pytorch", efficiency=load_efficiency(data))  # fmt: skip
    ops = perf.step_ops(work, True, 2.0)
    assert ops is not None
    dec = [o for o in ops if o.phase == DECODE_PHASE]
    assert dec and all(o.name.startswith("vae.") for o in dec)
    assert all(o.phase == DECODE_PHASE for o in ops if o.name.startswith("vae."))
    assert any(o.name.endswith(".nchw") for o in dec)  # cuDNN's transforms follow their conv
    # a denoising-step workload (no VAE FLOPs) has no decode phase
    per_step = dataclasses.replace(sd, gflops_per_sample=sd.operators.gflops * 2)  # type: ignore[union-attr]
    step = dataclasses.replace(work, model=per_step)
    assert perf.decode_host_calls(step) == 0.0
    assert not any(o.phase == DECODE_PHASE for o in perf.step_ops(step, True, 2.0) or ())
    # two GPUs splitting a host-bound batch: each still dispatches the whole loop
    a100 = {g.slug: g for g in read_gpu_specs(data)}["a100-sxm4-40gb"]
    one = perf.single_gpu(a100, work)
    assert perf.split_step_s(one, 1, sharded=False) == one.step_s
    two = perf.split_step_s(one, 2, sharded=False)
    assert two == pytest.approx(one.dispatch - one.decode_dispatch + one.decode_s / 2)


def test_compiled_diffusion_in_default_mode_pays_a_host_launch_per_kernel() -> None:
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    h100 = {g.slug: g for g in read_gpu_specs(data)}["h100-sxm"]
    sd = load_presets(data)["stable-diffusion-1.5"].model
    table = load_efficiency(data)
    eager = WorkloadSpec(task="inference", model=sd, precision="fp16", batch_size=1,
                         runtime="pytorch", efficiency=table)  # fmt: skip
    compiled = dataclasses.replace(eager, runtime="torch-compile")
    graphs = dataclasses.replace(compiled, cuda_graphs=True)
    # torch.compile's default mode: the same per-kernel host figure as CNN / ViT inference
    prof = perf.profile_for(h100, compiled, "cuda", "infer-diffusion")
    infer = perf.profile_for(h100, compiled, "cuda", "infer-cnn")
    assert prof.host_us_per_op == infer.host_us_per_op > 0
    # charged per kernel Inductor launches, not per eager ATen call
    assert perf.table_host_calls(compiled) is None
    assert perf.decode_host_calls(compiled) == 0.0
    eager_calls = perf.table_host_calls(eager)
    assert eager_calls is not None
    one = perf.single_gpu(h100, compiled)
    us = prof.host_us_per_op * 1e-6
    kernels = one.dispatch / us
    assert 0 < kernels < eager_calls  # fused: fewer launches than eager calls
    assert 0 < one.decode_dispatch < one.dispatch
    # batch 1 on an H100: the host's launches bind the denoising loop; the eager prompt
    # encoders outside the compiled UNet add at the eager figure (app.domain.diffusion_host)
    eager_us = perf.profile_for(h100, eager, "cuda", "infer-diffusion").host_us_per_op * 1e-6
    assert one.serial == pytest.approx(2 * 682 * eager_us)
    assert one.step_s == pytest.approx(
        one.dispatch - one.decode_dispatch + one.decode_s + one.serial
    )
    # a CUDA-graph mode (reduce-overhead, max-autotune) launches nothing from the host: GPU-bound
    g = perf.single_gpu(h100, graphs)
    assert g.dispatch == 0.0 and g.decode_dispatch == 0.0
    assert g.step_s < one.step_s
    # eager diffusers keeps its ATen calls at its own figure
    e = perf.single_gpu(h100, eager)
    assert e.dispatch == pytest.approx(eager_calls * eager_us)


def test_the_softmax_slows_a_narrow_head_where_the_tensor_cores_outrun_the_vector_units() -> None:
    from app.domain.kernels import softmax_fill

    # 64-wide kernel: per score 256 tensor FLOPs beside 8 FP32 ones that run `balance` × slower
    a100, rtx = 16.0, 2.0
    assert softmax_fill(128, a100) == 1.0
    assert softmax_fill(40, a100) == pytest.approx((1 + 32 / 128) / (1 + 32 / 64))  # 0.83
    assert softmax_fill(40, rtx) == pytest.approx((1 + 4 / 128) / (1 + 4 / 64))  # 0.97
    assert softmax_fill(40, None) == 1.0

    def attn(d: int, balance: float | None) -> float:
        (op,) = attention(
            "a", tokens_q=2 * 4096, q_len=4096, kv_len=4096, heads=8, head_dim=d,
            kv_heads=8, count=1, act_b=2.0, causal=False, flash=True,
        )  # fmt: skip
        return shape_efficiency(op, 108, balance=balance)

    assert attn(40, a100) == pytest.approx(attn(40, None) * softmax_fill(40, a100))
    assert attn(40, a100) < attn(40, rtx) < attn(40, None)


def test_the_softmax_balance_is_the_attention_datapath_over_the_fp32_peak() -> None:
    a100, rtx = llm_step.softmax_balance(A100, "fp16"), llm_step.softmax_balance(RTX4090, "bf16")
    assert a100 is not None and rtx is not None
    assert a100 == pytest.approx((A100.peak_tflops("fp16") or 0) / (A100.fp32_tflops or 1))
    assert rtx < a100 / 4
    # an FP32 job's attention matmuls run on the CUDA cores beside its softmax
    assert llm_step.softmax_balance(A100, "fp32") is None


@pytest.mark.parametrize(
    ("torch_version", "family", "nchw"),
    [
        ("2.0.1", "diffusion", True),  # no layout optimisation before 2.1
        ("2.1.0", "diffusion", True),  # 2.1 skips a UNet (in > out-channel 3×3 convolutions)
        ("2.2.0", "diffusion", False),  # 2.2's inference heuristic converts it
        ("", "diffusion", False),  # unstated: a current release
        ("2.0.1", "cnn", True),
        ("2.1.0", "cnn", False),
    ],
)
def test_inductor_leaves_an_nchw_model_nchw_before_its_layout_optimisation(
    torch_version: str, family: str, nchw: bool
) -> None:
    work = dataclasses.replace(_diffusion(runtime="torch-compile"), torch_version=torch_version)
    work = dataclasses.replace(work, model=dataclasses.replace(work.model, family=family))
    assert perf._inductor_keeps_nchw(work) is nchw
    if family == "diffusion":
        ops = perf.step_ops(work, True, 2.0)
        assert ops is not None
        assert bool([o for o in ops if o.role == "layout"]) is nchw
        # the user's channels_last conversion needs no layout optimisation
        cl = perf.step_ops(dataclasses.replace(work, channels_last=True), True, 2.0)
        assert cl is not None and not [o for o in cl if o.role == "layout"]


def test_a_host_bound_steps_timing_adds_up_with_the_hosts_excess_as_overhead() -> None:
    """An eager SDXL-class step of 3.15 s showed 0.31 + 0.11 + 0.21 s of GPU parts and no host
    time at all; overhead_s now carries the host's excess over the GPU's work, as its
    description says, so the GPU's parts and it add up to the step (and it adds nothing where
    the GPU leads); the input copy, which overlaps the step, shows beside them."""
    from pathlib import Path

    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    sd = load_presets(data)["stable-diffusion-1.5"].model
    work = WorkloadSpec(task="inference", model=sd, precision="fp16", batch_size=1,
                        runtime="pytorch", efficiency=load_efficiency(data))  # fmt: skip
    est = perf.estimate(gpus["h100-sxm"], work)
    assert est.bottleneck == "host overhead"
    parts = est.compute_s + est.memory_s + est.overhead_s
    assert parts == pytest.approx(est.step_time_s, rel=1e-9)
    big = perf.estimate(gpus["h100-sxm"], dataclasses.replace(work, batch_size=64))
    one = perf.single_gpu(gpus["h100-sxm"], dataclasses.replace(work, batch_size=64))
    assert big.bottleneck != "host overhead" and big.overhead_s == pytest.approx(one.overhead)
