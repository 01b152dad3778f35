"""r30 closing review: a diffusion job whose extra GPUs run whole copies quoted its memory
levers (model CPU offload, fp8 with it) at the whole batch, beside a copy's own figure at its
share of the batch: a lever that holds the copy could read as not holding it. The levers are
now priced at the copy's batch, the one each GPU runs."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service


def _reason(catalog: Any, slug: str, batch: int, gpus: int) -> str:
    req = s.EstimateRequest.model_validate(
        {
            "gpu": slug,
            "workload": {"preset": "flux-1-dev", "task": "inference", "batch_size": batch},
            "constraints": {"max_gpus": gpus},
        }
    )
    est = service.estimate(req, next(g for g in catalog[0] if g.slug == slug), catalog[2])
    assert est.result is None and est.excluded is not None
    return est.excluded.reason


def test_a_copys_levers_are_priced_at_its_share_of_the_batch(shipped_catalog: Any) -> None:
    # 8 GPUs share a batch of 8: each copy runs one image, so its levers are one GPU's at
    # batch 1 (the same words and peaks), not the batch of 8's
    copies = _reason(shipped_catalog, "rtx-4060-ti-16gb", 8, 8)
    one = _reason(shipped_catalog, "rtx-4060-ti-16gb", 1, 1)
    assert "a copy at batch 1, its share on 8 GPUs" in copies
    lever = one.split("GiB usable")[1]
    assert lever and copies.endswith(lever)
