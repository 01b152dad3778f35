"""The service sizes an SDXL image-generation request with its float32 decode
(workload.fp32_decode): the preset reaches the memory rule as it reaches the time rule."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service


def _estimate(catalog: Any, slug: str, batch: int) -> s.EstimateResponse:
    gpu = next(g for g in catalog[0] if g.slug == slug)
    req = s.EstimateRequest.model_validate(
        {"gpu": slug, "workload": {"preset": "sdxl", "task": "inference", "batch_size": batch}}
    )
    return service.estimate(req, gpu, catalog[2])


def test_sdxl_two_images_a_call_take_two_12_gb_cards(shipped_catalog: Any) -> None:
    """Two 1024² images had read 10.50 GB (four 12.65), inside an RTX 4070's 12.88; their
    float32 decode alone is 6.4 GB of activations, so they go one to a card."""
    one = _estimate(shipped_catalog, "rtx-4070", 1)
    two = _estimate(shipped_catalog, "rtx-4070", 2)
    assert one.result is not None and one.result.fits and one.result.num_gpus == 1
    assert two.result is not None and two.result.fits and two.result.num_gpus == 2
    assert two.result.memory.required_gb == one.result.memory.required_gb
    assert any("decodes in float32" in n for n in one.result.memory.notes)
