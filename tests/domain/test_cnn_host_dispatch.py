"""Eager and graph-mode CNN inference: host dispatch per kernel bounds small batches, and mixed
precision over fp32 weights casts each weight every forward pass."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.kernels import prepare
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def _work(runtime: str, precision: str = "fp16", batch: int = 1) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=load_presets(DATA)["resnext101-32x4d"].model,
        precision=precision,
        batch_size=batch,
        runtime=runtime,
        efficiency=TABLE,
    )


def _convs_and_gemms(ops: list) -> float:
    return sum(o.count for o in ops if o.kind in ("conv", "gemm"))


def test_cnn_inference_has_a_regime_of_its_own() -> None:
    assert perf.phase_regime(_work("pytorch")) == "infer-cnn"
    assert perf.phase_regime(replace(_work("pytorch"), task="training")) == "train"
    vit = replace(_work("pytorch"), model=load_presets(DATA)["vit-b-16"].model)
    assert perf.phase_regime(vit) == "infer"


def test_mixed_precision_casts_every_conv_and_linear_weight_once_per_pass() -> None:
    fp16 = perf.forward_ops(_work("pytorch"), True, 2.0)
    fp32 = perf.forward_ops(_work("pytorch", "fp32"), True, 4.0)
    assert fp16 is not None and fp32 is not None
    (cast,) = [o for o in fp16 if o.name == "autocast.weights"]
    assert not [o for o in fp32 if o.name == "autocast.weights"]
    # one cast kernel per conv / linear weight (104 convolutions and the classifier)
    assert cast.count == _convs_and_gemms(fp16) == 105
    # the casts read every fp32 parameter and write its 16-bit copy
    params = _work("pytorch").model.params
    assert cast.count * cast.bytes_read == pytest.approx(4 * params)
    assert cast.count * cast.bytes_written == pytest.approx(2 * params)
    assert cast.role == "cast"
    # TensorRT builds 16-bit weights once: no per-pass casts
    trt = perf.forward_ops(_work("tensorrt"), True, 2.0)
    assert trt is not None and not [o for o in trt if o.name == "autocast.weights"]
    # XLA fuses the casts (role "cast" in its fusion policy): no kernels of their own
    xla = perf.forward_ops(_work("tensorflow-xla"), True, 2.0)
    assert xla is not None
    fused = prepare(xla, ("act", "residual", "dropout", "copy", "cast")).kernels
    assert fused == prepare([o for o in xla if o.role != "cast"], ("act", "residual")).kernels


def test_16_bit_weights_cast_nothing_per_pass_and_dispatch_fewer_kernels() -> None:
    # model.half() (u39kun/deep-learning-benchmark's harness): the weights are 16-bit already,
    # so autocast's per-pass cast of each conv / linear weight does not run
    amp = _work("pytorch", batch=16)
    half = replace(amp, half_weights=True)
    ops_amp = perf.forward_ops(amp, True, 2.0)
    ops_half = perf.forward_ops(half, True, 2.0)
    assert ops_amp is not None and ops_half is not None
    assert [o for o in ops_amp if o.role == "cast"]
    assert not [o for o in ops_half if o.role == "cast"]
    assert [o for o in ops_amp if o.role != "cast"] == ops_half
    gpu = GPUS["rtx-2080-ti"]
    t_amp = perf.single_gpu(gpu, amp)
    t_half = perf.single_gpu(gpu, half)
    # the 105 casts' bytes (4 + 2 B per parameter) and their dispatch are saved
    assert t_half.step_s < t_amp.step_s
    assert t_half.dispatch < t_amp.dispatch
    # an fp32 job is untouched by the flag
    fp32 = _work("pytorch", "fp32", batch=16)
    assert perf.single_gpu(gpu, replace(fp32, half_weights=True)).step_s == pytest.approx(
        perf.single_gpu(gpu, fp32).step_s
    )


@pytest.mark.parametrize("runtime", ["pytorch", "tensorflow", "tensorflow-xla"])
def test_a_small_batch_is_bound_by_host_dispatch_whatever_the_gpu(runtime: str) -> None:
    work = _work(runtime)
    v100, t4 = GPUS["v100-sxm2-16gb"], GPUS["t4"]
    a, b = perf.single_gpu(v100, work), perf.single_gpu(t4, work)
    # the host term sets both steps (TensorFlow's harness adds the batch's input copy, and its
    # in-order issue the last kernels' GPU time, a few % at one image): on two GPUs of the
    # same host era, nearly the same time on a fast and a slow GPU
    assert a.step_s == pytest.approx(a.dispatch, rel=0.06)
    assert b.step_s == pytest.approx(b.dispatch, rel=0.06)
    assert a.dispatch == pytest.approx(b.dispatch)
    assert a.step_s == pytest.approx(b.step_s, rel=0.06)
    # and it is kernels × the runtime's host cost per op (a PCIe Gen3 GPU: the figure itself)
    prof = perf.profile_for(v100, work, "cuda", "infer-cnn")
    assert prof.host_us_per_op > 0
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    kernels = prepare(ops, prof.fuse).kernels
    if prof.queued_dispatch:  # TensorFlow: each convolution's cuDNN call weighs more
        kernels += (perf.CONV_CALL_WEIGHT - 1) * sum(o.count for o in ops if o.kind == "conv")
    assert a.dispatch == pytest.approx(kernels * prof.host_us_per_op * 1e-6)


def test_tensorflow_issues_its_kernels_in_order_so_a_slow_gpu_shows_at_small_batches() -> None:
    """TensorFlow (queued_dispatch): the GPU cannot run ahead of the host, so the early
    GPU-heavy layers' time is not hidden under the late host-heavy ones. At batch 4 the T4's
    step exceeds max(GPU, host) and the V100's (same host era) while eager PyTorch, which
    keeps max(), ties the two GPUs at the host time."""
    work = _work("tensorflow", batch=4)
    v100, t4 = GPUS["v100-sxm2-16gb"], GPUS["t4"]
    assert perf.profile_for(t4, work, "cuda", "infer-cnn").queued_dispatch
    assert not perf.profile_for(t4, _work("pytorch"), "cuda", "infer-cnn").queued_dispatch
    slow, fast = perf.single_gpu(t4, work), perf.single_gpu(v100, work)
    busy = max(slow.t_comp + slow.t_act + slow.overhead, slow.dispatch)
    # (1.05 before a convolution's host weight: the AMP casts issued first cost less host time)
    assert slow.step_s > 1.005 * (busy + slow.host)
    assert slow.step_s > 1.1 * fast.step_s
    eager = _work("pytorch", batch=4)
    assert perf.single_gpu(t4, eager).step_s == pytest.approx(
        perf.single_gpu(v100, eager).step_s, rel=0.01
    )


def test_a_large_batch_is_gpu_bound_and_the_faster_gpu_wins() -> None:
    work = _work("pytorch", batch=256)
    fast = perf.single_gpu(GPUS["a100-sxm4-40gb"], work)
    slow = perf.single_gpu(GPUS["t4"], work)
    assert fast.step_s > fast.dispatch and slow.step_s > slow.dispatch
    assert slow.step_s > 3 * fast.step_s


def test_eager_transformer_inference_pays_the_cnn_dispatch_cost() -> None:
    """One nn.Module forward dispatched from Python either way: the same host figure per
    kernel (data/efficiency.yaml, the pytorch infer row)."""
    vit = replace(_work("pytorch"), model=load_presets(DATA)["vit-b-16"].model)
    gpu = GPUS["a100-sxm4-40gb"]
    cnn = perf.profile_for(gpu, _work("pytorch"), "cuda", "infer-cnn").host_us_per_op
    other = perf.profile_for(gpu, vit, "cuda", perf.phase_regime(vit)).host_us_per_op
    assert other == cnn


def test_tensorflow_inference_copies_the_batch_in_before_its_kernels_run() -> None:
    """DLE's TF ConvNets harness times a synchronous session.run whose synthetic batch comes
    from a host tf.data pipeline: the pinned H2D copy of the fp32 images precedes the
    convolutions (step = copy + GPU); a PyTorch DataLoader overlaps it (max of the two)."""
    gpu = GPUS["v100-sxm2-16gb"]  # PCIe Gen3 x16: 15.75 GB/s × 0.80 pinned
    copy_s = 128 * 3 * 224 * 224 * 4.0 / (15.75 * 0.80 * 1e9)
    tf = perf.single_gpu(gpu, _work("tensorflow", batch=128))
    assert perf.profile_for(gpu, _work("tensorflow"), "cuda", "infer-cnn").serial_input_copy
    assert tf.host == pytest.approx(copy_s)
    # at batch 128 the GPU binds; issued in order (queued_dispatch), the GPU waits for the host
    # to issue the AMP weight casts that come first (105, one per conv / linear): no more
    gpu_bound = max(tf.t_comp + tf.t_act + tf.overhead, tf.dispatch) + copy_s
    casts_s = 105 * perf.profile_for(gpu, _work("tensorflow"), "cuda", "infer-cnn").host_us_per_op
    assert gpu_bound < tf.step_s <= gpu_bound + casts_s * 1e-6
    xla = perf.single_gpu(gpu, _work("tensorflow-xla", batch=128))
    assert xla.step_s > max(xla.t_comp + xla.t_act + xla.overhead, xla.dispatch)
    # eager PyTorch (DataLoader, pinned prefetch) overlaps the copy with the previous step
    pt = perf.single_gpu(gpu, _work("pytorch", batch=128))
    assert pt.step_s == pytest.approx(max(pt.t_comp + pt.t_act + pt.overhead, pt.host, pt.dispatch))
    # training keeps the overlap (its harnesses prefetch to the device)
    train = replace(_work("tensorflow", batch=128), task="training", optimizer="sgd")
    assert not perf.profile_for(gpu, train, "cuda", "train").serial_input_copy
