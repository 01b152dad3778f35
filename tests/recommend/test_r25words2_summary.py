"""The verdict of an answer (review 25, words2): an empty answer under a missed deadline names
the change that meets it before lifting it, and a QLoRA pick's fit says the fp32 cast of its
embedding and LM head it cannot hold."""

from __future__ import annotations

from app.recommend import deadline, service
from app.recommend import schemas as s
from tests.domain.fixtures import A100, H100, RTX4090, RULES
from tests.support import summary_of

JOB = {"preset": "resnet-50", "task": "training", "batch_size": 1024, "epochs": 90}


def _rank(body: dict, gpus: list | None = None) -> s.RecommendationResponse:
    request = s.RecommendationRequest.model_validate(body)
    return service.recommend(request, gpus or [A100, H100], RULES)


def _fastest(cap: int) -> float:
    r = _rank({"workload": JOB, "constraints": {"max_gpus": cap}, "objective": "fastest"})
    took = r.recommendations[0].time_to_finish_h
    assert took is not None
    return took


# ---------------------------------------------------------------- a missed deadline's headline


def test_needs_names_the_first_change_that_meets_the_whole_job() -> None:
    d = s.DeadlineOut(
        max_hours=720.0,
        met=False,
        message="",
        left_out=0,
        would=[
            "a shorter job: 64 × B200 gets through 28% of the samples in 30.0 days",
            "more GPUs: 256 × B200 takes 28.5 days (constraints.max_gpus 256)",
        ],
    )
    said = deadline.needs(d)
    assert said == (
        "to finish within 30 days it needs more GPUs: 256 × B200 takes 28.5 days "
        "(constraints.max_gpus 256)"
    )
    # a shorter job is another job; a met deadline needs nothing
    assert deadline.needs(d.model_copy(update={"would": d.would[:1]})) is None
    assert deadline.needs(d.model_copy(update={"met": True})) is None
    assert deadline.needs(None) is None


def test_empty_answer_verdict_names_more_gpus_not_no_deadline() -> None:
    """At the most GPUs the questions' variations open (64), only "no deadline" lets a card
    run: the verdict had offered it (a 21,000-hour job for a 30-day deadline) while the
    deadline's own 'more GPUs' met it."""
    limit = _fastest(256) * 1.05  # 256 GPUs meet it, no other single change does
    body = {"workload": JOB, "constraints": {"max_gpus": 64, "max_hours": limit}}
    r = _rank(body | {"objective": "cheapest"})
    assert not r.recommendations and r.deadline is not None and not r.deadline.met
    assert r.empty is not None and r.empty.nearest[0].change == "no deadline"
    sentence = summary_of(r).sentence
    assert "it needs more GPUs: " in sentence, sentence
    assert "(constraints.max_gpus 256)" in sentence
    assert "no deadline" not in sentence
    # the empty answer's own message says the same, not "Nearest: no deadline"
    assert "Nearest: to finish within" in r.empty.message and "more GPUs" in r.empty.message
    assert "Nearest: no deadline" not in r.empty.message


def test_empty_answer_keeps_no_deadline_when_no_change_meets_it() -> None:
    limit = _fastest(512) * 0.5
    r = _rank({"workload": JOB, "constraints": {"max_gpus": 64, "max_hours": limit}})
    assert r.deadline is not None and deadline.needs(r.deadline) is None
    sentence = summary_of(r).sentence
    assert "could with one change: no deadline" in sentence


# ---------------------------------------------------------------- QLoRA's fp32 cast


def _qlora() -> s.RecommendationResponse:
    body = {
        "workload": {"preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "qlora"},
        "constraints": {"max_gpus": 1},
    }
    r = _rank(body, [RTX4090])
    assert r.recommendations
    return r


def test_qlora_fit_below_the_upcast_holds_only_without_the_cast() -> None:
    r = _qlora()
    top = r.recommendations[0]
    mem = top.memory
    assert mem.available_gb is not None
    # 0.87 GB spare where the cast takes 2.1 GB (Llama 3.1 8B: 2 × 128,256 × 4,096 × 2 bytes)
    top.memory = mem.model_copy(update={"headroom_gb": 0.87})
    sentence = summary_of(r).sentence
    assert "spare of" in sentence
    assert (
        "only if the embedding and LM head stay 16-bit (prepare_model_for_kbit_training casts "
        "them to fp32: 1.96 GiB more)" in sentence
    ), sentence
    # the fused loss is named only where the logits it frees cover the shortfall
    logits = mem.breakdown.get("logits", 0.0)
    assert ("or a fused loss frees the logits" in sentence) == (logits >= 2.10 - 0.87)


def test_qlora_fit_with_room_for_the_upcast_says_nothing_of_it() -> None:
    r = _qlora()
    top = r.recommendations[0]
    top.memory = top.memory.model_copy(update={"headroom_gb": 5.0})
    assert "prepare_model_for_kbit_training" not in summary_of(r).sentence
