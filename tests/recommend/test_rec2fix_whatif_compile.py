"""A training job on eager PyTorch is offered torch.compile as a what-if, as inference is: the
engine prices a compiled training step (ResNet-50 on an A100 1.7× eager's), and the training
list never named it."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service
from app.recommend.whatif import variations
from tests.domain.fixtures import A100, RULES

COMPILE = "runtime torch-compile instead of pytorch"


def _labels(workload: dict[str, Any], **kw: Any) -> list[str]:
    req = s.RecommendationRequest.model_validate({"workload": workload, **kw})
    work, _ = service._resolve(req, service.DATA_DIR)
    return [label for label, _ in variations(work, req)]


def test_eager_training_is_offered_torch_compile() -> None:
    for job in (
        {"preset": "resnet-50", "task": "training"},
        {"preset": "vit-b-16", "task": "training"},
        {"preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "lora"},
    ):
        assert COMPILE in _labels(job), job


def test_not_offered_where_the_job_is_compiled_already_or_not_pytorch() -> None:
    compiled = {"preset": "resnet-50", "task": "training", "runtime": "torch-compile"}
    assert COMPILE not in _labels(compiled)
    tf = _labels(
        {"preset": "resnet-50", "task": "training"}, constraints={"framework": "tensorflow"}
    )
    assert COMPILE not in tf


def test_the_compiled_training_what_if_is_a_priced_re_rank() -> None:
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "resnet-50", "task": "training", "precision": "fp16"},
         "constraints": {"max_gpus": 1}, "what_if": True}
    )  # fmt: skip
    r = service.recommend(req, [A100], RULES)
    eager = r.recommendations[0].throughput.value
    v = next(w for w in r.what_if or [] if w.change == COMPILE)
    assert v.throughput is not None and v.throughput > eager  # NCHW transforms and fusions gone
