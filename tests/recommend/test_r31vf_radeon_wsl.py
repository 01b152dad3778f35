"""r31 review (vf): a student's $800 LoRA answer picked 2 × RX 9060 XT (FSDP) and told a
Windows reader that ROCm PyTorch "through WSL2 ... is supported"; AMD's mGPU guide says WSL has
no multi-GPU support. A multi-GPU Radeon row's Windows note now says so; one card's does not."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service


def _rows(catalog: Any) -> list[s.Recommendation]:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(
        {
            "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "lora"},
            "constraints": {"acquisition": "buy", "max_purchase_usd": 800, "vendors": ["amd"]},
            "objective": "best_value",
            "limit": 20,
        }
    )
    return service.recommend(req, gpus, rules, offers=offers).recommendations


def test_a_multi_gpu_radeon_row_says_wsl_runs_one_card(shipped_catalog: Any) -> None:
    rows = [
        r for r in _rows(shipped_catalog) if r.backend == "rocm" and r.gpu.segment == "consumer"
    ]
    several = [r for r in rows if r.num_gpus > 1]
    one = [r for r in rows if r.num_gpus == 1]
    assert several and one  # the premise: the answer has both
    for r in several:
        note = next(t for t in r.tips if t.startswith("If you run Windows"))
        assert "WSL2 has no multi-GPU support" in note, note
    for r in one:
        note = next(t for t in r.tips if t.startswith("If you run Windows"))
        assert "multi-GPU" not in note, note
