"""The verdict's caveat says what limits the answer before how to set the card up: TensorFlow
on an RX 9070 (RDNA 4) had led with tensorflow-rocm's install note where PyTorch's answer on
the same card led with the estimate leaning high (MIOpen, not cuDNN), a risk the install
note does not carry; the note stays among the row's warnings."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules
from tests.support import summary_of

CNN = {"preset": "resnet-50", "task": "training"}
ROCM_TF = next(
    r.caveat for r in load_rules().frameworks if r.framework == "tensorflow" and r.backend == "rocm"
)


def _caveat(answer: s.RecommendationResponse) -> str:
    return summary_of(answer).sentence.split(" Caveat: ", 1)[1]


def _answer(catalog: Any, framework: str) -> s.RecommendationResponse:
    req = s.RecommendationRequest.model_validate(
        {
            "workload": CNN,
            "constraints": {"framework": framework, "vendors": ["amd"], "segments": ["consumer"]},
            "limit": 2,
        }
    )
    return service.recommend(req, list(catalog[0]), catalog[2], offers=catalog[1])


def test_tensorflow_on_rdna4_leads_with_the_speed_not_the_install(shipped_catalog) -> None:
    answer = _answer(shipped_catalog, "tensorflow")
    top = answer.recommendations[0]
    assert top.gpu.architecture.startswith("RDNA 4") or top.gpu.slug.startswith("rx-90")
    assert ROCM_TF is not None and ROCM_TF in top.warnings  # still said in the row
    caveat = _caveat(answer)
    assert caveat.startswith("its speed is likely overstated: no published result from this vendor")
    assert "tensorflow-rocm" not in caveat


def test_pytorch_on_the_same_card_says_the_same_caveat(shipped_catalog) -> None:
    torch = _caveat(_answer(shipped_catalog, "pytorch"))
    tf = _caveat(_answer(shipped_catalog, "tensorflow"))
    assert torch.split(";")[0] == tf.split(";")[0]
