"""FLUX.1 [dev] in bf16 on a 24 GB card: the default pipeline does not fit, but under model
CPU offload the transformer is alone on the card with its own op (the VAE decode comes after
it has left), so the estimate offers the offload, with a peak within the card's usable memory."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.recommend import schemas as s
from app.recommend import service


@pytest.mark.parametrize("slug", ["rtx-4090", "rtx-3090"])
def test_flux_dev_bf16_on_a_24_gb_card_fits_with_model_cpu_offload(
    shipped_catalog: Any, slug: str
) -> None:
    gpu = next(g for g in shipped_catalog[0] if g.slug == slug)
    req = s.EstimateRequest.model_validate(
        {"gpu": slug, "workload": {"preset": "flux-1-dev", "task": "inference"}}
    )
    est = service.estimate(req, gpu, shipped_catalog[2])
    assert est.result is None and est.excluded is not None
    assert est.excluded.code == "does_not_fit"  # the default pipeline: every component resident
    (said,) = [a for a in est.advice if "enable_model_cpu_offload()" in a]
    m = re.search(r"a peak of ([\d.]+) GiB of the ([\d.]+) GiB usable", said)
    assert m is not None, said
    assert float(m.group(1)) < float(m.group(2))
    assert 23.0 < float(m.group(1)) < 23.6  # 23.8e9 B of transformer + its op + context
