"""r31 review: an impossible 2 h training job's deadline note named 16 × B200 (the fewest GPUs
that finish in time) while the empty answer's nearest named 64 × B200 ("up to 64 GPUs", the
objective's pick at the widest cap): both true, read as a disagreement. The empty answer and
the verdict now lead with the deadline's change wherever the nearest what-if lifts the GPU
count or the deadline (whatif.deadline_first), and each figure says what it optimises."""

from __future__ import annotations

from types import SimpleNamespace

from app.recommend import schemas as s
from app.recommend import whatif

NEEDS = (
    "to finish within 2.0 h it needs more GPUs: 16 × NVIDIA B200 takes 1.6 h "
    "(constraints.max_gpus 16), the fewest that finish in time"
)


def _wider(change: str, n: int) -> s.WhatIfOut:
    return s.WhatIfOut(
        change=change,
        top_slug="b200",
        top_name="NVIDIA B200",
        num_gpus=n,
        throughput=1.0,
        unit="samples/s",
        required_gb=100.0,
        can_run=15,
        same_top=False,
        hourly_usd=5.5 * n,
        time_to_finish_h=0.43,
    )


def _answer(*what_if: s.WhatIfOut) -> s.RecommendationResponse:
    ns = SimpleNamespace(
        excluded=[], what_if=list(what_if), acquisition="rent", objective="balanced"
    )
    return ns  # type: ignore[return-value]


def test_a_wider_gpu_cap_does_not_speak_before_the_deadlines_fewest_gpus() -> None:
    answer = _answer(_wider("up to 64 GPUs instead of 8", 64), _wider(whatif.DEADLINE_LIFTED, 8))
    message = whatif.empty_answer(answer, NEEDS).message
    said = message.split("Nearest: ")[1]
    assert said.startswith(NEEDS)  # the 16 × B200 first
    # the 64 × B200 beside it names what it optimises: the objective, at the wider cap
    assert "up to 64 GPUs instead of 8, the balanced pick is 64 × NVIDIA B200" in said


def test_another_change_still_leads_where_it_keeps_the_gpu_count_and_deadline() -> None:
    assert not whatif.deadline_first(NEEDS, "fp8 instead of bf16")
    assert whatif.deadline_first(NEEDS, "up to 64 GPUs instead of 8")
    assert whatif.deadline_first(NEEDS, "any GPU count instead of exactly 8")
    assert whatif.deadline_first(NEEDS, whatif.DEADLINE_LIFTED)
    assert not whatif.deadline_first(None, whatif.DEADLINE_LIFTED)
