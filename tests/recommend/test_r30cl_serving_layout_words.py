"""r30 review: a serving answer's summary named its top pick's layout "1 × 2 GPU"; the
counted nouns now agree with their counts."""

from __future__ import annotations

import pytest

from app.recommend.serving import replicas_words


@pytest.mark.parametrize(
    ("replicas", "gpus", "said"),
    [
        (1, 1, "1 replica × 1 GPU"),
        (1, 2, "1 replica × 2 GPUs"),
        (4, 1, "4 replicas × 1 GPU"),
        (2, 8, "2 replicas × 8 GPUs"),
    ],
)
def test_counted_nouns_agree(replicas: int, gpus: int, said: str) -> None:
    assert replicas_words(replicas, gpus) == said
