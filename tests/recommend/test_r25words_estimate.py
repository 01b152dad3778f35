"""One named configuration (POST /api/v1/estimate) ranks nothing, so its explanation says no
rank: "Ranked first by fastest." had read as a contest it won (review 25, item 3). Needs
service.estimate to pass rank.UNRANKED as the objective its row is explained under."""

from __future__ import annotations

from app.catalog.loader import read_gpu_specs
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules


def test_an_estimate_of_one_configuration_says_no_rank() -> None:
    gpu = next(g for g in read_gpu_specs(DATA_DIR) if g.slug == "h100-sxm")
    req = s.EstimateRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference"}, "gpu": "h100-sxm"}
    )
    out = service.estimate(req, gpu, load_rules(DATA_DIR))
    assert out.result is not None
    text = " ".join(out.result.explanation)
    assert text.startswith("Fits on 1× ")  # the row's own words stay
    assert "Ranked" not in text and "listed after" not in text
