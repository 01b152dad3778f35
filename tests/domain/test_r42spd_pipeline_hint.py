"""A misfit's diffusion-pipeline levers (evaluate._pipeline_hint) are asked only of a diffusion
pipeline: a language model's misfit reason (most laptops and Macs for an 8B model, some ten a
request) had read the card's software gate twice, at its precision and at fp8, for a hint
that pipeline_offload.hint then found empty (workload.model_offload: nothing to offload
beside the model). The words are unchanged: "" for the language model, and the pipeline's
levers for FLUX.1 [dev]."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain import evaluate as ev
from app.domain import pipeline_offload
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from tests.domain.fixtures import RTX4090, RULES, llm_inference

DATA = Path(__file__).resolve().parents[2] / "data"
GIB = 2**30


def _ctx(work: WorkloadSpec) -> ev.Context:
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(objective="balanced"))


def test_a_language_models_misfit_reads_no_gate_for_pipeline_levers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = llm_inference()
    ctx = _ctx(work)

    def no_gate(*_: object, **__: object) -> ev.Gate:
        raise AssertionError("the gate is read for a pipeline hint a language model has none of")

    monkeypatch.setattr(ev, "gate", no_gate)
    assert ev._pipeline_hint(RTX4090, ctx, work, 1.0) == ""
    assert pipeline_offload.hint(work, 1.0, fp8=False, backend="cuda") == ""


def test_a_diffusion_pipelines_misfit_still_names_its_levers() -> None:
    model = load_presets(DATA)["flux-1-dev"].model
    work = WorkloadSpec(model=model, task="inference", precision="bf16", batch_size=1)
    usable = 16.0 * GIB / 1e9
    said = ev._pipeline_hint(RTX4090, _ctx(work), work, usable)
    assert said == pipeline_offload.hint(work, usable, fp8=True, backend="cuda")
    assert said.startswith("; fits with fp8 instead of bf16 with model CPU offload")
