"""The kernel-class suites on the CPU at toy sizes: every class the engine prices is
measured as a raw point whose work matches its shape; what needs a GPU is skipped with a
reason. The accelerator paths run under the gpu marker."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from app.bench import runner
from app.bench.device import synchronizer
from app.bench.report import (
    BenchReport,
    KernelPoint,
    attention_flops,
    gemm_flops,
    impossible_figure,
)
from app.bench.suites import collectives, kernels
from app.bench.suites.common import Context, Profile

CPU_CLASSES = {
    "gemm",
    "attention_prefill",
    "attention_decode",
    "elementwise",
    "normalization",
    "embedding",
    "launch_eager",
}


def _run_kernels(profile: Profile, device: str = "cpu") -> BenchReport:
    report = runner.run_benchmarks(profile, device, suites=["kernels"])
    return BenchReport.model_validate(json.loads(report.model_dump_json()))


def test_every_cpu_kernel_class_is_measured(tiny_profile: Profile) -> None:
    report = _run_kernels(tiny_profile)
    suite = report.kernels
    assert suite is not None and suite.status == "ok"
    classes = {p.kernel_class for p in suite.points}
    assert classes == CPU_CLASSES
    for p in suite.points:
        assert p.seconds > 0 and p.p10_s is not None and p.p10_s <= p.seconds * 1.0001
        if p.kernel_class == "gemm":
            assert p.flops == gemm_flops(p.shape)
        if p.kernel_class.startswith("attention"):
            assert p.flops == attention_flops(p.shape)
        if p.tflops is not None:
            assert p.tflops == pytest.approx(p.flops / p.seconds / 1e12)  # type: ignore[operator]
    skinny = [p for p in suite.points if p.kernel_class == "gemm" and p.shape["m"] <= 16]
    assert skinny, "decode GEMMs (M ≤ 16) are part of the grid"
    decode = [p for p in suite.points if p.kernel_class == "attention_decode"]
    assert all(p.shape["q_len"] == 1 for p in decode)
    ops = {p.op for p in suite.points if p.kernel_class in ("elementwise", "normalization")}
    assert ops == {"add", "gelu", "layer_norm", "rms_norm"}


def test_gpu_only_classes_are_skipped_with_a_reason(tiny_profile: Profile) -> None:
    suite = _run_kernels(tiny_profile).kernels
    assert suite is not None
    assert "CUDA" in suite.skipped["launch_graph"]
    assert "cpu" in suite.skipped["all_reduce"] and "cpu" in suite.skipped["all_gather"]


def test_collectives_need_two_gpus() -> None:
    from app.bench.report import KernelSuite

    suite = KernelSuite()
    collectives.run(suite, "cuda" if torch.cuda.is_available() else "cpu", (1 << 12,))
    if torch.cuda.device_count() < 2:
        assert not suite.points and suite.skipped["all_reduce"]


def test_bus_bandwidth_follows_nccl_tests() -> None:
    # nccl-tests: all-reduce busbw = algbw · 2(n−1)/n, all-gather busbw = algbw · (n−1)/n
    assert collectives.bus_bytes("all_reduce", 1000, 8) == 1750
    assert collectives.bus_bytes("all_gather", 1000, 8) == 875
    assert collectives.bus_bytes("all_reduce", 1000, 2) == 1000


def test_a_family_that_crashes_does_not_stop_the_others(
    tiny_profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(ctx: Context, suite: object) -> None:
        raise RuntimeError("kernel exploded")

    families = tuple(
        (name, w, boom if name == "attention" else fn) for name, w, fn in kernels._FAMILIES
    )
    monkeypatch.setattr(kernels, "_FAMILIES", families)
    ctx = Context(device="cpu", backend="cpu", sync=synchronizer("cpu"), profile=tiny_profile)
    suite = kernels.run(ctx)
    assert "kernel exploded" in suite.skipped["attention"]
    assert {p.kernel_class for p in suite.points} == CPU_CLASSES - {
        "attention_prefill",
        "attention_decode",
    }


def test_a_spent_budget_keeps_one_point_per_family(tiny_profile: Profile) -> None:
    ctx = Context(device="cpu", backend="cpu", sync=synchronizer("cpu"), profile=tiny_profile)
    ctx.deadline = 0.0  # already past
    suite = kernels.run(ctx)
    gemms = [p for p in suite.points if p.kernel_class == "gemm"]
    assert len(gemms) == 1
    assert {p.kernel_class for p in suite.points} >= {"gemm", "attention_prefill", "elementwise"}
    assert any("skipped" in w for w in ctx.warnings)


def test_known_peak_marks_an_impossible_point_rejected(tiny_profile: Profile) -> None:
    report = runner.run_benchmarks(
        tiny_profile, "cpu", peaks={"fp32": 1e-9, "bandwidth_gbs": 1e-6}, suites=["kernels"]
    )
    assert report.kernels is not None
    gemm = [p for p in report.kernels.points if p.kernel_class == "gemm"]
    assert gemm and all(p.status == "rejected" and p.efficiency is None for p in gemm)
    # what the bench rejected itself claims nothing: an upload of it is not refused
    assert impossible_figure(report, {"fp32": 1e-9}) is None
    # the same points claimed as ok are
    claimed = report.model_copy(deep=True)
    assert claimed.kernels is not None
    claimed.kernels.points = [
        KernelPoint.model_validate(p.model_dump() | {"status": "ok"})
        for p in claimed.kernels.points
    ]
    found = impossible_figure(claimed, {"fp32": 1e-9})
    assert found is not None and found[0].startswith("kernels.points.") and "tflops" in found[0]


def test_quick_profiles_cover_the_preset_layers() -> None:
    for accel in (False, True):
        cfg = runner.get_profile("quick", accel).kernels
        assert any(m <= 16 for m, _, _ in cfg.gemm_shapes)
        assert any((n, k) == (4096, 4096) for _, n, k in cfg.gemm_shapes)
    accel_q = runner.get_profile("quick", True).kernels
    assert {(n, k) for _, n, k in accel_q.gemm_shapes} >= {
        (4096, 4096),
        (14336, 4096),
        (4096, 14336),
        (128256, 4096),
    }


HAS_CUDA = torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_kernels_on_cuda(tiny_profile: Profile) -> None:
    profile = dataclasses.replace(
        tiny_profile,
        kernels=dataclasses.replace(
            tiny_profile.kernels, gemm_precisions=("bf16",), dtypes=("bf16",)
        ),
    )
    report = _run_kernels(profile, "cuda")
    assert report.kernels is not None
    classes = {p.kernel_class for p in report.kernels.points}
    assert classes >= CPU_CLASSES | {"launch_graph"}
    graph = next(p for p in report.kernels.points if p.kernel_class == "launch_graph")
    eager = next(p for p in report.kernels.points if p.kernel_class == "launch_eager")
    # a replayed graph launches its kernels with less host work than eager dispatch
    assert graph.seconds / graph.shape["kernels"] < eager.seconds


def test_nvidia_smi_fields_are_read_and_unreadable_ones_left_out() -> None:
    from app.bench.environment import parse_smi_line

    rec = parse_smi_line("570.86.15, 1980, 1980, 3201, 121.50, 700.00, [N/A]")
    assert rec["driver_version"] == "570.86.15" and rec["power_limit_w"] == 700.0
    assert rec["sm_clock_max_mhz"] == 1980.0 and "temperature_c" not in rec
