"""A publisher's own FP8 checkpoint published beside the model's 16-bit release (Qwen's
Qwen3-235B-A22B-FP8, Meta's Llama-3.1-405B-Instruct-FP8) is said as that, not as the format
the model was released in, and the summary still reads no caveat into it (review 25, item 2).
Needs quality.publisher_note's proposed wording and summary.py's PUBLISHER_OWN check."""

from __future__ import annotations

from app.recommend import deploy, quality
from tests.recommend.test_servfix_answers import _ask
from tests.support import summary_of


def test_qwen3_235b_fp8_is_the_publishers_checkpoint_beside_its_16_bit_release() -> None:
    assert deploy.publisher_fp8("qwen3-235b-a22b") == "Qwen/Qwen3-235B-A22B-FP8"
    body = {
        "workload": {
            "preset": "qwen3-235b-a22b",
            "task": "serving",
            "serving": {"concurrent_requests": 32, "prompt_tokens": 1000, "output_tokens": 300},
        },
        "constraints": {"acquisition": "rent", "max_gpus": 8},
    }
    answer = _ask(body, "h200-sxm", "h100-sxm")
    fp8 = [r for r in answer.recommendations if r.precision == "fp8"]
    assert fp8  # the default keeps the publisher's FP8 on a card that runs fp8 natively
    for row in fp8:
        said = [w for w in row.warnings if w.startswith("quality: fp8 weights")]
        assert len(said) == 1, row.warnings
        (note,) = said
        assert "the publisher's own FP8 checkpoint (Qwen/Qwen3-235B-A22B-FP8)" in note
        assert "published beside its 16-bit weights" in note
        assert quality.AS_RELEASED not in note and "as the model was released" not in note
    # the publisher's own checkpoint is no caveat of the pick (its MoE layout is)
    assert "Caveat: quality" not in summary_of(answer).sentence
