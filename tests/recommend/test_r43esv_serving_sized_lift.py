"""An empty serving answer names the GPU count its load needs, re-ranked: Llama 3.1 70B at
20 requests/s (2,000 tokens in, 300 out, TTFT <= 1 s, ITL <= 40 ms) on 1 rented GPU had said "no
single change tried lets one run it" (the what-if lifted max_gpus only to 8, too few for the
rate) while its closest, one B300 a replica, carries the rate on a handful more; at 8 GPUs it
had led with "up to 64 GPUs, best 24 H100s". The count is the fewest GPUs a replica holds the
model on within the ITL floor times the replicas the rate needs, and the what-if re-ranks it."""

from __future__ import annotations

import re
from typing import Any

from app.domain import serving as sv
from tests.support import recommend_with, summary_of


def _body(preset: str, rate: float, max_gpus: int) -> dict[str, Any]:
    return {
        "workload": {
            "preset": preset,
            "task": "serving",
            "serving": {
                "requests_per_s": rate,
                "prompt_tokens": 2000,
                "output_tokens": 300,
                "ttft_ms_target": 1000,
                "itl_ms_target": 40,
            },
        },
        "constraints": {"acquisition": "rent", "max_gpus": max_gpus},
    }


def _sized(out: Any, max_gpus: int) -> tuple[int, int, int]:
    """The first nearest change's count, replicas and GPUs a replica."""
    assert out.counts.ranked == 0 and out.empty is not None and out.empty.nearest
    first = out.empty.nearest[0]
    said = re.fullmatch(
        rf"up to (\d+) GPUs instead of {max_gpus} \(the rate needs (\d+) replicas? of (\d+) "
        r"GPUs? on .+\)",
        first.change,
    )
    assert said is not None, first.change
    n, replicas, per = (int(g) for g in said.groups())
    assert n == replicas * per and first.can_run >= 1 and first.num_gpus is not None
    assert first.num_gpus <= n
    # one message for the JSON, the verdict and the page's list
    verdict = summary_of(out).sentence
    assert first.change in out.empty.message and first.change in verdict
    return n, replicas, per


def test_a_rate_one_replica_cannot_carry_names_the_replicas_it_needs(shipped_catalog: Any) -> None:
    out = recommend_with(shipped_catalog, _body("llama-3.1-70b", 20, 1))
    n, replicas, per = _sized(out, 1)
    # the closest shape's own capacity sizes it, as the plans are sized (sv.replicas_for)
    near = out.serving.closest[0]
    assert near.serving is not None and per == near.num_gpus // max(1, near.serving.replicas)
    assert f"{replicas} replica" in " ".join(out.serving.relax)
    # the fewest: one GPU fewer runs nothing
    fewer = recommend_with(shipped_catalog, _body("llama-3.1-70b", 20, n - 1))
    assert fewer.counts.ranked == 0
    assert 0.0 < sv.NEAR_CAPACITY < 1.0


def test_the_count_keeps_the_rate_asked_before_halving_it(shipped_catalog: Any) -> None:
    out = recommend_with(shipped_catalog, _body("llama-3.1-70b", 40, 8))
    n, _, _ = _sized(out, 8)
    assert 8 < n < 64
    assert not out.empty.relax[0].startswith("20 requests/s")


def test_a_model_no_card_holds_within_the_limit_is_sized_on_wider_replicas(
    shipped_catalog: Any,
) -> None:
    """405B on 1 GPU: no card holds it, the fewest GPUs a replica that reads its weights
    within the ITL target spans are re-ranked first, and their replicas counted."""
    out = recommend_with(shipped_catalog, _body("llama-3.1-405b", 5, 1))
    _, _, per = _sized(out, 1)
    assert per > 1


def test_the_cli_lists_the_count(shipped_catalog: Any) -> None:
    from rich.console import Console

    from app.cli.recommend import render

    out = recommend_with(shipped_catalog, _body("llama-3.1-70b", 20, 1))
    console = Console(record=True, width=2000)
    render(out, console)
    text = console.export_text()
    assert out.empty.nearest[0].change in text and "the rate needs" in text
