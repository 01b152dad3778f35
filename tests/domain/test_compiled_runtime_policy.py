"""Compiled runtimes as execution policies over the same operator tables (issue #21): a CNN or
diffusion job under torch.compile, ONNX Runtime or TensorRT is the eager job's operator table
with that runtime's fusion, layout and launch policy (data/efficiency.yaml runtime rows), so
its GPU time is never above eager PyTorch's for the same job on the same GPU."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.kernels import CLASS_INDEX
from app.domain.operators import CONV, CONV_3X3, LAYOUT_ROLES
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)
COMPILED = ("torch-compile", "onnxruntime", "tensorrt")


def _job(preset: str, runtime: str, precision: str = "fp16", batch: int = 1) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS[preset].model,
        precision=precision,
        batch_size=batch,
        runtime=runtime,
        efficiency=TABLE,
    )


def _gpu_s(slug: str, work: WorkloadSpec) -> float:
    """The step's GPU time (compute, weight and activation bytes, kernel gaps): no host."""
    one = perf.single_gpu(GPUS[slug], work, backend="cuda")
    return one.t_comp + one.t_wmem + one.t_act + one.overhead


@pytest.mark.parametrize("slug", ["rtx-4090", "h100-sxm", "a100-sxm4-80gb"])
@pytest.mark.parametrize("runtime", COMPILED)
def test_sdxl_fp16_batch1_compiled_gpu_time_is_not_above_eager(slug: str, runtime: str) -> None:
    eager, compiled = _job("sdxl", "pytorch"), _job("sdxl", runtime)
    assert perf.table_prices(compiled)
    assert _gpu_s(slug, compiled) <= _gpu_s(slug, eager)
    # and the whole step: the eager host dispatch only adds to eager's
    one_c = perf.single_gpu(GPUS[slug], compiled, backend="cuda")
    one_e = perf.single_gpu(GPUS[slug], eager, backend="cuda")
    assert one_c.step_s <= one_e.step_s
    if runtime == "torch-compile":
        # the default mode launches Inductor's (fewer, fused) kernels from the host; a CUDA-graph
        # mode launches none
        assert 0.0 < one_c.dispatch < one_e.dispatch
        graphs = replace(compiled, cuda_graphs=True)
        assert perf.single_gpu(GPUS[slug], graphs, backend="cuda").dispatch == 0.0
    else:
        assert one_c.dispatch == 0.0 < one_e.dispatch


@pytest.mark.parametrize("preset", ["convnext-tiny", "vgg16", "resnet-50", "efficientnet-b0"])
@pytest.mark.parametrize("slug", ["rtx-4090", "h100-sxm", "t4", "v100-sxm2-16gb"])
def test_cnn_compiled_gpu_time_is_not_above_eager(preset: str, slug: str) -> None:
    for precision in ("fp16", "fp32"):
        for batch in (1, 256):
            eager = _gpu_s(slug, _job(preset, "pytorch", precision, batch))
            for runtime in ("torch-compile", "onnxruntime"):
                work = _job(preset, runtime, precision, batch)
                assert perf.table_prices(work), runtime
                assert _gpu_s(slug, work) <= eager, (runtime, precision, batch)


def test_torch_compile_policy_fuses_element_wise_runs_channels_last_and_launches_from_host() -> (
    None
):
    work = _job("convnext-tiny", "torch-compile", batch=256)
    on = perf._build_on_gpu(GPUS["rtx-4090"], work, "pytorch", None, "cuda")
    assert {"act", "residual", "copy", "cast"} <= set(on.drop)
    # Inductor's layout optimisation: convolutions see channels-last tensors, no transforms
    ops = perf.step_ops(work, True, on.act_b)
    assert ops is not None and not [o for o in ops if o.role in LAYOUT_ROLES]
    # nor eager's bias passes or autocast weight casts
    assert not [o for o in ops if o.role == "bias" or o.name == "autocast.weights"]
    # the default mode runs no CUDA graph: each kernel launched from Inductor's Python wrapper
    # pays host time (data/efficiency.yaml torch-compile infer|infer-cnn, from the HF guide's
    # host-bound ResNet-50 rows, 2026-12-03; was 0, as if every run were a CUDA graph)
    assert on.host_us == 38.0 and on.prof.kernel_us == 2.0
    eager_ops = perf.step_ops(replace(work, runtime="pytorch"), True, on.act_b)
    assert eager_ops is not None and [o for o in eager_ops if o.role in LAYOUT_ROLES]


def test_onnxruntime_policy_keeps_nchw_and_autotunes_cudnn() -> None:
    work = _job("resnet-50", "onnxruntime", batch=256)
    ops = perf.step_ops(work, True, 2.0)
    # the CUDA execution provider keeps the graph's NCHW (prefer_nhwc = 0): cuDNN's transforms
    assert ops is not None and [o for o in ops if o.role in LAYOUT_ROLES]
    # and searches cuDNN's algorithms (Winograd for dense 3×3 where the CUDA cores win)
    fp32 = _job("resnet-50", "onnxruntime", "fp32", 256)
    on = perf._build_on_gpu(GPUS["v100-sxm2-16gb"], fp32, "pytorch", None, "cuda")
    assert on.rates is not None
    assert on.rates[CLASS_INDEX[CONV_3X3]] > 2.0 * on.rates[CLASS_INDEX[CONV]]
    assert on.prof.winograd_3x3 == 2.25 and on.host_us == 0.0


def test_tensorrt_diffusion_prices_the_table_at_16_bits_and_its_8bit_unets_stay_whole_model() -> (
    None
):
    for runtime in COMPILED:
        for precision in ("fp16", "bf16", "fp32"):
            assert perf.table_prices(_job("sdxl", runtime, precision)), (runtime, precision)
    # MLPerf's INT8 / FP8 UNets: the table's 8-bit pricing is not borne out (docs/methodology.md)
    for precision in ("int8", "fp8"):
        assert not perf.table_prices(_job("sdxl", "tensorrt", precision))
        assert perf.forward_ops(_job("sdxl", "tensorrt", precision), True, 1.0) is None
    # eager PyTorch keeps the table in every precision, as before
    assert perf.table_prices(_job("sdxl", "pytorch", "int8"))
    # runtimes that do not run diffusers' UNets keep the whole-model path
    assert not perf.table_prices(_job("sdxl", "tensorflow"))


def test_compiled_batch_inference_pays_host_launches_decode_replays_a_graph() -> None:
    """torch.compile's default mode (batch inference) launches every kernel from the host; the
    decode and prefill rows price gpt-fast's reduce-overhead mode (CUDA graphs: no host term).
    A compiled ResNet-50 at batch 1 is host-bound, yet launches fewer kernels than eager's calls,
    so its host floor stays below eager's."""
    work = _job("resnet-50", "torch-compile", "fp32", 1)
    one_c = perf.single_gpu(GPUS["a100-sxm4-40gb"], work, backend="cuda")
    one_e = perf.single_gpu(
        GPUS["a100-sxm4-40gb"], replace(work, runtime="pytorch"), backend="cuda"
    )
    assert 0.0 < one_c.dispatch < one_e.dispatch
    assert one_c.step_s >= one_c.dispatch > _gpu_s("a100-sxm4-40gb", work)
    a100 = GPUS["a100-sxm4-40gb"]
    decode = TABLE.profile(a100, "cuda", "torch-compile", "bf16", "decode")
    assert decode.host_us_per_op == 0.0
    for regime in ("infer", "infer-cnn"):
        assert TABLE.profile(a100, "cuda", "torch-compile", "fp32", regime).host_us_per_op == 38.0


def test_tensorrt_fp16_convolutions_and_gemms_accumulate_in_fp16_on_geforce_only() -> None:
    # tensorrt-fp16-accumulate: FP16 tactics accumulate in FP16, twice the catalog's
    # FP32-accumulate rate on a GeForce part, the same rate on a datacenter one
    from app.domain.efficiency import FP16_ACCUMULATE_GEMM_SHARE, HALF_RATE_GEMM_SHARE
    from app.domain.kernels import ATTN_FLASH, GEMM

    def rates(slug: str, runtime: str, precision: str = "fp16") -> tuple[float, ...]:
        work = _job("stable-diffusion-1.5", runtime, precision)
        on = perf._on_gpu(GPUS[slug], work, "pytorch", None, "cuda")
        assert on.rates is not None
        return on.rates

    # twice the peak, each path at its own share of it (since session 42, sdc: the
    # FP32-accumulate half rate held whole, the FP16-accumulate full rate at 0.90)
    doubled = 2 * FP16_ACCUMULATE_GEMM_SHARE / HALF_RATE_GEMM_SHARE
    for klass in (GEMM, CONV):
        i = CLASS_INDEX[klass]
        assert rates("rtx-4090", "tensorrt")[i] == pytest.approx(
            doubled * rates("rtx-4090", "pytorch")[i]
        )
        assert rates("a100-sxm4-80gb", "tensorrt")[i] == pytest.approx(
            rates("a100-sxm4-80gb", "pytorch")[i]
        )
        # bf16 has no FP16-accumulate path
        assert rates("rtx-4090", "tensorrt", "bf16")[i] == pytest.approx(
            rates("rtx-4090", "pytorch", "bf16")[i]
        )
    # its fused MHA (fmha_v2's FP16-accumulate kernels) doubles with them since 2026-12-06
    # (tests/domain/test_r29df_trt_attention_accumulate.py); FlashAttention under PyTorch does not
    a = CLASS_INDEX[ATTN_FLASH]
    assert rates("rtx-4090", "tensorrt")[a] == pytest.approx(
        doubled * rates("rtx-4090", "pytorch")[a]
    )
    assert rates("a100-sxm4-80gb", "tensorrt")[a] == pytest.approx(
        rates("a100-sxm4-80gb", "pytorch")[a]
    )
