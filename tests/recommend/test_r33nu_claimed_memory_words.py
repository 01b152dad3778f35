"""The verdict's "fits with X GiB spare of Y GiB" says why Y is less than the card holds (a new
user's walk, 2026-12-06): serving Llama 3.3 70B read "spare of 162 GiB" for a 180 GiB B200,
vLLM's gpu_memory_utilization 0.9 said nowhere near it; a Mac's macOS share likewise. A card
whose usable memory is its CUDA total gets no such words."""

from __future__ import annotations

import re

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain.units import vram
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules
from tests.support import summary_of


@pytest.fixture(scope="module")
def catalog() -> tuple[list, object]:
    return read_gpu_specs(DATA_DIR), load_rules(DATA_DIR)


def _answer(catalog: tuple[list, object], body: dict, slugs: set[str]) -> s.RecommendationResponse:
    specs, rules = catalog
    request = s.RecommendationRequest.model_validate(body)
    return service.recommend(request, [g for g in specs if g.slug in slugs], rules)  # type: ignore[arg-type]


def _fit(answer: s.RecommendationResponse) -> str:
    sentence = summary_of(answer).sentence
    m = re.search(r"fits with [^,]*", sentence)
    assert m, sentence
    return m.group(0)


def test_a_vllm_pick_says_vllm_claims_the_rest(catalog: tuple[list, object]) -> None:
    body = {
        "workload": {"preset": "llama-3.3-70b", "task": "serving",
                     "serving": {"concurrent_requests": 20}},
        "constraints": {"acquisition": "rent"},
    }  # fmt: skip
    answer = _answer(catalog, body, {"b200"})
    top = answer.recommendations[0]
    assert top.runtime == "vllm"
    have = vram(top.memory.available_gb or 0.0)
    assert have < 0.95 * top.gpu.memory_gb  # 162 of 180: the premise
    fit = _fit(answer)
    assert "vLLM claims that much of the card's 180 GiB" in fit, fit


def test_a_mac_says_macos_keeps_the_rest(catalog: tuple[list, object]) -> None:
    body = {"workload": {"preset": "llama-3-8b", "task": "inference"}}
    answer = _answer(catalog, body, {"apple-m2-ultra"})
    top = answer.recommendations[0]
    assert top.gpu.vendor == "apple"
    fit = _fit(answer)
    assert "what macOS lets the GPU use of its 192 GiB" in fit, fit


def test_a_card_at_its_cuda_total_says_nothing_more(catalog: tuple[list, object]) -> None:
    body = {"workload": {"preset": "llama-3-8b", "task": "inference"}}
    answer = _answer(catalog, body, {"rtx-4090"})
    fit = _fit(answer)
    assert "(" not in fit, fit
