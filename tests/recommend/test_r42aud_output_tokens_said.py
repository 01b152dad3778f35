"""output_tokens asked of a model that generates no tokens is said to be ignored, as seq_len
on a CNN is: a ResNet-50, ViT, SDXL or BERT inference had dropped 500 output tokens without a
word. A decoder and an encoder-decoder read the field and say nothing."""

from __future__ import annotations

import pytest

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload

WORDS = "output_tokens applies to a model that generates tokens"


@pytest.mark.parametrize(
    ("preset", "family"),
    [("resnet-50", "cnn"), ("vit-b-16", "vit"), ("sdxl", "diffusion"), ("bert-base", "encoder")],
)
def test_a_model_that_generates_nothing_says_output_tokens_are_ignored(
    preset: str, family: str
) -> None:
    w = s.WorkloadIn(preset=preset, task="inference", output_tokens=500)
    _, warnings = resolve_workload(w)
    said = [x for x in warnings if x.startswith(WORDS)]
    assert said == [
        f"{WORDS} (a decoder LLM, or an encoder-decoder such as Whisper or T5); a model of "
        f"family '{family}' returns its output from its forward passes; ignored"
    ]


@pytest.mark.parametrize("preset", ["llama-3.1-8b", "whisper-small"])
def test_a_generating_model_reads_them_without_a_word(preset: str) -> None:
    work, warnings = resolve_workload(
        s.WorkloadIn(preset=preset, task="inference", output_tokens=64)
    )
    assert work.output_tokens == 64
    assert not any(x.startswith(WORDS) for x in warnings)
