"""What-ifs for BERT and Whisper jobs offer the compiled runtimes (TensorRT runs BERT ~3× eager
on an RTX 4090) and no int8/int4 lever that only shrinks stored weights under eager PyTorch; a
rented job without spot is offered spot. Serving names the job fields it does not read."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service
from app.recommend.serving import ask_warnings
from app.recommend.whatif import SPOT_ALLOWED, variations


def _labels(workload: dict[str, Any], **kw: Any) -> list[str]:
    req = s.RecommendationRequest.model_validate({"workload": workload, **kw})
    work, _ = service._resolve(req, service.DATA_DIR)
    return [label for label, _ in variations(work, req)]


def test_encoder_and_whisper_jobs_get_runtime_levers_and_no_idle_weight_levers() -> None:
    for preset in ("bert-base", "whisper-large-v3"):
        got = _labels({"preset": preset, "task": "inference", "dataset_samples": 1e6})
        assert "runtime tensorrt instead of pytorch" in got, got
        assert "runtime torch-compile instead of pytorch" in got, got
        assert not any("weights instead of" in x for x in got), got
        trt = _labels({"preset": preset, "task": "inference", "runtime": "tensorrt"})
        assert not any(x.startswith("runtime ") for x in trt), trt
        assert not any(x.startswith("int4") for x in trt), trt
    # TensorRT runs BERT in int8: that lever stays
    assert "int8 weights instead of fp16" in _labels(
        {"preset": "bert-base", "task": "inference", "runtime": "tensorrt"}
    )
    # a decoder LLM keeps its weight-format levers
    llm = _labels({"preset": "llama-3-8b", "task": "inference"})
    assert any(x.startswith("int4 weights") for x in llm), llm


def test_a_rented_job_without_spot_is_offered_spot_and_not_otherwise() -> None:
    job = {"preset": "bert-base", "task": "inference"}
    assert SPOT_ALLOWED in _labels(job, constraints={"acquisition": "rent"})
    assert SPOT_ALLOWED not in _labels(job, constraints={"acquisition": "rent", "allow_spot": True})
    assert SPOT_ALLOWED not in _labels(job, constraints={"acquisition": "buy"})


def test_serving_names_the_job_fields_it_does_not_apply() -> None:
    w = s.WorkloadIn.model_validate(
        {"preset": "llama-3.1-8b", "task": "serving", "dataset_samples": 1e7,
         "serving": {"concurrent_requests": 16}}
    )  # fmt: skip
    cons = s.ConstraintsIn.model_validate({"max_job_cost_usd": 50, "max_hours": 10})
    (said,) = [x for x in ask_warnings(w, cons) if "not applied" in x]
    for field in ("dataset_samples", "max_hours", "max_job_cost_usd", "task 'inference'"):
        assert field in said
    (only,) = [x for x in ask_warnings(w, s.ConstraintsIn()) if "not applied" in x]
    assert only.startswith("workload.dataset_samples not applied")
    # an inference job reads them: no such warning
    assert not [x for x in ask_warnings(w, cons, "inference") if "not applied" in x]
