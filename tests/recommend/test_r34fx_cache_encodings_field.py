"""workload.cache_encodings behaves as gradient_checkpointing does: blank leaves the saver to
the planner, false refuses it (kohya's text-encoder LoRA of SD and SDXL cannot run on cached
encoder outputs), true sets it. Only a diffusion pipeline's training has encoders to cache."""

from __future__ import annotations

import pytest

from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend.service import _savers_allowed
from app.recommend.workloads import resolve_workload


def _w(**kw: object) -> s.WorkloadIn:
    base: dict[str, object] = {"preset": "sdxl", "task": "fine-tuning", "peft": "lora"}
    return s.WorkloadIn.model_validate({**base, **kw})


@pytest.mark.parametrize(("given", "planner_may"), [(None, True), (False, False), (True, False)])
def test_the_planner_may_cache_only_when_the_field_is_blank(
    given: bool | None, planner_may: bool
) -> None:
    assert ("cache_encodings" in _savers_allowed(_w(cache_encodings=given))) is planner_may
    # checkpointing is still the planner's: the two fields are apart
    assert "checkpointing" in _savers_allowed(_w(cache_encodings=given))


@pytest.mark.parametrize(("given", "cached"), [(None, False), (False, False), (True, True)])
def test_true_sets_the_cache_on_the_job(given: bool | None, cached: bool) -> None:
    work, _ = resolve_workload(_w(cache_encodings=given))
    assert work.cached_encodings is cached


def test_inference_and_a_model_without_a_pipeline_refuse_it_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as inf:
        resolve_workload(_w(task="inference", peft=None, cache_encodings=True))
    assert inf.value.details == {"field": "workload.cache_encodings"}
    with pytest.raises(InvalidInput) as llm:
        resolve_workload(_w(preset="llama-3-8b", cache_encodings=True))
    assert llm.value.details == {"field": "workload.cache_encodings"}
    # false asks nothing of the model: accepted anywhere
    work, _ = resolve_workload(_w(preset="llama-3-8b", cache_encodings=False))
    assert not work.cached_encodings
