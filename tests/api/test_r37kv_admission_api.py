"""POST /api/v1/estimate as the expert review asked it: 256 users of Llama 3.1 8B at 1,000 in /
1,000 out on one H100 under vLLM. vLLM allocates the KV cache on demand, so the plan runs them
all (first token in well under the 2 s target, --max-num-seqs above 256) and says that it runs
above the 222 whole requests the cache holds, where long outputs get preempted (issue 21)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_256_users_on_one_h100_run_on_demand_and_are_told_of_preemption(
    read_client: TestClient,
) -> None:
    body = {
        "workload": {"preset": "llama-3.1-8b", "task": "serving", "precision": "bf16",
                     "serving": {"concurrent_requests": 256, "prompt_tokens": 1000,
                                 "output_tokens": 1000, "ttft_ms_target": 2000}},
        "gpu": "h100-sxm", "constraints": {"num_gpus": 1},
    }  # fmt: skip
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    out = r.json()["result"]
    sv = out["serving"]
    assert sv["runtime"] == "vllm" and sv["replicas"] == 1
    assert sv["max_concurrency"] >= 256 and sv["meets_slo"] is True
    assert sv["ttft_ms"] < 500
    seqs = re.search(r"--max-num-seqs (\d+)", sv["deploy"]["command"])
    assert seqs is not None and int(seqs.group(1)) == sv["max_concurrency"]
    said = [w for w in out["warnings"] if "preempts" in w]
    assert len(said) == 1 and "256 requests per replica run above the" in said[0]
    # each request counted at its prompt + half its output: 1,500 of its 2,000 tokens
    held, whole = sv["kv_cache_gb_held_per_request"], sv["kv_cache_gb_per_request"]
    assert abs(held / whole - 1500 / 2000) < 1e-6
    assert any(f"~{held / 1.073741824:.2f} GiB each" in e for e in out["explanation"])
