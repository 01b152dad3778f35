"""`gpu-advisor recommend`'s first line names the adapters' recipe, as the page's "Job" line
does (a new user's walk, thirty-eighth session): "llama-3.1-8b fine-tuning, bf16, batch 128 —
needs at least 10.9 GiB" headed a QLoRA answer whose 10.9 GiB only the 4-bit base explains."""

from __future__ import annotations

import pytest
from rich.console import Console

from app.cli.recommend import render
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES


@pytest.mark.parametrize(
    ("peft", "said"), [("qlora", "QLoRA (4-bit base)"), ("lora", "LoRA"), ("none", None)]
)
def test_the_head_line_names_the_peft(peft: str, said: str | None) -> None:
    body = {"workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": peft}}
    response = service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)
    console = Console(record=True, width=2000)
    render(response, console)
    head = console.export_text().splitlines()[0]
    assert head.startswith("llama-3-8b fine-tuning"), head
    if said is None:
        assert "LoRA" not in head, head
    else:
        assert head.startswith(f"llama-3-8b fine-tuning, {said}, "), head


def test_the_assumptions_line_names_the_peft_in_words() -> None:
    from tests.support import summary_of

    body = {"workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"}}
    response = service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)
    said = summary_of(response).assumptions
    assert ", QLoRA (4-bit base), " in said and "qlora" not in said, said
