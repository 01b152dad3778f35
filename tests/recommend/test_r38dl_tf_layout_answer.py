"""r38 audit of issue 23's framework truth, end to end: a TensorFlow answer's rows split over
GPUs name tf.distribute's strategy, not PyTorch's DDP (app/domain/rank.py _layout_said)."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service


def test_a_tensorflow_row_over_gpus_names_its_strategy(shipped_catalog: Any) -> None:
    gpus, offers, rules = shipped_catalog
    body = {
        "workload": {"preset": "resnet-50", "task": "training"},
        "constraints": {"framework": "tensorflow", "vendors": ["amd"]},
        "limit": 3,
    }
    answer = service.recommend(
        s.RecommendationRequest.model_validate(body), gpus, rules, offers=offers
    )
    split = [r for r in answer.recommendations if r.num_gpus > 1]
    assert split  # the question has rows over several GPUs: the test can fail
    for r in split:
        line = next(x for x in r.explanation if x.startswith("Split over"))
        assert "tf.distribute.MirroredStrategy" in line and "(DDP)" not in line.split("priced")[0]
