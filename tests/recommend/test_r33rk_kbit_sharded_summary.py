"""The verdict's "only if the embedding and LM head stay 16-bit" is for a QLoRA pick on one
card (or DDP copies): under FSDP-QLoRA no recipe runs prepare_model_for_kbit_training (TRL skips
it for a sharded 4-bit model, Answer.AI's fsdp_qlora never calls it), so a pick whose states are
sharded over its GPUs says nothing of the cast (session 33's 4 × RTX 3080 walk)."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import RTX4090, RULES
from tests.support import summary_of


def _qlora() -> s.RecommendationResponse:
    body = {
        "workload": {"preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "qlora"},
        "constraints": {"max_gpus": 1},
    }
    r = service.recommend(s.RecommendationRequest.model_validate(body), [RTX4090], RULES)
    assert r.recommendations
    return r


def _sentence(r: s.RecommendationResponse, sharded_over: int) -> str:
    top = r.recommendations[0]
    # 0.87 GB spare where the cast takes 2.1 GB
    top.memory = top.memory.model_copy(update={"headroom_gb": 0.87, "num_gpus": sharded_over})
    return summary_of(r).sentence


def test_sharded_qlora_pick_says_nothing_of_the_cast() -> None:
    assert "prepare_model_for_kbit_training" in _sentence(_qlora(), 1)
    assert "prepare_model_for_kbit_training" not in _sentence(_qlora(), 4)
