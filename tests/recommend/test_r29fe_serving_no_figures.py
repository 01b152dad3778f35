"""A card the catalog gives no compute figures (the M3 Ultra 512 GB: no sourced TFLOPS) is left
out of a serving answer with code no_figures, as every other task codes it: serving had coded
it does_not_fit beside the reason "no compute figures for this GPU"."""

from __future__ import annotations

from dataclasses import replace

from app.domain import serving as sv
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import M2, RULES

# an Apple chip with room for the model and no FLOP figure at any precision
BARE = replace(M2, slug="apple-bare", name="Apple bare", fp32_tflops=None, memory_gb=512)


def test_a_card_without_figures_is_no_figures_in_serving() -> None:
    body = {"preset": "llama-3-8b", "task": "serving", "serving": {"concurrent_requests": 4}}
    r = service.recommend(s.RecommendationRequest.model_validate({"workload": body}), [M2, BARE],
                          RULES)  # fmt: skip
    out = {x.slug: x for x in r.excluded}
    assert out["apple-bare"].code == "no_figures"
    assert out["apple-bare"].reason == sv.NO_FIGURES
    # the card with figures is served: the code is the figures', not the chip's
    assert [x.gpu.slug for x in r.recommendations] == ["apple-m2-max"]
