"""Closing-review findings of session 32 (fz), through the API: a serving answer under an exact
GPU count with filters that leave cards out names the count lever (B); the resolved workload
echoes MLA's ranks and an explicit head_dim, so posting the echoed model back gives the same
answer (I); the LoRA wording reads the widths an explicit head_dim gives (A)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

URL = "/api/v1/recommendations"


def _serving(client: TestClient, constraints: dict[str, Any]) -> dict[str, Any]:
    body = {
        "workload": {"preset": "llama-3-70b", "task": "serving",
                     "serving": {"concurrent_requests": 4}, "quantization": "none"},
        "constraints": {"segments": ["consumer"], **constraints},
    }  # fmt: skip
    r = client.post(URL, json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_an_exact_count_with_cards_left_out_still_names_the_count_lever(
    read_client: TestClient,
) -> None:
    answer = _serving(read_client, {"num_gpus": 1})
    relax = answer["serving"]["relax"]
    assert any("left out" in tip for tip in relax), relax
    lever = [tip for tip in relax if "instead of exactly 1 (constraints.num_gpus)" in tip]
    assert lever and "no card tried holds the model on 1 GPU" in lever[0], relax
    # the answer's empty.relax had said it alone
    assert any("exactly 1" in str(tip) for tip in answer["empty"]["relax"])


def test_a_gpu_cap_keeps_its_own_lever_and_no_second_one(read_client: TestClient) -> None:
    relax = _serving(read_client, {"max_gpus": 1})["serving"]["relax"]
    assert any(tip.startswith("raise constraints.max_gpus from 1 to") for tip in relax), relax
    assert not any("constraints.num_gpus" in tip for tip in relax)


def _lora(model: dict[str, Any]) -> dict[str, Any]:
    return {
        "workload": {"task": "fine-tuning", "peft": "lora", "lora_rank": 16, "model": model,
                     "seq_len": 512, "batch_size": 1},
        "constraints": {"max_gpus": 8},
        "limit": 3,
    }  # fmt: skip


def _echo_round_trip(client: TestClient, preset: str) -> None:
    first = client.post(URL, json={**_lora({}), "workload": {
        **_lora({})["workload"], "preset": preset, "model": None}})  # fmt: skip
    assert first.status_code == 200, first.text
    echoed = first.json()["workload"]["model"]
    model = {k: v for k, v in echoed.items() if k != "kv_bytes_per_token_16bit"}
    again = client.post(URL, json=_lora(model))
    assert again.status_code == 200, again.text
    assert again.json()["workload"]["model"] == echoed
    a, b = first.json()["recommendations"], again.json()["recommendations"]
    assert [r["memory"] for r in a] == [r["memory"] for r in b]
    # the adapter count is in the LoRA warning (without the ranks: generic q, k, v, o counts)
    lora = [[str(w) for w in r.json()["warnings"] if "adapter parameters" in str(w)]
            for r in (first, again)]  # fmt: skip
    assert lora[0] and lora[0] == lora[1], lora


def test_the_echo_carries_mla_ranks_and_posts_back_to_the_same_answer(
    read_client: TestClient,
) -> None:
    r = read_client.post(URL, json={"workload": {"preset": "deepseek-v3", "task": "inference"}})
    echoed = r.json()["workload"]["model"]
    assert (echoed["q_lora_rank"], echoed["kv_lora_rank"]) == (1536, 512)
    assert (echoed["qk_nope_head_dim"], echoed["qk_rope_head_dim"], echoed["v_head_dim"]) == (
        128, 64, 128)  # fmt: skip
    _echo_round_trip(read_client, "deepseek-v3")


def test_an_explicit_head_dim_is_echoed_and_posts_back(read_client: TestClient) -> None:
    r = read_client.post(URL, json={"workload": {"preset": "qwen3-30b-a3b", "task": "inference"}})
    assert r.json()["workload"]["model"]["explicit_head_dim"] == 128
    _echo_round_trip(read_client, "qwen3-30b-a3b")


def test_lora_width_warning_reads_the_explicit_head_dim(read_client: TestClient) -> None:
    body = {"workload": {"preset": "qwen3-30b-a3b", "task": "fine-tuning", "peft": "lora",
                         "lora_rank": 512}}  # fmt: skip
    r = read_client.post(URL, json=body)
    assert r.status_code == 200, r.text
    words = " ".join(str(w) for w in r.json()["warnings"])
    # 4 KV heads × 128 = 512 (hidden ÷ heads had said 256)
    assert "k and v projections' width (512)" in words, words
