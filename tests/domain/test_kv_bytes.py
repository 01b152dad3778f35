"""A one-job inference keeps its KV cache at the vocabulary's KV bytes for its precision, not
at its weights' bytes: a new sub-byte precision must not get a sub-byte KV cache."""

from __future__ import annotations

import pytest

from app.domain.workload import GB, ModelSpec, WorkloadSpec, kv_cache_bytes, memory_breakdown
from app.vocab import KV_BYTES_PER_ELEMENT, PRECISIONS

LLAMA_8B = ModelSpec(
    params=8.03e9, family="decoder", layers=32, hidden_size=4096, num_heads=32, num_kv_heads=8
)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_kv_cache_bytes_come_from_the_vocabulary(precision: str) -> None:
    work = WorkloadSpec(
        model=LLAMA_8B, task="inference", precision=precision, batch_size=4, seq_len=4096
    )
    kv = memory_breakdown(work).kv_cache
    assert kv == pytest.approx(kv_cache_bytes(work, KV_BYTES_PER_ELEMENT[precision]) / GB)
    assert kv > 0


def test_fp4_weights_keep_a_16_bit_kv_cache() -> None:
    # fp4 is in the vocabulary but not yet modelled: exactly where a new precision starts.
    # Its weights are 4.5 bits with scales; its KV cache must stay 16-bit, as int4's does.
    def kv(precision: str) -> float:
        work = WorkloadSpec(
            model=LLAMA_8B, task="inference", precision=precision, batch_size=1, seq_len=8192
        )
        return memory_breakdown(work).kv_cache

    assert kv("fp4") == pytest.approx(kv("int4")) == pytest.approx(kv("bf16"))
    assert kv("fp4") > 0
