"""A diffusers pipeline's host work that runs with the GPU idle (app.domain.diffusion_host,
issue 21): a compiled job's eager prompt encoders (and SD 1.5's safety checker where the
pipeline runs it), and, where the loop syncs every step under CUDA graphs or TensorRT, the
scheduler's calls after the sync plus the compiled module's own call overhead."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import diffusion_host as dh
from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)
A100 = GPUS["a100-sxm4-40gb"]


def _job(preset: str, runtime: str, **kw: object) -> WorkloadSpec:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS[preset].model,
        precision="fp16",
        batch_size=1,
        runtime=runtime,
        efficiency=TABLE,
    )
    return replace(work, **kw)  # type: ignore[arg-type]


def _unet_calls(work: WorkloadSpec) -> float:
    return (work.model.passes_per_sample or 1) / 2


def test_counts_are_the_traced_pipelines() -> None:
    # SD 1.5 encodes the prompt and the empty negative prompt with one CLIP-L tower; SDXL its
    # two towers once (the negative embeddings zeroed)
    assert dh.PROMPT_CALLS == {"stable-diffusion-1.5": 1364, "sdxl": 682 + 1720}
    assert dh.SAFETY_CHECKER_CALLS["stable-diffusion-1.5"] == 1322
    assert abs(dh.COMPILED_GRAPH_CALL_S - 345e-6) < 1e-12


def test_compiled_graph_loop_with_a_step_sync_pays_scheduler_and_call_overhead() -> None:
    work = _job("stable-diffusion-1.5", "torch-compile", cuda_graphs=True, step_sync=True)
    n = _unet_calls(work)
    calls, fixed = dh.serial_host(work, n, whole_pipeline=True)
    assert calls == pytest.approx(1364 + dh.STEP_SYNC_CALLS * n)
    assert fixed == pytest.approx(dh.COMPILED_GRAPH_CALL_S * n)
    with_checker = replace(work, safety_checker=True)
    assert dh.serial_host(with_checker, n, True)[0] == pytest.approx(calls + 1322)
    # a denoising-step job holds no prompt encoding
    assert dh.serial_host(work, n, whole_pipeline=False)[0] == pytest.approx(dh.STEP_SYNC_CALLS * n)


def test_what_pays_nothing() -> None:
    n = 50.0
    # eager diffusers: its per-call figure already lumps the text encoders and the scheduler
    eager = _job("stable-diffusion-1.5", "pytorch", step_sync=True, safety_checker=True)
    assert dh.serial_host(eager, n, True) == (0.0, 0.0)
    # the default mode dispatches every kernel from the host: a sync adds no idle gap
    default = _job("stable-diffusion-1.5", "torch-compile", step_sync=True)
    assert dh.serial_host(default, n, True) == (1364.0, 0.0)
    # TensorRT runs CLIP as an engine; without a per-step sync its host work overlaps
    trt = _job("stable-diffusion-1.5", "tensorrt")
    assert dh.serial_host(trt, n, True) == (0.0, 0.0)
    assert dh.serial_host(replace(trt, step_sync=True), n, True) == (dh.STEP_SYNC_CALLS * n, 0.0)
    # FLUX.1's once-per-image table already holds its prompt encoders
    flux = _job("flux-1-dev", "torch-compile", cuda_graphs=True, step_sync=True)
    assert dh.serial_host(flux, n, True) == (0.0, 0.0)


def test_the_step_adds_the_serial_host_at_the_eager_per_call_figure() -> None:
    graphs = _job("stable-diffusion-1.5", "torch-compile", cuda_graphs=True)
    synced = replace(graphs, step_sync=True, safety_checker=True)
    base = perf.single_gpu(A100, graphs, backend="cuda")
    one = perf.single_gpu(A100, synced, backend="cuda")
    eager_us = TABLE.profile(A100, "cuda", "pytorch", "fp16", "infer-diffusion", "diffusion")
    us = eager_us.host_us_per_op
    assert us == pytest.approx(23.0)
    n = _unet_calls(graphs)
    added = (dh.SAFETY_CHECKER_CALLS["stable-diffusion-1.5"] + dh.STEP_SYNC_CALLS * n) * us * 1e-6
    added += dh.COMPILED_GRAPH_CALL_S * n
    assert one.step_s - base.step_s == pytest.approx(added, rel=1e-9)
    assert one.serial - base.serial == pytest.approx(added, rel=1e-9)
    # the serial work does not split when GPUs split the batch
    assert perf.split_step_s(one, 2, sharded=False, batch=1) >= one.serial


def test_eager_pipeline_is_unchanged_by_the_harness_fields() -> None:
    eager = _job("sdxl", "pytorch")
    flagged = replace(eager, step_sync=True, safety_checker=True)
    a = perf.single_gpu(A100, eager, backend="cuda")
    b = perf.single_gpu(A100, flagged, backend="cuda")
    assert b.step_s == a.step_s and b.serial == 0.0
