"""r32 audit (issues 21 and 23): with constraints.num_gpus stated, the count is exact whatever
max_gpus says, so an answer's lever for "more GPUs" must name num_gpus. A missed deadline had
advised "(constraints.max_gpus 32)" beside num_gpus 1, and a serving answer nothing could
hold on one GPU said "No configuration within 8 GPUs … allow more than 8 GPUs
(constraints.max_gpus): no card holds the model on 8 GPUs" (8 × H100 hold it)."""

from __future__ import annotations

import re

from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES

GPUS = [A100, H100]
JOB = {"preset": "resnet-50", "task": "training", "batch_size": 1024, "epochs": 90}


def _rank(body: dict) -> s.RecommendationResponse:
    return service.recommend(s.RecommendationRequest.model_validate(body), GPUS, RULES)


def _one_gpu_hours() -> float:
    r = _rank({"workload": JOB, "constraints": {"num_gpus": 1}, "objective": "fastest"})
    took = r.recommendations[0].time_to_finish_h
    assert took is not None
    return took


def _more_gpus_line(constraints: dict) -> str:
    r = _rank({"workload": JOB, "constraints": constraints})
    assert r.deadline is not None and r.deadline.met is False
    return next(w for w in r.deadline.would if w.startswith("more GPUs"))


def test_a_stated_gpu_count_is_the_deadlines_lever_at_the_rows_count() -> None:
    limit = _one_gpu_hours() * 0.4  # one GPU misses it, a few meet it
    line = _more_gpus_line({"num_gpus": 1, "max_hours": limit})
    found = re.search(r"more GPUs: (\d+) × .* \(constraints\.num_gpus (\d+)\)", line)
    assert found is not None, line
    assert found.group(1) == found.group(2) and int(found.group(2)) > 1, line
    assert "max_gpus" not in line
    # the count it names meets the deadline when asked for exactly
    n = int(found.group(2))
    again = _rank({"workload": JOB, "constraints": {"num_gpus": n, "max_hours": limit}})
    assert again.recommendations and all(r.num_gpus == n for r in again.recommendations)


def test_a_gpu_cap_stays_the_deadlines_lever_without_a_stated_count() -> None:
    limit = _one_gpu_hours() * 0.4
    line = _more_gpus_line({"max_gpus": 1, "max_hours": limit})
    assert re.search(r"\(constraints\.max_gpus \d+\)", line), line
    assert "num_gpus" not in line


def test_a_serving_answer_on_an_exact_count_names_that_count_and_its_field() -> None:
    body = {
        "workload": {
            "preset": "llama-3-70b",
            "task": "serving",
            "serving": {"concurrent_requests": 4},
            "quantization": "none",
        },
        "constraints": {"num_gpus": 1},
    }
    r = _rank(body)  # 141 GB of bf16 weights: no 80 GB card holds one replica
    assert not r.recommendations and r.serving is not None and r.serving.met is False
    assert "on exactly 1 GPU meets" in r.serving.message
    assert "within 8 GPUs" not in r.serving.message
    said = " ".join(r.serving.relax)
    assert "any GPU count instead of exactly 1 (constraints.num_gpus)" in said, said
    assert "max_gpus" not in said
    # without a stated count, the cap is still the lever
    body["constraints"] = {"max_gpus": 1}
    capped = _rank(body)
    assert capped.serving is not None
    assert "within 1 GPU meets" in capped.serving.message
    assert any("(constraints.max_gpus)" in t for t in capped.serving.relax), capped.serving.relax
