"""The eager per-call figure a compiled diffusion job's serial host work pays is looked up only
for a job that has serial calls: a TensorRT job without a per-step sync (every API request of
one) pays none, so no GPU of its request builds a PyTorch spec to look one up."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)


def _job(runtime: str, **kw: object) -> WorkloadSpec:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision="fp16",
        batch_size=1,
        runtime=runtime,
        efficiency=TABLE,
    )
    return replace(work, **kw)  # type: ignore[arg-type]


def _runtimes_asked(monkeypatch: pytest.MonkeyPatch, gpu_slug: str, work: WorkloadSpec) -> list:
    asked: list[str] = []
    real = perf.profile_for

    def spy(gpu, w, backend, regime):
        asked.append(w.runtime)
        return real(gpu, w, backend, regime)

    monkeypatch.setattr(perf, "profile_for", spy)
    gpu = replace(GPUS[gpu_slug])  # a store of its own: nothing cached yet
    perf.single_gpu(gpu, work, backend="cuda")
    return asked


def test_a_job_without_serial_calls_looks_up_no_eager_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _runtimes_asked(monkeypatch, "l4", _job("tensorrt"))
    assert "tensorrt" in asked and "pytorch" not in asked


def test_a_job_with_serial_calls_pays_the_eager_figure_once_per_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    synced = _job("tensorrt", step_sync=True)
    asked = _runtimes_asked(monkeypatch, "l4", synced)
    assert asked.count("pytorch") == 1
    gpu = replace(GPUS["l4"])  # a fresh store
    first = perf.single_gpu(gpu, synced, backend="cuda")
    again = perf.single_gpu(gpu, synced, backend="cuda")  # the kept figure
    assert again.serial == first.serial > 0.0
    base = perf.single_gpu(gpu, _job("tensorrt"), backend="cuda")
    us = TABLE.profile(gpu, "cuda", "pytorch", "fp16", "infer-diffusion", "diffusion")
    calls = perf._step_job(synced, True, 2.0).serial_calls
    assert first.step_s - base.step_s == pytest.approx(calls * us.host_us_per_op * 1e-6)
