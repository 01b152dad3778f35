"""Rows carry the band app/domain/bands.py gives them: widened, and said why, where the engine
extrapolates beyond its calibration sets."""

from __future__ import annotations

from app.domain import bands
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.paths import shipped_path
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, RTX4090, RULES

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
