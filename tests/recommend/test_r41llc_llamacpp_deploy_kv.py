"""The memory a llama.cpp serving row shows and is checked against is the KV cache of the -c
its deploy command starts llama-server with (llama.cpp src/llama-context.cpp: the whole n_ctx
allocated at context creation, split over the -np slots): the audit's Llama 3.3 70B Q4_K_M row
on an M3 Ultra showed 1.70 GB for four running requests while its `-c 10400 -np 4` allocates
3.41 GB, and a single client read a quarter of that."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
RULES = load_rules(DATA)
KV_PER_TOKEN = 2 * 80 * 8 * 128 * 2  # Llama 3.3 70B: K and V, 80 layers, 8 × 128, 16-bit


def _estimate(serving: dict[str, Any]) -> s.Recommendation:
    workload = {
        "preset": "llama-3.3-70b",
        "task": "serving",
        "quantization": "q4_k_m",
        "runtime": "llama.cpp",
        "serving": serving,
    }
    req = s.EstimateRequest(workload=workload, gpu="apple-m3-ultra")
    out = service.estimate(req, GPUS["apple-m3-ultra"], RULES)
    assert out.result is not None
    return out.result


def _flag(args: list[str], name: str) -> int:
    return int(args[args.index(name) + 1])


@pytest.mark.parametrize(
    "serving",
    [
        {"concurrent_requests": 4},
        {"concurrent_requests": 1},
        {"concurrent_requests": 4, "prompt_tokens_spread": 400, "output_tokens_spread": 100},
    ],
)
def test_row_counts_the_kv_cache_of_the_c_it_deploys(serving: dict[str, Any]) -> None:
    row = _estimate(serving)
    assert row.serving is not None and row.serving.deploy is not None
    args = shlex.split(row.serving.deploy.command)
    ctx, slots = _flag(args, "-c"), _flag(args, "-np")
    assert slots == row.serving.max_concurrency
    whole = ctx * KV_PER_TOKEN / 1e9
    assert row.memory.breakdown["kv_cache"] == pytest.approx(whole, abs=1e-3)
    assert row.serving.kv_cache_gb_per_request == pytest.approx(whole / slots)
    note = next(n for n in row.memory.notes if n.startswith("per GPU"))
    assert f"{slots} -np slots" in note and f"{whole:.2f} × 10⁹ B" in note, note
