"""A card that misses by a little is told what would close it (issue 23, an empty answer
explains itself): QLoRA of Llama 3.1 8B needs 10.9 GiB at micro-batch 1 with checkpointing
and 8-bit AdamW, which the engine already plans, and an 8 GB card had been told nothing,
since no change the what-if list tried fitted it. The memory changes people make are tried
where memory keeps the job off the cards, each re-run through the engine: a shorter
sequence, a chunked cross-entropy, a lower LoRA rank, a paged optimizer, and all at once."""

from __future__ import annotations

from typing import Any

from app.domain.units import gib
from app.recommend import schemas as s
from app.recommend import service
from tests.support import summary_of

QLORA = {"preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "qlora"}
# the words the answer uses (app/recommend/misfit.py), written out: the old code had none
ALL_AT_ONCE = "every memory change at once"
ANYWHERE = "with every limit lifted (the cheapest first)"
ALL_512 = f"{ALL_AT_ONCE} (sequence 512, cross-entropy in 8 chunks, LoRA rank 8)"
MEMORY_CHANGES = (
    "sequence 1024 ",
    "cross-entropy in ",
    "LoRA rank ",
    "paged optimizer",
    ALL_AT_ONCE,
)


def _estimate(catalog: Any, slug: str, **workload: Any) -> s.EstimateResponse:
    req = s.EstimateRequest.model_validate({"gpu": slug, "workload": QLORA | workload})
    gpu = next(g for g in catalog[0] if g.slug == slug)
    return service.estimate(req, gpu, catalog[2])


def _recommend(catalog: Any, constraints: dict[str, Any], **extra: Any) -> s.RecommendationResponse:
    body = {"workload": QLORA, "constraints": constraints, "limit": 3, **extra}
    req = s.RecommendationRequest.model_validate(body)
    return service.recommend(req, list(catalog[0]), catalog[2], offers=catalog[1])


def test_an_8_gb_laptop_card_is_told_the_changes_that_fit_it(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "rtx-4060-laptop")
    assert est.result is None and est.excluded is not None
    assert est.excluded.code == "does_not_fit"
    # the longest sequence at which every memory change together fits, and only that one
    # the engine's own answer for that setting, and for the sequence before it
    change = {"seq_len": 512, "loss_chunks": 8, "lora_rank": 8}
    fits = _estimate(shipped_catalog, "rtx-4060-laptop", **change).result
    assert fits is not None and fits.memory.available_gb
    close = f"{gib(fits.memory.required_gb)} GiB of {gib(fits.memory.available_gb)} GiB usable"
    assert est.advice == [
        f"Fits with {ALL_512}: NVIDIA GeForce RTX 4060 Laptop GPU holds it ({close})."
    ]
    longer = _estimate(shipped_catalog, "rtx-4060-laptop", **(change | {"seq_len": 1024}))
    assert longer.result is None


def test_an_empty_answer_names_the_memory_changes_and_what_each_needs(shipped_catalog) -> None:
    # a student renting one GPU for at most $0.08 an hour: only 8 GB cards are that cheap
    answer = _recommend(shipped_catalog, {"max_hourly_usd": 0.08, "acquisition": "rent",
                                          "max_gpus": 1})  # fmt: skip
    assert not answer.recommendations and answer.empty is not None
    first = answer.empty.nearest[0]
    assert first.change == ALL_512 and first.can_run >= 1 and first.top_name
    tried = {v.change: v for v in answer.what_if or []}
    for label in ("sequence 1024 instead of 2048", "cross-entropy in 8 chunks",
                  "LoRA rank 8 instead of 16", "paged optimizer", ALL_512):  # fmt: skip
        v = tried[label]
        # each figure the engine's, each less than the job as asked
        assert v.required_gb < answer.memory.required_gb
        assert f"{label}, {gib(v.required_gb)} GiB" in answer.empty.message
    # a longer combined sequence was tried and did not fit; a shorter one is not offered
    assert not any(ALL_AT_ONCE in c and c != ALL_512 for c in tried)
    need = f"Memory: as asked it needs {gib(answer.memory.required_gb)} GiB on one GPU"
    assert need in answer.empty.message
    assert "micro-batch 1" in answer.empty.message.split(need)[1]  # already planned, said
    # the page shows the verdict: the same words, the combined change named as several
    verdict = summary_of(answer).sentence
    assert need in verdict and "could with these changes together: " + ALL_512 in verdict


def test_where_even_the_least_tried_fits_nothing_the_cheapest_anywhere_is_named(
    shipped_catalog,
) -> None:
    answer = _recommend(shipped_catalog, {"max_purchase_usd": 250, "acquisition": "buy",
                                          "max_gpus": 1, "purchase_basis": "new"})  # fmt: skip
    assert answer.empty is not None
    combined = [v for v in answer.what_if or [] if v.change.startswith(ALL_AT_ONCE)]
    within = [v for v in combined if ANYWHERE not in v.change]
    anywhere = [v for v in combined if ANYWHERE in v.change]
    assert len(within) == 1 and within[0].can_run == 0  # the shortest tried, an eighth
    assert within[0].change.startswith(f"{ALL_AT_ONCE} (sequence 256, ")
    assert len(anywhere) == 1 and anywhere[0].can_run and anywhere[0].top_name
    least = gib(within[0].required_gb)
    said = f"Even at {least} GiB no card within these limits runs it; the cheapest that does"
    assert said in answer.empty.message and str(anywhere[0].top_name) in answer.empty.message
    # lifting every limit strays furthest: never the nearest change
    assert answer.empty.nearest[0].change != anywhere[0].change


def test_an_answer_with_rows_tries_no_memory_change(shipped_catalog) -> None:
    # each memory change is a re-rank of the catalog: only where memory keeps the job off
    answer = _recommend(shipped_catalog, {"segments": ["laptop"]}, what_if=True)
    assert answer.recommendations
    labels = [v.change for v in answer.what_if or []]
    assert labels and not any(c.startswith(MEMORY_CHANGES) for c in labels)
