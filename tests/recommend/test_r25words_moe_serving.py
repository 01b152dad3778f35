"""Mixture-of-experts serving rows say, once each, that the plan prices tensor parallelism only:
expert parallelism with data-parallel attention, as DeepSeek-V3/R1 and Qwen3-MoE are served
(LMSYS's DeepSeek blog; vLLM's data- and expert-parallel deployment docs), is not modelled, so
their high-load concurrency and throughput are a lower bound (review 25, item 1)."""

from __future__ import annotations

from app.recommend import schemas as s
from tests.recommend.test_servfix_answers import _ask

MOE = "mixture-of-experts serving:"


def _notes(row: s.Recommendation) -> list[str]:
    return [w for w in row.warnings if w.startswith(MOE)]


def test_deepseek_rows_say_expert_parallel_is_not_modelled_and_mla_cache_is_replicated() -> None:
    body = {
        "workload": {
            "preset": "deepseek-v3",
            "task": "serving",
            "serving": {
                "concurrent_requests": 64,
                "prompt_tokens": 1000,
                "output_tokens": 300,
                "itl_ms_target": 50,
            },
        },
        "constraints": {"acquisition": "rent", "max_gpus": 16},
        "objective": "best_value",
    }
    answer = _ask(body, "h200-sxm", "b200", "h100-sxm")
    assert answer.recommendations
    for row in answer.recommendations:
        assert row.serving is not None and row.serving.multi_gpu == "tensor"
        said = _notes(row)
        assert len(said) == 1, row.warnings  # once a row
        (note,) = said
        assert "--enable-dp-attention" in note and "--enable-expert-parallel" in note
        assert "LMSYS" in note and "vLLM's docs" in note
        assert "a lower bound" in note
        assert "MLA latent KV cache" in note  # DeepSeek's latent attention
        assert not any(MOE in line for line in row.explanation + row.tips)


def test_qwen3_moe_rows_say_it_without_the_latent_cache() -> None:
    body = {
        "workload": {
            "preset": "qwen3-235b-a22b",
            "task": "serving",
            "serving": {"concurrent_requests": 32, "prompt_tokens": 1000, "output_tokens": 300},
        },
        "constraints": {"acquisition": "rent", "max_gpus": 8},
    }
    rows = _ask(body, "h200-sxm", "h100-sxm").recommendations
    assert rows
    for row in rows:
        (note,) = _notes(row)
        assert "MLA" not in note  # grouped-query attention splits its cache by KV head


def test_dense_and_one_gpu_rows_say_nothing_of_experts() -> None:
    dense = {
        "workload": {
            "preset": "llama-3.1-70b",
            "task": "serving",
            "serving": {"concurrent_requests": 16, "prompt_tokens": 1000, "output_tokens": 300},
        },
        "constraints": {"acquisition": "rent", "num_gpus": 2},
    }
    rows = _ask(dense, "h100-sxm").recommendations
    assert rows and all(not _notes(r) for r in rows)
    # one GPU a replica: no group to lay the experts out over
    one = {
        "workload": {
            "preset": "gpt-oss-120b",
            "task": "serving",
            "runtime": "vllm",
            "serving": {"concurrent_requests": 8, "prompt_tokens": 1000, "output_tokens": 300},
        },
        "constraints": {"acquisition": "rent", "num_gpus": 1},
    }
    rows = _ask(one, "h100-sxm").recommendations
    assert rows and all(r.serving and r.serving.gpus_per_replica == 1 for r in rows)
    assert all(not _notes(r) for r in rows)
