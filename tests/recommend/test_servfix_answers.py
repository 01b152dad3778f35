"""Serving answers as the rev1 review asked them (items 1-5): the deploy's --max-num-seqs is the
one the memory plan reserved for, a card left out by max_gpus says so in its reason and the
advice, the workspace names vLLM's reserve, a publisher's own FP8 checkpoint is said as
released, and a 16-bit row on a card with native FP8 says what fp8 weights would free."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from app.catalog.loader import read_gpu_specs
from app.domain.gpu import GpuSpec
from app.recommend import deploy, quality, service
from app.recommend import schemas as s
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules

KURTIC = "arxiv.org/abs/2411.02355"


@cache
def _gpus(*slugs: str) -> list[GpuSpec]:
    by = {g.slug: g for g in read_gpu_specs(DATA_DIR)}
    return [by[x] for x in slugs]


def _ask(body: dict[str, Any], *slugs: str) -> s.RecommendationResponse:
    request = s.RecommendationRequest.model_validate(body)
    return service.recommend(request, _gpus(*slugs), load_rules(DATA_DIR))


def _serving(preset: str, load: dict[str, Any], **workload: Any) -> dict[str, Any]:
    return {"preset": preset, "task": "serving", "serving": load, **workload}


NO_TARGETS = {"ttft_ms_target": 3_600_000, "itl_ms_target": 3_600_000}


def test_gpt_oss_on_one_h100_deploys_the_max_num_seqs_its_memory_plan_holds() -> None:
    # the sampler had been sized for 1,024 sequences (8.0 GB) while the plan ran 21
    load = {"concurrent_requests": 64, "prompt_tokens": 4000, "output_tokens": 1000, **NO_TARGETS}
    body = {
        "workload": _serving("gpt-oss-120b", load, runtime="vllm"),
        "constraints": {"acquisition": "rent", "num_gpus": 1},
    }
    row = _ask(body, "h100-sxm").recommendations[0]
    sv = row.serving
    assert sv is not None
    assert sv.max_concurrency >= 60  # the 64 users, near enough, not 21
    assert row.memory.breakdown["workspace"] < 1.0  # ~0.5 GB, not 8.0
    out = deploy.deploy_for(row, "openai/gpt-oss-120b", 10000)
    assert out is not None and f"--max-num-seqs {sv.max_concurrency} " in out.command
    # the workspace is named, at the same count
    note = next(n for n in row.memory.notes if n.startswith("workspace:"))
    assert f"--max-num-seqs {sv.max_concurrency}" in note and "sampler" in note


def test_deepseek_v3_on_h100s_is_told_to_raise_max_gpus() -> None:
    load = {"concurrent_requests": 64, "prompt_tokens": 2000, "output_tokens": 500,
            "ttft_ms_target": 2000, "itl_ms_target": 100}  # fmt: skip
    body = {
        "workload": _serving("deepseek-v3", load, runtime="sglang"),
        "constraints": {"acquisition": "rent"},
        "objective": "best_value",
    }
    answer = _ask(body, "h100-sxm", "b200")
    h100 = next(e for e in answer.excluded if e.slug == "h100-sxm")
    assert h100.code == "filtered_out"
    assert h100.reason.startswith("needs 16 GPUs per replica")
    assert "raise constraints.max_gpus to 16" in h100.reason
    # the B200 row spans the 8 GPUs allowed: the advice names the lever
    assert answer.recommendations and answer.recommendations[0].num_gpus == 8
    assert any(
        a.startswith("Raise constraints.max_gpus from 8 to 16") and "H100 SXM" in a
        for a in answer.advice
    ), answer.advice
    # with nothing else to show, the summary's relax says it too
    alone = _ask(body, "h100-sxm")
    assert alone.serving is not None and not alone.recommendations
    assert any("to 16" in t and "H100 SXM" in t for t in alone.serving.relax), alone.serving.relax


def test_qwen3_fp8_from_the_publisher_is_said_as_released() -> None:
    load = {"concurrent_requests": 20, "prompt_tokens": 32000, "output_tokens": 500,
            "ttft_ms_target": 5000, "itl_ms_target": 60}  # fmt: skip
    body = {
        "workload": _serving("qwen3-32b", load, precision="fp8"),
        "constraints": {"acquisition": "rent"},
    }
    answer = _ask(body, "h100-sxm", "h200-sxm")
    for row in answer.recommendations:
        said = [w for w in row.warnings if w.startswith("quality: fp8 weights")]
        assert said and all(w.endswith(quality.PUBLISHER_OWN) for w in said), said
        assert all("publisher's own FP8 checkpoint (Qwen/Qwen3-32B-FP8)" in w for w in said)
        assert not any(KURTIC in w for w in row.warnings)
    # NVIDIA's export of a Meta model is a third party's: its measured cost stays
    assert deploy.publisher_fp8("llama-3.1-70b") is None
    assert deploy.publisher_fp8("qwen3-32b") == "Qwen/Qwen3-32B-FP8"


def _llama70_on_b200(**workload: Any) -> s.RecommendationResponse:
    load = {"concurrent_requests": 50, "prompt_tokens": 16000, "output_tokens": 512,
            "ttft_ms_target": 3000, "itl_ms_target": 50}  # fmt: skip
    body = {
        "workload": _serving("llama-3.1-70b", load, runtime="vllm", **workload),
        "constraints": {"acquisition": "rent"},
        "objective": "best_value",
    }
    return _ask(body, "b200", "a100-sxm4-80gb")


def test_a_16_bit_row_on_a_native_fp8_card_says_what_fp8_weights_free() -> None:
    answer = _llama70_on_b200()
    b200 = next(r for r in answer.recommendations if r.gpu.slug == "b200")
    assert b200.serving is not None and b200.serving.weight_precision == "bf16"  # kept (issue 23)
    tip = next(t for t in b200.tips if t.startswith("FP8 weights"))
    assert KURTIC in tip and "workload.precision fp8" in tip
    freed = re.search(r"would free ([\d.]+) GiB per GPU \(([\d.]+) → ([\d.]+) GiB", tip)
    assert freed is not None
    free, w16, w8 = (float(x) for x in freed.groups())
    assert abs(free - (w16 - w8)) < 0.15 and 0.45 < w8 / w16 < 0.55  # about half
    if answer.recommendations[0].gpu.slug == "b200":
        assert any("fp8" in a.lower() and "free" in a for a in answer.advice), answer.advice
    # an A100 has no FP8 tensor cores: no such tip
    for row in answer.recommendations:
        if row.gpu.slug == "a100-sxm4-80gb":
            assert not any(t.startswith("FP8 weights") for t in row.tips)


def test_a_pinned_precision_gets_no_fp8_tip() -> None:
    answer = _llama70_on_b200(precision="bf16")
    for row in answer.recommendations:
        assert not any(t.startswith("FP8 weights") for t in row.tips)
    assert not any("FP8 weights" in a for a in answer.advice)
