"""A pick that may run out of memory is closed with that, before what its price leaves out
(issue 23, the fortieth session's expert audit): FLUX.1 [dev] in fp8 bought for $2,500 picked
an RTX 4090 at 0.39 GiB spare of 23.7 GiB, and its verdict's caveat was the card's
electricity. That pick no longer fits (the decode's held residual, r43 "mem"); the tight case
is now five 1024² SDXL images a call on the same card (24.6 of 25.4 GB)."""

from __future__ import annotations

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules
from tests.support import summary_of

GPUS = {g.slug: g for g in read_gpu_specs(DATA_DIR)}
RULES = load_rules(DATA_DIR)


def _answer(batch: int) -> s.RecommendationResponse:
    req = s.RecommendationRequest.model_validate(
        {
            "workload": {
                "preset": "sdxl", "task": "inference", "batch_size": batch,
            },
            "constraints": {"acquisition": "buy", "num_gpus": 1},
            "objective": "fastest",
            "limit": 1,
        }
    )  # fmt: skip
    return service.recommend(req, [GPUS["rtx-4090"]], RULES)


def test_a_tight_inference_pick_is_closed_with_its_memory() -> None:
    answer = _answer(5)
    (top,) = answer.recommendations
    mem = top.memory
    # what the case rests on: inside the engine's margin, and a price-scope line beside it
    assert mem.headroom_gb is not None and mem.available_gb is not None
    assert 0 < mem.headroom_gb < ev.ROOM * mem.available_gb
    assert any(w.startswith("the price ") for w in top.warnings)
    tight = [w for w in top.warnings if w.startswith(ev.TIGHT_FIT)]
    assert len(tight) == 1 and "a display on the card" in tight[0]
    caveat = summary_of(answer).sentence.split("Caveat: ", 1)[1]
    assert caveat.startswith(ev.TIGHT_FIT + ":")
