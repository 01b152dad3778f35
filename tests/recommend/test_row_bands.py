"""Rows carry the band app/domain/bands.py gives them: widened, and said why, where the engine
extrapolates beyond its calibration sets."""

from __future__ import annotations

import pytest

from app.domain import bands
from app.domain import serving as sv
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.paths import shipped_path
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, LLAMA3_8B, RTX4090, RULES

GPUS = [A100, H100, RTX4090]


def _rows(**workload: object) -> list[s.Recommendation]:
    req = s.RecommendationRequest.model_validate(
        {"workload": {"task": "inference", **workload}, "objective": "fastest"}
    )
    return service.recommend(req, GPUS, RULES).recommendations


def test_moe_and_4bit_rows_name_their_widenings() -> None:
    rows = _rows(preset="mixtral-8x7b", quantization="awq", runtime="vllm")
    assert rows
    moe = bands.estimated(bands.MOE, "moe", load_efficiency(shipped_path("data")))
    for r in rows:
        u = r.uncertainty
        assert bands.MOE.reason in u.basis and bands.FOUR_BIT.reason in u.basis
        assert bands.UNMEASURED_RUNTIME.reason in u.basis
        # widened past the MoE term alone: the decode band and the other terms add to it
        assert u.factor_low < moe.low <= 1 <= moe.high < u.factor_high


def test_gguf_on_llama_cpp_is_what_decode_measured() -> None:
    rows = _rows(preset="llama-3-8b", quantization="q4_0", runtime="llama.cpp")
    assert rows
    for r in rows:
        assert bands.FOUR_BIT.reason not in r.uncertainty.basis
        assert bands.UNMEASURED_RUNTIME.reason not in r.uncertainty.basis


def test_llm_rows_band_their_time_to_first_token_with_the_prefill_band() -> None:
    """Each LLM inference row carries a band on its time to first token: the prefill band
    (calibrated, shipped data) inverted, so its factors are 1 ÷ the rate's; other rows none."""
    rows = _rows(preset="llama-3-8b")
    assert rows
    for r in rows:
        t, tb = r.time_to_first_token_ms, r.uncertainty.time_to_first_token_ms
        assert t is not None and tb is not None
        assert tb.low == pytest.approx(t * tb.factor_low) and tb.high == pytest.approx(
            t * tb.factor_high
        )
        assert tb.factor_low < 1 < tb.factor_high
        assert "published prefill results" in tb.basis
        assert "published decode results" in r.uncertainty.basis
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "resnet-50", "task": "inference"}, "objective": "fastest"}
    )
    for r in service.recommend(req, GPUS, RULES).recommendations:
        assert r.uncertainty.time_to_first_token_ms is None


def test_serving_rows_band_their_time_to_first_token_with_the_prefill_band() -> None:
    """A serving row's first-token band is serving_band's inputs in the prefill regime,
    inverted, and says its load wait is not calibrated."""
    from app.recommend.serving import SERVING_TTFT_NOTE, serving_first_token_band

    rows = _rows_of(
        {"preset": "llama-3-8b", "task": "serving", "serving": {"concurrent_requests": 8}}
    )
    assert rows
    table = load_efficiency(shipped_path("data"))
    for r in rows:
        tb, t = r.uncertainty.time_to_first_token_ms, r.time_to_first_token_ms
        assert tb is not None and t is not None
        gpu = next(g for g in GPUS if g.slug == r.gpu.slug)
        lo, hi, basis = serving_first_token_band(gpu, *_shape(r, gpu), table, LLAMA3_8B)
        assert (tb.low, tb.high) == pytest.approx(bands.time_band(t, lo, hi))
        assert tb.basis == basis and basis.endswith(SERVING_TTFT_NOTE)
        assert "published prefill results" in basis


def _shape(r: s.Recommendation, gpu: GpuSpec) -> tuple[sv.ServingConfig, sv.RuntimeProfile]:
    """A serving row's shape and runtime as the band reads them."""
    o = r.serving
    assert o is not None
    table = load_efficiency(shipped_path("data"))
    decode = table.profile(gpu, "cuda", o.runtime, "bf16", "decode")
    cfg = sv.ServingConfig(
        o.gpus_per_replica, o.replicas, o.weight_precision, o.kv_cache_precision, o.runtime
    )
    return cfg, sv.runtime_profile(table, o.runtime, decode)


def _rows_of(workload: dict[str, object]) -> list[s.Recommendation]:
    req = s.RecommendationRequest.model_validate({"workload": workload, "objective": "fastest"})
    return service.recommend(req, GPUS, RULES).recommendations


def test_a_layer_split_names_its_extrapolation_and_tensor_parallel_does_not() -> None:
    # llama.cpp splits a 70B model's layers over two RTX 4090s; the decode and prefill sets'
    # multi-GPU runs are tensor parallel (data/efficiency.yaml multi_gpu_spans), so the split
    # is an extrapolation the row's basis names (its term, calibrated, may be x1)
    split = _rows(preset="llama-3-70b", quantization="q4_0", runtime="llama.cpp")
    assert any(r.num_gpus > 1 for r in split)
    for r in split:
        named = bands.MULTI_GPU_SPAN.reason in r.uncertainty.basis
        assert named == (r.num_gpus > 1)
        ttft = r.uncertainty.time_to_first_token_ms
        assert ttft is not None and (bands.MULTI_GPU_SPAN.reason in ttft.basis) == (r.num_gpus > 1)
    tensor = _rows(preset="llama-3-70b", runtime="vllm")
    assert any(r.num_gpus > 1 for r in tensor)
    assert all(bands.MULTI_GPU_SPAN.reason not in r.uncertainty.basis for r in tensor)


def test_fine_tuning_rows_take_the_fine_tuning_band() -> None:
    for peft in ("lora", "none"):
        req = s.RecommendationRequest.model_validate(
            {"workload": {"task": "fine-tuning", "preset": "llama-3-8b", "peft": peft},
             "objective": "fastest"}
        )  # fmt: skip
        rows = service.recommend(req, GPUS, RULES).recommendations
        assert rows
        for r in rows:
            assert "published train-llm fine-tuning results" in r.uncertainty.basis


def test_a_layer_split_serving_replica_names_its_extrapolation() -> None:
    # the answer wires each shape's replica into both its bands (rank.serving_band_inputs)
    rows = _rows_of(
        {"preset": "llama-3-70b", "task": "serving", "runtime": "llama.cpp",
         "serving": {"concurrent_requests": 4}}
    )  # fmt: skip
    assert any(r.serving is not None and r.serving.gpus_per_replica > 1 for r in rows)
    for r in rows:
        assert r.serving is not None and r.uncertainty.time_to_first_token_ms is not None
        split = r.serving.gpus_per_replica > 1 and r.serving.multi_gpu == "layers"
        assert (bands.MULTI_GPU_SPAN.reason in r.uncertainty.basis) == split
        assert (bands.MULTI_GPU_SPAN.reason in r.uncertainty.time_to_first_token_ms.basis) == split
