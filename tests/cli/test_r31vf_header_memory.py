"""r31 review (vf): the CLI's header said "needs at least 20.4 GiB" above a pick of 2 × 16 GB
cards at 15.7 GiB each. The figure is the whole job on one GPU, as the page's card says, and a
pick sharded over several GPUs is named with its own per-GPU figure, as the page names it."""

from __future__ import annotations

from rich.console import Console

from app.cli.recommend import render
from app.domain.units import gib
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import RULES, T4


def test_the_header_says_one_gpu_and_the_sharded_picks_own_figure() -> None:
    request = s.RecommendationRequest.model_validate(
        {
            "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "lora"},
            "constraints": {"max_gpus": 4},
        }
    )
    response = service.recommend(request, [T4], RULES)
    top = response.recommendations[0]
    assert top.num_gpus > 1  # the premise: a 16 GB T4 holds it only sharded
    assert top.memory.required_gb < response.memory.required_gb
    console = Console(record=True, width=2000)
    render(response, console)
    head = console.export_text().splitlines()[0]
    assert f"needs at least {gib(response.memory.required_gb)} GiB on one GPU" in head
    assert f"the top pick: {top.num_gpus} GPUs, {gib(top.memory.required_gb)} GiB each" in head
