"""An Apple silicon user's review (round 41, aud3): a llama.cpp serving row on a 512 GB Mac
Studio said "the runtime reserves 341.5 GiB for the KV cache" while llama-server allocates only
the -c its deploy command sets (four requests' context, a few GB); mlx_lm and Transformers grow
their caches. Only a runtime that claims a share of the device up front reserves the pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.catalog.loader import read_gpu_specs
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
RULES = load_rules(DATA)


def _pool_note(slug: str, workload: dict[str, Any]) -> str:
    req = s.EstimateRequest(workload=workload, gpu=slug)
    out = service.estimate(req, GPUS[slug], RULES)
    assert out.result is not None
    notes = out.result.memory.notes
    return next(n for n in notes if "KV cache" in n and n.startswith("per GPU"))


def _serving(runtime: str, **extra: Any) -> dict[str, Any]:
    return {
        "preset": "llama-3.1-8b",
        "task": "serving",
        "runtime": runtime,
        "serving": {"concurrent_requests": 4},
        **extra,
    }


def test_llama_server_is_not_said_to_reserve_the_free_memory() -> None:
    note = _pool_note("apple-m3-ultra", _serving("llama.cpp", quantization="q4_k_m"))
    assert "reserves" not in note, note
    assert "is free for the KV cache" in note and "-c" in note, note


def test_mlx_and_transformers_grow_their_cache() -> None:
    for slug, runtime in (("apple-m4-max", "mlx"), ("l40s", "transformers")):
        note = _pool_note(slug, _serving(runtime))
        assert "reserves" not in note and "grows with the requests" in note, note


def test_vllm_and_sglang_still_reserve_their_share() -> None:
    for runtime in ("vllm", "sglang"):
        assert "the runtime reserves" in _pool_note("h100-sxm", _serving(runtime))
