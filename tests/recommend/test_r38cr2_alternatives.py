"""The closing review's second round: an alternative no faster than a cheaper one is still
listed where it buys what that one lacks (memory room, a latency target); the row counts what
it left out, and the page says it only when something was; a pure 16-bit job's precision is
not called mixed; LoRA's paged 32-bit states stay fp32 in pure 16-bit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.domain import rank
from app.domain.workload import memory_breakdown
from app.web.labels import precision_label
from tests.domain.fixtures import LLAMA31_8B, llama31_8b_finetune


def _llama(client: TestClient, **workload: Any) -> Any:
    body = {"workload": {"preset": "llama-3-8b", "task": "inference", **workload}, "limit": 5}
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return r.json()["recommendations"]


def test_a_tight_row_keeps_the_roomier_configuration_it_would_have_dropped(
    read_client: TestClient,
) -> None:
    rows = _llama(read_client, batch_size=5, seq_len=7000, output_tokens=1000)
    tight = [r for r in rows if r["num_gpus"] == 1 and any("headroom" in t for t in r["tips"])]
    assert tight, [(r["gpu"]["slug"], r["num_gpus"]) for r in rows]
    for r in tight:
        assert any(a["num_gpus"] > 1 for a in r["alternatives"]), r["gpu"]["slug"]


def test_each_row_counts_what_it_left_out(read_client: TestClient) -> None:
    rows = _llama(read_client, batch_size=1)
    assert any(r["alternatives_left_out"] > 0 for r in rows)
    assert all(r["alternatives_left_out"] >= 0 for r in rows)


def test_the_page_says_left_out_only_where_something_was(read_client: TestClient) -> None:
    page = read_client.get("/recommendations?preset=llama-3-8b&limit=3")
    assert page.status_code == 200
    answer = read_client.get("/recommendations.json?preset=llama-3-8b&limit=3").json()
    left = [r["alternatives_left_out"] for r in answer["recommendations"]]
    assert page.text.count("data-left-out") == sum(1 for n in left if n > 0)


class _Mem:
    def __init__(self, total: float) -> None:
        self.total = total


class _Perf:
    def __init__(self, tput: float) -> None:
        self.throughput, self.unit = tput, "tokens/s"


class _Cand:
    """The fields _dominates reads: speed, price, memory against the card, latency."""

    def __init__(self, tput: float, n: int, total: float, meets: bool | None = None) -> None:
        self.perf, self.n, self.memory = _Perf(tput), n, _Mem(total)
        self.available_gb, self.meets_latency = 24.0, meets
        self.cost, self.acquisition = None, "buy"


@pytest.fixture
def unpriced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank, "_price", lambda c: None)


@pytest.mark.usefixtures("unpriced")
def test_the_rule_on_its_own() -> None:
    one, two = _Cand(100.0, 1, 12.0), _Cand(101.0, 2, 7.0)
    assert rank._dominates(one, two)  # type: ignore[arg-type]
    tight = _Cand(100.0, 1, 23.0)
    assert not rank._dominates(tight, two)  # type: ignore[arg-type]
    misses, meets = _Cand(100.0, 1, 12.0, False), _Cand(101.0, 2, 7.0, True)
    assert not rank._dominates(misses, meets)  # type: ignore[arg-type]
    assert not rank._dominates(one, _Cand(120.0, 2, 7.0))  # type: ignore[arg-type]


def test_pure_16bit_training_is_not_called_mixed() -> None:
    assert precision_label("bf16", "fine-tuning", "decoder", "pytorch") == "BF16 mixed precision"
    assert precision_label("bf16", "fine-tuning", "decoder", "pytorch", "none") == "BF16"


LLAMA = LLAMA31_8B  # config.json of meta-llama/Llama-3.1-8B


def test_loras_paged_32bit_states_stay_fp32_in_pure_16bit() -> None:
    base = llama31_8b_finetune(optimizer="adamw", peft="lora")
    mixed = memory_breakdown(replace(base, optimizer="adamw"))
    pure = memory_breakdown(replace(base, fp32_master=False))
    pure_paged_all = replace(base, fp32_master=False, paged_optimizer=True)
    # resident: a torch AdamW's states follow the 16-bit adapters, half the mixed job's
    assert pure.optimizer == pytest.approx(mixed.optimizer / 2)
    # paged: bitsandbytes' 32-bit states are fp32, so the one layer held is mixed's / layers
    paged = memory_breakdown(pure_paged_all)
    assert paged.optimizer == pytest.approx(mixed.optimizer / LLAMA.layers)  # type: ignore[operator]
    assert not any("optimizer states in 16-bit" in n for n in paged.notes)
