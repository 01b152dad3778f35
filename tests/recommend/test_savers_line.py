"""The savers' banner line never reads as if the savers cost memory (first-time user's review:
"With micro-batches, 8 x B200 is enough: 153.5 GB per GPU instead of 93.6 GB for the whole batch
of 128", the plain job sized sharded beside a row run replicated)."""

from __future__ import annotations

import re
from typing import Any

from app.recommend import schemas as s
from app.recommend import service

LINE = re.compile(r"is enough: ([\d,.]+) GiB per GPU instead of ([\d,.]+) GiB")


def _recommend(catalog: Any, body: dict[str, Any]) -> s.RecommendationResponse:
    return service.recommend(s.RecommendationRequest.model_validate(body), catalog[0], catalog[2])


def test_the_savers_line_is_said_only_where_they_save(shipped_catalog: Any) -> None:
    body = {"workload": {"preset": "llama-3-8b", "task": "fine-tuning"},
            "constraints": {"framework": "pytorch", "max_purchase_usd": 2000}}  # fmt: skip
    r = _recommend(shipped_catalog, body)
    top = r.recommendations[0]
    assert top.memory_savers  # the branch is reached: the top pick runs savers
    said = [m for line in r.advice if (m := LINE.search(line))]
    for m in said:
        assert float(m.group(1).replace(",", "")) < float(m.group(2).replace(",", ""))
    # where the savers do save, the line stays (test_r25diff_image_generation's 12 GB card)
