"""The gate (evaluate.gate) is memoised on the rules across requests, so its key holds every
input it reads: a Mac's gate for an NF4 request is not the one for an AWQ request, whatever
came first (AWQ and GPTQ under Transformers have no Metal kernels; data/frameworks.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
MAC = "apple-m2-ultra"


def _admitted(rules: object, gpu: object, quantization: str) -> bool:
    req = s.EstimateRequest.model_validate(
        {
            "gpu": MAC,
            "workload": {
                "preset": "llama-3-70b",
                "task": "inference",
                "quantization": quantization,
            },
        }
    )
    return service.estimate(req, gpu, rules).result is not None  # type: ignore[arg-type]


@pytest.mark.parametrize("order", [("nf4", "awq"), ("awq", "nf4"), ("gptq", "nf4")])
def test_a_formats_gate_does_not_depend_on_the_request_before(order: tuple[str, str]) -> None:
    gpu = next(g for g in read_gpu_specs(DATA) if g.slug == MAC)
    alone = {q: _admitted(load_rules(DATA), gpu, q) for q in order}  # each on fresh rules
    assert alone["awq" if "awq" in order else "gptq"] is False  # no Metal kernels
    shared = load_rules(DATA)  # one rules object, as the app keeps it
    in_turn = {q: _admitted(shared, gpu, q) for q in order}
    assert in_turn == alone
