"""A Mac row running plain int4 under Transformers (bitsandbytes NF4, experimental) states
NF4's published quality cost (QLoRA, data/quality.yaml nf4), not the GPTQ/AWQ-style INT4
figure of kernels Metal does not have; a CUDA card's int4 row keeps the INT4 figure."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service


def _quality(catalog: Any, slug: str) -> str:
    gpus, offers, rules = catalog
    body = {"gpu": slug, "workload": {"preset": "llama-3-8b", "task": "inference",
                                      "precision": "int4"}}  # fmt: skip
    req = s.EstimateRequest.model_validate(body)
    gpu = next(g for g in gpus if g.slug == slug)
    row = service.estimate(req, gpu, rules, offers=offers.get(slug)).result
    assert row is not None and row.runtime == "transformers"
    return next(w for w in row.warnings if w.startswith("quality:"))


def test_plain_int4_on_a_mac_is_costed_as_nf4(shipped_catalog: Any) -> None:
    note = _quality(shipped_catalog, "apple-m2-ultra")
    assert note.startswith("quality: nf4 weights"), note
    assert "QLoRA" in note and "arxiv.org/abs/2305.14314" in note
    assert "GPTQ" not in note and "Kurtic" not in note


def test_plain_int4_on_cuda_keeps_the_int4_figure(shipped_catalog: Any) -> None:
    note = _quality(shipped_catalog, "rtx-4090")
    assert note.startswith("quality: int4 weights") and "GPTQ/AWQ-style" in note
