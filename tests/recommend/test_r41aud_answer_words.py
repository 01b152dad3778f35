"""r41 expert audit, the answers' words: a TensorFlow or ONNX Runtime CNN row was told to call
PyTorch's model.to(memory_format=torch.channels_last); the 4-bit tip of an LLM inference row
named no quality cost; and FLUX.1 [dev] bought under $2,000 ranked a used Quadro RTX 8000 at
33 s an image with nothing at the top saying that two dozen cards left out as too small — every
RTX 3090, 4090 and 5090 — hold it with model CPU offload, as people run it at home."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service, whatif
from tests.support import recommend_with


def _tips(catalog: Any, slug: str, workload: dict[str, Any], **cons: Any) -> list[str]:
    req = s.EstimateRequest.model_validate({"gpu": slug, "workload": workload, "constraints": cons})
    gpu = next(g for g in catalog[0] if g.slug == slug)
    out = service.estimate(req, gpu, catalog[2])
    assert out.result is not None
    return list(out.result.tips)


def _layout(tips: list[str]) -> str:
    (tip,) = [t for t in tips if "cuDNN transposes" in t]
    return tip


RESNET = {"preset": "resnet-50", "task": "inference", "batch_size": 64, "precision": "fp16"}


def test_each_nchw_runtime_is_told_its_own_switch(shipped_catalog: Any) -> None:
    eager = _layout(_tips(shipped_catalog, "rtx-4090", RESNET))
    assert "torch.channels_last" in eager
    tf = _layout(_tips(shipped_catalog, "rtx-4090", RESNET, framework="tensorflow"))
    assert "torch" not in tf and "PyTorch" not in tf
    assert "data_format='channels_last'" in tf
    ort = _layout(_tips(shipped_catalog, "rtx-4090", {**RESNET, "runtime": "onnxruntime"}))
    assert "torch" not in ort and "prefer_nhwc=1" in ort


def test_the_4_bit_tip_names_its_quality_cost_and_source(shipped_catalog: Any) -> None:
    llm = {"preset": "llama-3.1-8b", "task": "inference", "batch_size": 1}
    vllm = _tips(shipped_catalog, "h100-sxm", {**llm, "runtime": "vllm"})
    (tip,) = [t for t in vllm if t.startswith("4-bit weights (")]
    assert "Quality, on the source's own model: INT4 weight-only" in tip
    assert "https://arxiv.org/abs/2411.02355" in tip
    gguf = _tips(shipped_catalog, "rtx-4090", {**llm, "runtime": "llama.cpp", "precision": "fp16"})
    (tip,) = [t for t in gguf if t.startswith("4-bit weights (")]
    assert "GGUF Q4_K_M raised Llama-3-8B's perplexity" in tip and "quantize.cpp" in tip


def _recommend(catalog: Any, body: dict[str, Any]) -> s.RecommendationResponse:
    return recommend_with(catalog, body)


def test_cards_an_unpriced_saver_holds_are_said_at_the_top(shipped_catalog: Any) -> None:
    flux = {
        "workload": {"preset": "flux-1-dev", "task": "inference", "batch_size": 1},
        "constraints": {"acquisition": "buy", "max_purchase_usd": 2000},
        "objective": "best_value",
    }
    answer = _recommend(shipped_catalog, flux)
    held = [x for x in answer.excluded if "; fits with model CPU offload" in x.reason]
    assert answer.counts is not None
    assert answer.recommendations and len(held) > answer.counts.ranked
    assert any(x.slug == "rtx-4090" for x in held)
    (said,) = [a for a in answer.advice if "left out as too small" in a]
    counted = [x for x in answer.excluded if "; fits with " in x.reason]
    assert said.startswith(f"{len(counted)} GPUs left out as too small (")
    assert "memory saver the ranking does not price (model CPU offload" in said


def test_the_line_is_not_said_where_the_ranking_holds_more() -> None:
    one = s.Excluded(
        slug="rtx-4090-laptop",
        name="NVIDIA GeForce RTX 4090 Laptop GPU",
        code="does_not_fit",
        reason="needs 20 GiB; fits with FSDP CPU offload of the parameters (a peak of 9 GiB)",
    )
    assert whatif.unranked_savers_advice([one], ranked=23) == []
    (said,) = whatif.unranked_savers_advice([one], ranked=0)
    assert said.startswith("1 GPU left out as too small (NVIDIA GeForce RTX 4090 Laptop GPU) holds")
    assert "(FSDP CPU offload of the parameters): its reason" in said
