"""CNN training per operator under each runtime's execution policy (data/efficiency.yaml):
cuDNN's autotuned Winograd for 3×3 stride-1 convolutions, TensorFlow's NHWC rewrite of 16-bit
training graphs, the bias passes of convolutions no norm follows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.kernels import CLASS_INDEX, class_rates
from app.domain.operators import (
    CONV,
    CONV_3X3,
    CONVS,
    LAYOUT_ROLES,
    backward_ops,
    parse_table,
    table_ops,
)
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
TABLE = load_efficiency(DATA)


def _conv(c_in: int, side: int, r: int, *, stride: int = 1, groups: int = 1) -> dict[str, object]:
    op = {"kind": "conv", "name": "c", "c_in": c_in, "c_out": 64, "h_out": side, "w_out": side}
    return {"ops": [op | {"r": r, "s": r, "stride": stride, "groups": groups}]}


def _training(preset: str, runtime: str, precision: str, batch: int) -> WorkloadSpec:
    p = load_presets(DATA)[preset]
    return WorkloadSpec(
        task="training",
        model=p.model,
        precision=precision,
        batch_size=batch,
        runtime=runtime,
        optimizer="sgd",
        allow_tf32_matmul=True,
        efficiency=TABLE,
    )


def test_only_dense_3x3_stride_1_convolutions_past_the_stem_are_winograd_eligible() -> None:
    def klass(c_in: int, r: int, **kw: int) -> str:
        return table_ops(parse_table(_conv(c_in, 56, r, **kw)), 8)[0].klass

    assert klass(64, 3) == CONV_3X3
    assert klass(3, 3) == CONV  # the stem: 3 channels leave the transform nothing to save
    assert klass(64, 3, stride=2) == CONV  # Winograd F(2×2, 3×3) is a stride-1 algorithm
    assert klass(64, 1) == CONV
    assert klass(512, 3, groups=32) == CONV  # ResNeXt's grouped 3×3


def test_the_3x3_class_runs_at_the_faster_of_the_gemm_and_winograd_on_the_cuda_cores() -> None:
    conv, conv3 = CLASS_INDEX[CONV], CLASS_INDEX[CONV_3X3]
    # no autotuning: the implicit GEMM only
    assert class_rates(100.0, 14.0)[conv3] == class_rates(100.0, 14.0)[conv] == 100.0
    # FP32 on the CUDA cores (V100): 2.25 × the same datapath
    assert class_rates(14.0, 14.0, winograd=2.25)[conv3] == pytest.approx(31.5)
    # 16-bit tensor cores (or an A100's TF32) outrun it: the GEMM stays
    assert class_rates(100.0, 14.0, winograd=2.25)[conv3] == 100.0
    # without a CUDA-core rate there is nothing to run Winograd on
    assert class_rates(14.0, None, winograd=2.25)[conv3] == 14.0


def test_the_runtimes_say_where_they_autotune_and_rewrite_layouts() -> None:
    v100 = GPUS["v100-sxm2-32gb"]
    tf_train = TABLE.profile(v100, "cuda", "tensorflow", "fp16", "train")
    assert tf_train.winograd_3x3 == 2.25 and tf_train.nhwc_16bit
    # TF CNN inference keeps its transforms (its tuning set scored worse without them)
    assert not TABLE.profile(v100, "cuda", "tensorflow", "fp16", "infer-cnn").nhwc_16bit
    # eager PyTorch autotunes where its harnesses set cudnn.benchmark: CNN training, and CNN
    # inference in DLE's harness (tests/domain/test_eager_cnn_inference_policy.py)
    assert TABLE.profile(v100, "cuda", "pytorch", "fp32", "train").winograd_3x3 == 2.25
    assert TABLE.profile(v100, "cuda", "pytorch", "fp32", "infer-cnn").winograd_3x3 == 2.25
    # XLA's convolution picker is not modelled as choosing Winograd
    assert TABLE.profile(v100, "cuda", "tensorflow-xla", "fp32", "train").winograd_3x3 is None


def test_vgg16_fp32_training_runs_faster_than_direct_convolution_allows() -> None:
    # Lambda's tf_cnn_benchmarks VGG16 FP32 on a V100: 249 images/s at batch 192
    # (tests/data/tf_cnn_training.yaml), i.e. 23 TFLOPS of direct-convolution work against a
    # 15.7 TFLOPS FP32 peak: only an algorithm doing fewer multiplies gets there
    v100 = GPUS["v100-sxm2-32gb"]
    work = _training("vgg16", "tensorflow", "fp32", 192)
    assert perf.table_prices(work)
    step = perf.single_gpu(v100, work, framework="tensorflow").step_s
    direct_tflops = 3 * (work.model.gflops_per_sample or 0.0) * 192 / step / 1e3
    assert direct_tflops > (v100.fp32_tflops or 0.0)
    # 1.26× under the measurement (the furthest of the set's three FP32 VGG16 rows; the whole-
    # model path was 2.7× under it)
    assert 249 / 1.3 < 192 / step < 249
    # the same job without the autotuner (XLA's profile) is bound by the FP32 peak
    xla = perf.single_gpu(v100, replace(work, runtime="tensorflow-xla"), framework="tensorflow")
    assert 3 * (work.model.gflops_per_sample or 0.0) * 192 / xla.step_s / 1e3 < (
        v100.fp32_tflops or 0
    )


def test_winograd_is_not_picked_where_tensor_cores_outrun_it() -> None:
    a100 = GPUS["a100-pcie-40gb"]
    on = perf._build_on_gpu(
        a100, _training("vgg16", "tensorflow", "fp32", 64), "tensorflow", None, None
    )
    assert on.rates is not None
    assert on.rates[CLASS_INDEX[CONV_3X3]] == on.rates[CLASS_INDEX[CONV]]
    # TF32 graphs stay NCHW: cuDNN transforms around every tensor-core convolution
    assert not set(LAYOUT_ROLES) & set(on.drop)
    # a GeForce Ampere card's TF32 tensor rate is no higher than its FP32 rate: Winograd wins,
    # and its 3×3 convolutions read NCHW directly
    ga102 = perf._build_on_gpu(
        GPUS["rtx-3090"], _training("vgg16", "tensorflow", "fp32", 48), "tensorflow", None, None
    )
    assert ga102.rates is not None
    assert ga102.rates[CLASS_INDEX[CONV_3X3]] > ga102.rates[CLASS_INDEX[CONV]]
    assert "layout_3x3" in ga102.drop and "layout" not in ga102.drop


def test_tensorflow_16bit_training_runs_nhwc_without_layout_transforms() -> None:
    v100 = GPUS["v100-sxm2-32gb"]
    fp16 = _training("resnet-50", "tensorflow", "fp16", 256)
    on = perf._build_on_gpu(v100, fp16, "tensorflow", None, None)
    assert set(LAYOUT_ROLES) <= set(on.drop)
    # the ops are there (an NCHW runtime), the pricing drops them: faster than eager PyTorch's
    # NCHW step on the same card, as Lambda's tables show (1276 vs 828 images/s)
    assert any(o.role in LAYOUT_ROLES for o in perf.step_ops(fp16, True, 2.0) or [])
    tf = perf.single_gpu(v100, fp16, framework="tensorflow").step_s
    pt = perf.single_gpu(v100, replace(fp16, runtime="pytorch")).step_s
    assert tf < pt


def test_a_convolution_no_norm_follows_carries_a_bias_pass_in_training() -> None:
    vgg = _training("vgg16", "tensorflow", "fp16", 64)
    ops = perf.step_ops(vgg, True, 2.0) or []
    fwd_convs = sum(o.count for o in ops if o.klass in CONVS and o.phase == "fwd")
    biases = [o for o in ops if o.role == "bias"]
    assert fwd_convs == 13
    assert sum(o.count for o in biases if o.phase == "fwd") == 13
    # the backward sums the output gradient: it reads dY and writes next to nothing
    (fwd,) = [o for o in biases if o.phase == "fwd"][:1]
    (bwd,) = backward_ops([fwd], input_grad=True)
    assert bwd.bytes_read == fwd.bytes_written and bwd.bytes_written == 0.0
    # ResNet-50's convolutions all feed a batch norm: no bias; nor under XLA (fused epilogues)
    rn50 = perf.step_ops(_training("resnet-50", "tensorflow", "fp16", 64), True, 2.0) or []
    assert not any(o.role == "bias" for o in rn50)
    xla = perf.step_ops(replace(vgg, runtime="tensorflow-xla"), True, 2.0) or []
    assert not any(o.role == "bias" for o in xla)
