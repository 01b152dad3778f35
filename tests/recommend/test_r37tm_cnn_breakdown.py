"""benchmarks/cnn_breakdown.py splits an eager CNN inference batch as the estimate prices it
(2026-12-07, session 37 "tm"): its class times add up to the engine's step, a channels-last job
differs from an NCHW one by cuDNN's layout transforms alone, and the byte floor is the step's
bytes over the datasheet bandwidth."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support import load_benchmark


@pytest.fixture(scope="module")
def mod() -> ModuleType:
    return load_benchmark("cnn_breakdown.py", "cnn_breakdown")


def test_the_classes_add_up_to_the_estimates_step(mod: ModuleType) -> None:
    # batch 1,024: far above the host launch floor, so the step is the GPU's sum
    b = mod.breakdown("rtx-4090", "resnet-50", 1024)
    assert b.gpu_s == pytest.approx(b.step_s, rel=1e-6)
    assert {"conv", "conv_3x3", "bn", "act", "residual", "nchw"} <= set(b.classes)


def test_channels_last_differs_by_the_layout_transforms_alone(mod: ModuleType) -> None:
    # an A100, where cuDNN's autotuner keeps every convolution on the tensor cores (on a GeForce
    # card it moves some to the CUDA cores over NCHW: perf._autotuned_nchw)
    nchw = mod.breakdown("a100-sxm4-80gb", "resnet-50", 256)
    nhwc = mod.breakdown("a100-sxm4-80gb", "resnet-50", 256, channels_last=True)
    assert "nchw" not in nhwc.classes
    assert set(nchw.classes) - set(nhwc.classes) == {"nchw"}
    for name, c in nhwc.classes.items():
        assert c.seconds == pytest.approx(nchw.classes[name].seconds)
    assert nchw.step_s - nhwc.step_s == pytest.approx(nchw.classes["nchw"].seconds, rel=1e-6)


def test_the_transforms_move_each_tensor_core_convolution_twice(mod: ModuleType) -> None:
    # on an RTX 4090 the 3×3 stride-1 convolutions run as Winograd on the CUDA cores (NCHW
    # directly), and so do the 1×1 / strided ones the autotuner moves there (class conv_nchw),
    # so only those left on the tensor cores are transformed: input, filter and output read and
    # written once more
    b = mod.breakdown("rtx-4090", "resnet-50", 1024)
    assert b.classes["nchw"].bytes == pytest.approx(2 * b.classes["conv"].bytes)
    assert b.classes["nchw"].launches == b.classes["conv"].launches


def test_the_floor_is_the_bytes_over_the_datasheet_bandwidth(mod: ModuleType) -> None:
    b = mod.breakdown("rtx-3090", "efficientnet-b0", 1024)
    assert b.bandwidth_gbs == 936
    assert b.floor_s() == pytest.approx(b.bytes / 936e9)
    assert b.floor_s(("nchw",)) == pytest.approx((b.bytes - b.classes["nchw"].bytes) / 936e9)
    assert b.floor_s() < b.step_s


def test_asks_read_gpu_preset_batch_precision_and_layout(mod: ModuleType) -> None:
    assert mod.parse("rtx-5090:vgg16:256") == ("rtx-5090", "vgg16", 256, "fp16", False)
    assert mod.parse("a100-sxm4-80gb:resnet-50:64:bf16:nhwc") == (
        "a100-sxm4-80gb", "resnet-50", 64, "bf16", True
    )  # fmt: skip
