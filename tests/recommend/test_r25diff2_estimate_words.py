"""A Windows single-card user's estimate defects: SDXL refused on an 8 GB card without a word
that model CPU offload fits it, and an estimate that picked eight cards by itself saying so
only deep in its tips."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service

SDXL = {"preset": "sdxl", "task": "inference"}
QLORA = {
    "preset": "llama-3.1-8b",
    "task": "fine-tuning",
    "peft": "qlora",
    "seq_len": 1024,
    "batch_size": 8,
}


def _estimate(catalog: Any, slug: str, **body: Any) -> s.EstimateResponse:
    req = s.EstimateRequest.model_validate({"gpu": slug, **body})
    gpu = next(g for g in catalog[0] if g.slug == slug)
    return service.estimate(req, gpu, catalog[2])


def test_sdxl_on_an_8_gb_card_names_model_cpu_offload(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "rtx-4060", workload=SDXL)
    # the default pipeline keeps every component on the GPU: still refused
    assert est.result is None and est.excluded is not None
    assert est.excluded.code == "does_not_fit"
    assert "fits with model CPU offload" in est.excluded.reason
    (said,) = [a for a in est.advice if "enable_model_cpu_offload()" in a]
    assert "--medvram" in said and "not priced" in said
    # its cost: ~7.0e9 bytes a call over the card's PCIe 4.0 x8 link
    assert "PCIe 4.0 x8" in said and " s over " in said
    assert "enable_sequential_cpu_offload()" in said


def test_offload_is_not_offered_where_it_cannot_help(shipped_catalog) -> None:
    # several GPUs asked: diffusers' model offload runs on one
    two = _estimate(shipped_catalog, "rtx-4060", workload=SDXL, num_gpus=2)
    assert two.excluded is not None and two.advice == []
    assert "offload" not in two.excluded.reason
    # a card that holds the default pipeline says nothing of it
    held = _estimate(shipped_catalog, "rtx-4090", workload=SDXL)
    assert held.result is not None
    assert not any("offload" in a for a in held.advice)


def test_an_estimate_that_picks_several_cards_says_so_at_the_top(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "rtx-4060", workload=QLORA)
    assert est.result is not None and est.result.num_gpus > 1
    n = est.result.num_gpus
    (said,) = [w for w in est.warnings if "give num_gpus" in w]
    assert said.startswith("one NVIDIA GeForce RTX 4060 cannot hold it (needs ")
    assert f"estimated on the fewest that do, {n}" in said
    # one card's own refusal, as num_gpus 1 gives it
    one = _estimate(shipped_catalog, "rtx-4060", workload=QLORA, num_gpus=1)
    assert one.excluded is not None and one.excluded.reason in said


def test_a_stated_count_needs_no_such_warning(shipped_catalog) -> None:
    est = _estimate(shipped_catalog, "rtx-4060", workload=QLORA, num_gpus=8)
    assert est.result is not None
    assert not any("give num_gpus" in w for w in est.warnings)
    single = _estimate(shipped_catalog, "rtx-4090", workload=QLORA)
    assert single.result is not None and single.result.num_gpus == 1
    assert not any("give num_gpus" in w for w in single.warnings)
