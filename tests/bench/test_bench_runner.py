"""Real (tiny) runs on the CPU: a valid report, flags restored, the rejection rule."""

from __future__ import annotations

import json
import warnings

import pytest
import torch

from app.bench import runner
from app.bench.report import BenchReport
from app.bench.suites.common import Profile
from app.bench.torch_state import precision_flags, save_state


def _flags_snapshot() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "threads": torch.get_num_threads(),
            "precision": torch.get_float32_matmul_precision(),
            "grad": torch.is_grad_enabled(),
            **precision_flags(),
        }


def test_tiny_full_run_produces_valid_report(tiny_profile: Profile) -> None:
    events: list[tuple[str, float]] = []
    report = runner.run_benchmarks(tiny_profile, "cpu", progress=lambda s, f: events.append((s, f)))
    again = BenchReport.model_validate(json.loads(report.model_dump_json()))
    assert again.schema_version == 2
    assert report.environment.backend == "cpu"
    assert report.environment.torch_version == torch.__version__
    assert "float32_matmul_precision" in report.environment.precision_flags
    # every suite covered
    assert report.matmul and report.matmul.by_precision["fp32"].best.ok
    assert report.matmul.by_precision["tf32"].best.status == "not_applicable"
    assert report.matmul.by_precision["fp8"].best.status == "not_applicable"
    # CPU: numpy's BLAS measured next to torch's, the best of both is achievable
    assert any(r.library == "numpy" and r.figure.ok for r in report.matmul.rows)
    assert report.matmul.by_precision["fp32"].best_library in ("torch", "numpy")
    assert report.conv and report.conv.aggregates
    agg = report.conv.aggregates[0]
    assert agg.faster_layout in ("nchw", "channels_last")
    assert report.memory and report.memory.best and report.memory.best.ok
    assert {r.kernel for r in report.memory.rows} == {"copy", "scale", "add", "triad", "read"}
    assert report.transfer and report.transfer.status == "not_applicable"
    assert report.transfer.reason
    assert report.batch_scaling and len(report.batch_scaling.curves) == 4
    for curve in report.batch_scaling.curves:
        assert curve.b90 in (1, 2, 4)
        assert all(p.flops > 0 and p.tflops.ok for p in curve.points)
    assert report.peak_memory and len(report.peak_memory.points) == 2
    assert report.peak_memory.per_sample_bytes is not None
    assert report.tips
    # progress: monotone, ends at 1.0
    fracs = [f for _, f in events]
    assert fracs == sorted(fracs)
    assert events[-1] == ("done", 1.0)


def test_flags_and_threads_restored(tiny_profile: Profile) -> None:
    before_threads = torch.get_num_threads()
    torch.set_float32_matmul_precision("medium")
    try:
        before = _flags_snapshot()
        runner.run_benchmarks(tiny_profile, "cpu", suites=["matmul", "conv"])
        assert _flags_snapshot() == before
    finally:
        torch.set_float32_matmul_precision("highest")
        torch.set_num_threads(before_threads)


def test_flags_restored_when_a_suite_raises(
    tiny_profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _flags_snapshot()
    state = save_state()

    def explode(ctx: object) -> None:
        torch.set_num_threads(1)
        torch.set_float32_matmul_precision("medium")
        raise RuntimeError("boom")

    monkeypatch.setitem(runner._RUNNERS, "matmul", explode)
    report = runner.run_benchmarks(tiny_profile, "cpu", suites=["matmul"])
    assert report.matmul is not None and report.matmul.status == "failed"
    assert "boom" in (report.matmul.reason or "")
    assert _flags_snapshot() == before
    assert torch.get_num_threads() == state.num_threads


def test_flags_restored_on_keyboard_interrupt(
    tiny_profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _flags_snapshot()

    def interrupt(ctx: object) -> None:
        torch.set_float32_matmul_precision("medium")
        raise KeyboardInterrupt

    monkeypatch.setitem(runner._RUNNERS, "matmul", interrupt)
    with pytest.raises(KeyboardInterrupt):
        runner.run_benchmarks(tiny_profile, "cpu", suites=["matmul"])
    assert _flags_snapshot() == before


def test_known_peak_rejects_impossible_measurement(tiny_profile: Profile) -> None:
    # a CPU cannot be this slow: every fp32 matmul exceeds 1.15 × the "peak"
    report = runner.run_benchmarks(tiny_profile, "cpu", peaks={"fp32": 1e-9}, suites=["matmul"])
    assert report.matmul is not None
    rows = [r for r in report.matmul.rows if r.precision == "fp32"]
    assert rows and all(r.figure.status == "rejected" for r in rows)
    assert all(r.figure.value is None and r.figure.rejected_value for r in rows)
    assert report.matmul.by_precision["fp32"].best.status != "ok"
    assert any("rejected" in t for t in report.tips)


def test_known_peak_gives_efficiency(tiny_profile: Profile) -> None:
    report = runner.run_benchmarks(
        tiny_profile, "cpu", peaks={"fp32": 1e4, "bandwidth_gbs": 1e5}, suites=["matmul", "memory"]
    )
    eff = report.summary_efficiencies()
    assert 0 < eff["fp32"] < 1e-2
    assert 0 < eff["bandwidth_gbs"] < 1


def test_suite_selection_and_bad_names(tiny_profile: Profile) -> None:
    report = runner.run_benchmarks(tiny_profile, "cpu", suites=["transfer"])
    assert report.matmul is not None and report.matmul.status == "skipped"
    assert report.transfer is not None and report.transfer.status == "not_applicable"
    with pytest.raises(ValueError):
        runner.run_benchmarks(tiny_profile, "cpu", suites=["nope"])
    with pytest.raises(ValueError):
        runner.run_benchmarks("nope", "cpu")


def test_unavailable_device_is_a_clear_error() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    with pytest.raises(ValueError, match="CUDA"):
        runner.run_benchmarks("quick", "cuda:0")


def test_profiles_exist_for_both_device_classes() -> None:
    for name in runner.PROFILES:
        for accel in (False, True):
            prof = runner.get_profile(name, accel)
            assert prof.name == name
            assert prof.matmul_reference and prof.conv_layers and prof.batches
            assert len(prof.peak_memory_batches) == 2
        assert runner.get_profile(name, True).transfer_sizes


def test_a_spent_budget_keeps_what_every_figure_needs(tiny_profile: Profile) -> None:
    import dataclasses

    from app.bench.suites.common import ConvLayer

    wide = dataclasses.replace(
        tiny_profile,
        budget_s=0.0,
        matmul_search=((64, 64, 64), (96, 96, 96)),
        conv_layers=(ConvLayer("a", 8, 8, 8, 3, 1, 1), ConvLayer("b", 8, 8, 8, 1, 1, 0)),
        batches=(1, 2, 4, 8),
        batch_step_cap_s=1e9,
    )  # only the budget may stop a curve
    report = runner.run_benchmarks(
        wide, "cpu", suites=["matmul", "conv", "memory", "batch_scaling"]
    )
    assert report.memory is not None
    assert [r.kernel for r in report.memory.rows] == ["copy", "triad"]
    assert report.matmul is not None
    fp32 = [
        r
        for r in report.matmul.rows
        if r.precision == "fp32" and r.library == "torch" and r.threads is None
    ]
    assert [r.role for r in fp32] == ["reference"]  # search shapes skipped, reference kept
    assert report.matmul.by_precision["fp32"].best.ok
    assert report.conv is not None and {r.layer for r in report.conv.rows} == {"a"}
    assert report.batch_scaling is not None
    for curve in report.batch_scaling.curves:
        assert [p.batch for p in curve.points] == [1, 2], curve.stopped
        assert curve.stopped == "time budget spent after batch 2"
    assert any("time budget" in w for w in report.warnings)


def test_without_a_budget_nothing_is_skipped(tiny_profile: Profile) -> None:
    import dataclasses

    wide = dataclasses.replace(tiny_profile, matmul_search=((64, 64, 64), (96, 96, 96)))
    report = runner.run_benchmarks(wide, "cpu", suites=["matmul"])
    assert report.matmul is not None
    roles = [
        r.role
        for r in report.matmul.rows
        if r.precision == "fp32" and r.threads is None and r.library == "torch"
    ]
    assert roles == ["reference", "search", "search"]
    assert not any("time budget" in w for w in report.warnings)


def test_quick_profiles_have_a_time_budget() -> None:
    for accel in (False, True):
        budget = runner.get_profile("quick", accel).budget_s
        # the quick goal is 30 s in all: the suites' budget leaves 10 s for imports, the
        # environment probe and the global warm-up
        assert budget is not None and budget <= 20
