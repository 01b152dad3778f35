"""TensorFlow CNN inference (queued_dispatch): a convolution's cuDNN call costs the host
perf.CONV_CALL_WEIGHT op-equivalents, every other issued op one; and SE-ResNeXt-101's
squeeze-excitation FCs are GEMMs (DLE's dense / nn.Linear), not convolutions."""

from __future__ import annotations

import pytest

from app.domain import perf
from app.domain.kernels import prepare
from tests.domain.test_compiled_runtime_policy import GPUS, PRESETS
from tests.domain.test_compiled_runtime_policy import _job as _work


def test_every_convolution_weighs_the_profiles_conv_to_relu_ratio() -> None:
    # pytorch-conv-profile: conv2d ~112 µs, relu_ ~26 µs of CPU per call
    ops = perf.forward_ops(_work("resnext101-32x4d", "tensorflow"), True, 2.0)
    assert ops is not None
    weights = {o.klass: perf._host_weight(o) for o in ops}
    # dense, 3×3 and the narrow grouped (CUDA-core) convolutions are cuDNN calls alike
    assert weights["conv"] == weights["conv_dw"] == pytest.approx(112 / 26)
    assert weights["memory"] == 1.0


@pytest.mark.parametrize("runtime", ["tensorflow", "tensorflow-xla"])
def test_tensorflow_dispatch_weighs_each_convolution_call(runtime: str) -> None:
    work = _work("resnext101-32x4d", runtime)
    gpu = GPUS["v100-sxm2-16gb"]
    prof = perf.profile_for(gpu, work, "cuda", "infer-cnn")
    assert prof.queued_dispatch
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    kernels = prepare(ops, prof.fuse).kernels
    convs = sum(o.count for o in ops if o.kind == "conv")
    assert convs == 104  # stem, 33 blocks × 3, 4 projection shortcuts
    want = (kernels + (perf.CONV_CALL_WEIGHT - 1) * convs) * prof.host_us_per_op * 1e-6
    assert perf.single_gpu(gpu, work).dispatch == pytest.approx(want)


def test_eager_pytorch_keeps_one_host_op_per_kernel() -> None:
    work = _work("resnext101-32x4d", "pytorch")
    gpu = GPUS["v100-sxm2-16gb"]
    prof = perf.profile_for(gpu, work, "cuda", "infer-cnn")
    assert not prof.queued_dispatch
    ops = perf.forward_ops(work, True, 2.0)
    assert ops is not None
    kernels = prepare(ops, prof.fuse).kernels
    assert perf.single_gpu(gpu, work).dispatch == pytest.approx(
        kernels * prof.host_us_per_op * 1e-6
    )


def test_squeeze_excitation_fcs_are_gemms_with_the_same_flops() -> None:
    se = PRESETS["se-resnext101-32x4d"].model.operators
    assert se is not None
    fcs = [o for o in se.ops if ".se.fc" in str(o["name"])]
    assert len(fcs) == 16 and all(o["kind"] == "gemm" and o["m"] == 1 for o in fcs)
    # the table's FLOPs still sum to its header (2 × MACs, the FCs counted once each)
    assert se.gflops_forward == pytest.approx(15.95, abs=0.01)


@pytest.mark.parametrize("runtime", ["tensorflow", "tensorflow-xla"])
def test_squeeze_excitation_adds_little_host_time_under_tensorflow(runtime: str) -> None:
    """DLE's TF1 20.06 batch-1 latencies: SE-ResNeXt-101 takes 1.02-1.18× ResNeXt-101's under
    XLA and 1.17-1.52× in graph mode (AMP adds two weight casts per SE block); a per-kernel
    host figure priced it 1.47-1.59×. The 33 SE blocks add no convolution call."""
    gpu = GPUS["v100-sxm2-16gb"]
    plain = perf.single_gpu(gpu, _work("resnext101-32x4d", runtime)).step_s
    se = perf.single_gpu(gpu, _work("se-resnext101-32x4d", runtime)).step_s
    assert 1.0 < se / plain < (1.25 if runtime == "tensorflow-xla" else 1.4)


def test_the_convolutions_set_most_of_the_host_time() -> None:
    # ResNeXt-101 under XLA: 104 cuDNN calls beside ~107 fused kernels, so the calls hold
    # 104 × 4.3 / (104 × 4.3 + 107) ≈ 81 % of the dispatch
    work = _work("resnext101-32x4d", "tensorflow-xla")
    gpu = GPUS["a100-sxm4-40gb"]
    one = perf.single_gpu(gpu, work)
    prof = perf.profile_for(gpu, work, "cuda", "infer-cnn")
    convs_s = 104 * perf.CONV_CALL_WEIGHT * prof.host_us_per_op * 1e-6
    assert 0.75 < convs_s / one.dispatch < 0.9
