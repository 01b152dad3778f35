"""Convolutions as implicit GEMMs, wave quantisation over the GPU's SMs, and the CNN table path."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.gpu import GpuSpec
from app.domain.kernels import prepare, shape_efficiency
from app.domain.operators import (
    CONV_3X3,
    CONVS,
    LAYOUT_ROLES,
    backward_ops,
    nchw_transposes,
    parse_table,
    table_ops,
)
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped import yamlio
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def _conv(c_in: int, c_out: int, side: int, r: int, *, stride: int = 1) -> dict[str, object]:
    return {
        "model": "one-conv",
        "ops": [
            {
                "kind": "conv",
                "name": "c",
                "c_in": c_in,
                "c_out": c_out,
                "h_out": side,
                "w_out": side,
                "r": r,
                "s": r,
                "stride": stride,
            }
        ],
    }


def test_a_convolution_is_an_implicit_gemm_over_output_positions() -> None:
    batch = 8
    (op,) = table_ops(parse_table(_conv(64, 128, 56, 3)), batch)
    assert op.klass == CONV_3X3  # 3×3 at stride 1: Winograd-eligible (same implicit GEMM)
    # M = N·P·Q, N = K_out, K = C·R·S
    assert (op.m, op.n, op.k) == (batch * 56 * 56, 128, 64 * 9)
    assert op.flops == pytest.approx(2 * batch * 56 * 56 * 128 * 64 * 9)
    # bytes: the input once, the weights once, the output once (16-bit)
    assert op.bytes_read == pytest.approx((batch * 64 * 56 * 56 + 128 * 64 * 9) * 2)
    assert op.bytes_written == pytest.approx(batch * 128 * 56 * 56 * 2)


def test_backward_is_a_dgrad_and_a_wgrad_gemm_of_the_forwards_size() -> None:
    (op,) = table_ops(parse_table(_conv(64, 128, 56, 3)), 8)
    # the layer inside a network (input_grad): both gradients
    dgrad, wgrad = backward_ops([op], input_grad=True)
    assert dgrad.flops == wgrad.flops == op.flops
    # dX: N = input channels, K = output channels × R × S over the same positions
    assert (dgrad.m, dgrad.n, dgrad.k) == (op.m, 64, 128 * 9)
    # dW: an (C·R·S) × K_out output, reduced over the batch's positions
    assert (wgrad.m, wgrad.n, wgrad.k) == (op.k, op.n, op.m)


def test_a_small_convolution_is_slower_per_flop_on_a_gpu_with_more_sms() -> None:
    # ResNet-50's stage-3 1×1 reduction at batch 1: 2 × 2 output tiles, K = 1024
    (op,) = table_ops(parse_table(_conv(1024, 256, 14, 1)), 1)
    few, many = shape_efficiency(op, 40), shape_efficiency(op, 132)
    assert many < few
    assert many / few < 0.6
    # a large batch fills every SM either way (what is left is the short K loop's overhead)
    (big,) = table_ops(parse_table(_conv(1024, 256, 14, 1)), 256)
    assert shape_efficiency(big, 132) == pytest.approx(shape_efficiency(big, 40), rel=0.05)


def _resnet_inference(runtime: str = "pytorch", batch: int = 8) -> WorkloadSpec:
    preset = load_presets(DATA)["resnet-50"]
    return WorkloadSpec(
        task="inference",
        model=preset.model,
        precision="fp16",
        batch_size=batch,
        runtime=runtime,
        efficiency=load_efficiency(DATA),
    )


def test_cnn_inference_is_priced_from_its_operator_table_under_tensorrt() -> None:
    work = _resnet_inference("tensorrt")
    assert work.model.operators is not None
    assert perf.table_prices(work)
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None and sum(o.count for o in ops if o.klass in CONVS) == 53
    # TensorRT does not train; nothing else was checked for it
    training = replace(work, task="training")
    assert not perf.table_prices(training)
    assert perf.forward_ops(training, True, 2.0) is None
    # every runtime a CNN inference names prices the same table under its own policy: eager
    # PyTorch and TensorFlow (± XLA) checked against published runs (dle_cnn_inference.yaml),
    # torch.compile and ONNX Runtime as the table with their fusion and launch policy
    for runtime in ("pytorch", "tensorflow", "tensorflow-xla", "torch-compile", "onnxruntime"):
        assert perf.table_prices(replace(work, runtime=runtime)), runtime


def _resnet_training(precision: str = "fp16", batch: int = 256) -> WorkloadSpec:
    return replace(_resnet_inference("pytorch", batch), task="training", precision=precision)


def test_an_nchw_convolution_pays_a_transform_of_its_input_and_output_per_call() -> None:
    stem, inner = (table_ops(parse_table(_conv(c, 64, 56, 3)), 8)[0] for c in (3, 64))
    depthwise = {"kind": "conv", "name": "dw", "c_in": 64, "c_out": 64, "groups": 64}
    depthwise |= {"h_out": 56, "w_out": 56, "r": 3, "s": 3}
    dw = table_ops(parse_table({"ops": [depthwise]}), 8)
    act = (8 * 64 * 56 * 56 + 8 * 64 * 56 * 56) * 2.0  # input + output, 16-bit
    first, second = nchw_transposes([stem, inner], training=True)
    # each call reads and writes the activations and the filter once more: forward, dgrad, wgrad
    w = 64 * 64 * 9 * 2.0
    assert second.bytes_read == second.bytes_written == pytest.approx(act + w)
    # (a 3×3 stride-1 convolution's own role: no transforms where it runs as Winograd)
    assert second.count == 3 and second.role == "layout_3x3" and first.role == "layout"
    assert first.count == 2  # the network's input needs no gradient: no dgrad call
    # inference: the forward call only; depthwise convolutions read NCHW directly
    assert [o.count for o in nchw_transposes([inner])] == [1]
    assert nchw_transposes(dw, training=True) == []


def test_eager_amp_cnn_training_is_priced_per_operator_with_its_nchw_transforms() -> None:
    work = _resnet_training()
    assert perf.table_prices(work)
    ops = perf.step_ops(work, True, 2.0)
    assert ops is not None
    convs = sum(o.count for o in ops if o.klass in CONVS and o.phase == "fwd")
    assert sum(o.count for o in ops if o.role in LAYOUT_ROLES) == 3 * convs - 1
    # FP32/TF32 training too, since cuDNN's autotuned Winograd prices its 3×3 convolutions
    # (Lambda's FP32 ResNet-50 rows: 1.14 whole-model → 1.09 per operator)
    assert perf.table_prices(_resnet_training("fp32"))
    assert perf.step_ops(_resnet_training("fp32"), True, 2.0) is not None


def test_a_channels_last_cnn_pays_no_nchw_transforms() -> None:
    # DLE's PyTorch AMP recipes run memory_format=channels_last (configs.yml): NHWC tensors
    # feed cuDNN's tensor-core convolutions directly, so no layout transform is charged
    for work in (_resnet_training(), _resnet_inference("pytorch")):
        nchw = perf.step_ops(work, True, 2.0) or []
        nhwc = perf.step_ops(replace(work, channels_last=True), True, 2.0) or []
        assert any(o.role in LAYOUT_ROLES for o in nchw)
        assert not any(o.role in LAYOUT_ROLES for o in nhwc)
        assert len(nhwc) == len([o for o in nchw if o.role not in LAYOUT_ROLES])
    # and the step is faster for it on a tensor-core GPU
    work = _resnet_training()
    nchw_s = perf.single_gpu(A100, work).step_s
    assert perf.single_gpu(A100, replace(work, channels_last=True)).step_s < nchw_s


def test_tensorflow_xla_cnn_training_is_priced_per_operator_with_nchw_transforms() -> None:
    # checked against DLE's TF + XLA training tables (tests/data/dle_cnn_training.yaml): per
    # operator, with the NCHW transforms of DLE's NCHW compute format, median ratio 1.08
    # against 1.38 whole-model, in both precisions
    for precision in ("fp16", "fp32"):
        work = replace(_resnet_training(precision), runtime="tensorflow-xla")
        assert perf.table_prices(work), precision
        ops = perf.step_ops(work, True, 2.0)
        assert ops is not None and any(o.klass in CONVS and o.phase == "bwd" for o in ops)
    amp = perf.step_ops(replace(_resnet_training(), runtime="tensorflow-xla"), True, 2.0) or []
    convs = sum(o.count for o in amp if o.klass in CONVS and o.phase == "fwd")
    assert sum(o.count for o in amp if o.role in LAYOUT_ROLES) == 3 * convs - 1
    # ... unless the job runs channels-last
    nhwc = replace(_resnet_training(), runtime="tensorflow-xla", channels_last=True)
    assert not any(o.role in LAYOUT_ROLES for o in perf.step_ops(nhwc, True, 2.0) or [])


def test_the_nchw_transforms_run_only_around_tensor_core_convolutions() -> None:
    work = _resnet_training()
    layout = sum(
        o.count * o.bytes for o in perf.step_ops(work, True, 2.0) or [] if o.role in LAYOUT_ROLES
    )
    ampere = perf.single_gpu(replace(A100, slug="a100-nchw", sm_count=108), work)
    # the same card without tensor cores (compute capability 6.x): cuDNN reads NCHW directly
    pascal = perf.single_gpu(
        replace(A100, slug="a100-as-pascal", sm_count=108, compute_capability="6.0"), work
    )
    assert ampere.t_act > pascal.t_act
    bandwidth = layout / (ampere.t_act - pascal.t_act)  # bytes/s the transforms stream at
    assert 0.7 * 2039e9 < bandwidth <= 2039e9
    rocm = perf.single_gpu(replace(A100, slug="a100-rocm", sm_count=108), work, backend="rocm")
    assert rocm.t_act == pytest.approx(pascal.t_act)


def test_the_step_follows_the_gpus_sm_count() -> None:
    work = _resnet_inference("tensorrt", batch=1)
    with_sms = replace(A100, slug="a100-sms", sm_count=108)
    fewer = replace(A100, slug="a100-fewer-sms", sm_count=132)
    a = perf.single_gpu(with_sms, work).t_comp
    b = perf.single_gpu(fewer, work).t_comp
    # 132 SMs at the same peak: each small layer's partial wave leaves more SMs idle
    assert b > a


def test_eager_inference_cannot_beat_the_hosts_dispatch_rate() -> None:
    # a ViT: eager PyTorch inference priced per operator from its config
    work = replace(_resnet_inference(batch=1), model=load_presets(DATA)["vit-b-16"].model)
    one = perf.single_gpu(replace(A100, slug="a100-dispatch", sm_count=108), work)
    kernels = sum(o.count for o in perf.forward_ops(work, True, 2.0) or [])
    # PyTorch eager: ~10 µs of host work per dispatched op (efficiency.yaml)
    assert one.step_s >= kernels * 10e-6 * 0.999
    assert one.step_s > one.t_comp + one.t_act  # host-bound at batch 1 on an A100


def test_tensorrt_folds_inference_batch_norm_into_the_convolution() -> None:
    table = load_presets(DATA)["resnet-50"].model.operators
    assert table is not None
    infer = table_ops(table, 8)
    train = table_ops(table, 8, training=True)
    assert {o.role for o in infer if o.kind == "norm"} == {"bn"}
    assert {o.role for o in train if o.kind == "norm"} == {"norm"}
    trt = load_efficiency(DATA).profile(A100, "cuda", "tensorrt", "int8", "infer")
    assert "bn" in trt.fuse
    eager = prepare(infer)
    folded = prepare(infer, trt.fuse)
    assert folded.kernels < eager.kernels - 50  # 53 BN layers, plus activations and adds


def test_resnet50_training_lands_near_lambdas_published_figure() -> None:
    """Sanity check against one published run of the tuning set: Lambda's RTX A6000,
    ResNet-50 AMP training (tests/data/lambda_pytorch_train.yaml)."""
    doc = yamlio.safe_load((ROOT / "tests/data/lambda_pytorch_train.yaml").read_text())
    row = next(
        r
        for r in doc["measurements"]
        if r.get("gpu_slug") == "rtx-a6000"
        and r["model"] == "resnet50"
        and r["precision"] == "fp16"
        and r["dataset"] == "v1"
    )
    a6000 = {g.slug: g for g in _catalog()}["rtx-a6000"]
    assert a6000.sm_count == 84
    preset = load_presets(DATA)["resnet-50"]
    work = WorkloadSpec(
        task="training",
        model=preset.model,
        precision="fp16",
        batch_size=int(row["batch_size"]),
        runtime="pytorch",
        efficiency=load_efficiency(DATA),
    )
    measured = float(row["samples_per_sec"])
    predicted = perf.estimate(a6000, work).throughput
    assert 1 / 1.25 < measured / predicted < 1.25


def _catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)
