"""Serving rows as the rest of the engine words them.

A Transformers serving row on a Mac at int4 reads the same `transformers-weights:int4` rule an
inference row does (compat.weights_run_as, evaluate.weights_words): NF4's quality cost and the
experimental caveat, ranked as experimental, not the GPTQ/AWQ INT4 figure with no caveat.

At one user on exactly 2 × H100 SXM, balanced shows the tensor-parallel copy over two one-GPU
copies (one with no request to run) that cost no less since r33hr's host RAM check (the $0.06/h
cheaper 4 GiB hosts cannot load the model) (rank.serving_pick)."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service

NO_TARGETS = {"ttft_ms_target": 3_600_000, "itl_ms_target": 3_600_000}


def _mac(catalog: Any, task: str) -> s.Recommendation:
    gpus, offers, rules = catalog
    work: dict[str, Any] = {"preset": "llama-3-8b", "task": task, "precision": "int4",
                            "runtime": "transformers"}  # fmt: skip
    if task == "serving":
        work["serving"] = {"concurrent_requests": 1, **NO_TARGETS}
    body = {"workload": work}
    mac = [g for g in gpus if g.slug == "apple-m2-ultra"]
    r = service.recommend(s.RecommendationRequest.model_validate(body), mac, rules, offers=offers)
    (row,) = r.recommendations
    return row


def test_a_mac_int4_transformers_serving_row_says_nf4_and_its_caveat(shipped_catalog: Any) -> None:
    served, inferred = _mac(shipped_catalog, "serving"), _mac(shipped_catalog, "inference")
    assert served.serving is not None and served.serving.weight_precision == "int4"

    def said(row: s.Recommendation) -> tuple[str, str]:
        quality = next(w for w in row.warnings if w.startswith("quality:"))
        caveat = next(
            w
            for w in row.warnings
            if w.startswith("Hugging Face Transformers (eager generate) int4 weights on")
        )
        return quality, caveat

    quality, caveat = said(served)
    assert quality.startswith("quality: nf4 weights") and "arxiv.org/abs/2305.14314" in quality
    assert "GPTQ/AWQ-style" not in quality and "Kurtic" not in quality
    assert "bitsandbytes NF4" in caveat and "experimental" in caveat
    assert served.framework_status == "experimental"
    # the very words the inference row on the same Mac gives
    assert said(inferred) == (quality, caveat)
    assert inferred.framework_status == "experimental"


def test_a_cuda_int4_serving_row_keeps_the_int4_figure(shipped_catalog: Any) -> None:
    gpus, offers, rules = shipped_catalog
    body = {"workload": {"preset": "llama-3-8b", "task": "serving", "precision": "int4",
                         "serving": {"concurrent_requests": 1, **NO_TARGETS}}}  # fmt: skip
    card = [g for g in gpus if g.slug == "rtx-4090"]
    r = service.recommend(s.RecommendationRequest.model_validate(body), card, rules, offers=offers)
    row = r.recommendations[0]
    quality = next(w for w in row.warnings if w.startswith("quality:"))
    assert quality.startswith("quality: int4 weights") and "GPTQ/AWQ-style" in quality
    assert row.framework_status == "supported"


def _two_h100s(catalog: Any, objective: str, load: dict[str, Any]) -> s.Recommendation:
    gpus, offers, rules = catalog
    body = {
        "workload": {"preset": "llama-3-8b", "task": "serving", "serving": load},
        "constraints": {"num_gpus": 2, "acquisition": "rent"},
        "objective": objective,
    }
    h100 = [g for g in gpus if g.slug == "h100-sxm"]
    r = service.recommend(s.RecommendationRequest.model_validate(body), h100, rules, offers=offers)
    return r.recommendations[0]


def test_one_user_on_two_h100s_gets_the_split_copy_not_an_idle_replica(
    shipped_catalog: Any,
) -> None:
    row = _two_h100s(shipped_catalog, "balanced", {"concurrent_requests": 1})
    sv = row.serving
    assert sv is not None and (sv.replicas, sv.gpus_per_replica) == (1, 2)
    # the two copies are the alternative, no dearer and slower (since r33hr they rent cudo's
    # 8 GiB 1-GPU hosts, $1.8528/h each, the 4 GiB ones too small to load 16 GB of weights:
    # the same $3.7056/h as the 2-GPU instance)
    (alt,) = row.alternatives
    assert (alt.replicas, alt.gpus_per_replica) == (2, 1)
    assert sv.usd_per_hour is not None and alt.hourly_usd is not None
    assert alt.hourly_usd <= sv.usd_per_hour < alt.hourly_usd + 0.1
    assert alt.itl_ms is not None and sv.itl_ms is not None
    assert sv.itl_ms < 0.8 * alt.itl_ms
    # cheapest ranks the hour, here the same for both: the faster split copy (where the copies
    # are cheaper, cheapest takes them: tests/domain/test_r33lf_idle_replica_pick.py)
    cheap = _two_h100s(shipped_catalog, "cheapest", {"concurrent_requests": 1}).serving
    assert cheap is not None and (cheap.replicas, cheap.gpus_per_replica) == (1, 2)
