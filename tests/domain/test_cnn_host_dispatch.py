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


@pytest.mark.parametrize("runtime", ["pytorch", "tensorflow", "tensorflow-xla"])
def test_a_small_batch_is_bound_by_host_dispatch_whatever_the_gpu(runtime: str) -> None:
    work = _work(runtime)
    fast, slow = GPUS["a100-sxm4-40gb"], GPUS["t4"]
    a, b = perf.single_gpu(fast, work), perf.single_gpu(slow, work)
    # the host term sets both steps: the same time on a fast and a slow GPU
    assert a.step_s == pytest.approx(a.dispatch)
    assert b.step_s == pytest.approx(b.dispatch)
    assert a.step_s == pytest.approx(b.step_s)
    # and it is kernels × the runtime's host cost per op
    prof = perf.profile_for(fast, work, "cuda", "infer-cnn")
    assert prof.host_us_per_op > 0
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    kernels = prepare(ops, prof.fuse).kernels
    assert a.dispatch == pytest.approx(kernels * prof.host_us_per_op * 1e-6)


def test_a_large_batch_is_gpu_bound_and_the_faster_gpu_wins() -> None:
    work = _work("pytorch", batch=256)
    fast = perf.single_gpu(GPUS["a100-sxm4-40gb"], work)
    slow = perf.single_gpu(GPUS["t4"], work)
    assert fast.step_s > fast.dispatch and slow.step_s > slow.dispatch
    assert slow.step_s > 3 * fast.step_s


def test_eager_transformer_inference_keeps_the_modern_dispatch_cost() -> None:
    vit = replace(_work("pytorch"), model=load_presets(DATA)["vit-b-16"].model)
    gpu = GPUS["a100-sxm4-40gb"]
    cnn = perf.profile_for(gpu, _work("pytorch"), "cuda", "infer-cnn").host_us_per_op
    other = perf.profile_for(gpu, vit, "cuda", perf.phase_regime(vit)).host_us_per_op
    assert other < cnn
