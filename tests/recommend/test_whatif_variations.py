"""The what-ifs tried for a job are changes that can move its answer."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend.whatif import variations
from app.recommend.workloads import resolve_workload


def _labels(workload: dict[str, Any]) -> list[str]:
    req = s.RecommendationRequest.model_validate({"workload": workload})
    work, _ = resolve_workload(req.workload)
    return [label for label, _ in variations(work, req)]


def test_an_eager_image_pipeline_tries_the_compiled_runtimes_not_weight_formats():
    # SDXL under a 1 s latency target: eager PyTorch cannot, TensorRT can; the "int8 / int4
    # weights" variations changed nothing an eager diffusion or CNN row could show
    for preset in ("sdxl", "resnet-50"):
        labels = _labels({"preset": preset, "task": "inference"})
        assert "runtime tensorrt instead of pytorch" in labels, labels
        assert "runtime torch-compile instead of pytorch" in labels
        assert not any("int4" in x or "int8" in x for x in labels), labels
    # under TensorRT, 8-bit is a real lever for a CNN; 4-bit never is
    trt = _labels({"preset": "resnet-50", "task": "inference", "runtime": "tensorrt"})
    assert "int8 weights instead of fp16" in trt and not any("int4" in x for x in trt)
    assert not any(x.startswith("runtime ") for x in trt)
    # a language model keeps its own levers
    llm = _labels({"preset": "llama-3-8b", "task": "inference"})
    assert "runtime vllm instead of transformers" in llm and "int4 weights instead of bf16" in llm


def test_the_nearest_configuration_without_a_deadline_says_how_long_it_takes():
    # "no deadline … best 32 × L40S ($13.76/h)" had read as an answer; it takes 2.9 years
    from app.recommend.whatif import DEADLINE_LIFTED, best_config

    lifted = s.NearestOut(
        change=DEADLINE_LIFTED, top_slug="l40s", top_name="NVIDIA L40S", num_gpus=32,
        can_run=3, hourly_usd=13.76, time_to_finish_h=25_500.0,
    )  # fmt: skip
    said = best_config(lifted, "rent")
    assert said == "32 × NVIDIA L40S ($13.76/h to rent), finishing in 2.91 years"
    other = lifted.model_copy(update={"change": "up to 64 GPUs instead of 8"})
    assert "finishing" not in best_config(other, "rent")  # its deadline still holds


def test_an_adapter_job_is_not_offered_fp8_which_changes_nothing_for_it():
    """A QLoRA base is NF4 whatever the precision and PEFT runs no fp8 GEMMs: the lever
    re-ranked the same answer with the same figures."""
    for peft in ("qlora", "lora"):
        labels = _labels({"preset": "llama-3.1-8b", "task": "fine-tuning", "peft": peft})
        assert not [x for x in labels if x.startswith("fp8 instead")], peft
    full = _labels({"preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "none"})
    assert "fp8 instead of bf16" in full
