"""An encoder's inference (embeddings, classification, extractive QA) computes no vocabulary
logits: its transient memory is one layer's activations, not b × s × vocab in fp32 (the
batch-inference review: BERT-base at batch 256 × 512 was charged 16 GB of masked-LM logits)."""

from __future__ import annotations

import dataclasses

from app.domain.workload import ModelSpec, WorkloadSpec, _inference_workspace
from tests.domain.test_serving import LLAMA8

BERT_BASE = ModelSpec(
    family="encoder", params=110e6, layers=12, hidden_size=768, num_heads=12, num_kv_heads=12,
    intermediate_size=3072, vocab_size=30522, max_context=512,
)  # fmt: skip
LLAMA_8B = LLAMA8  # tests/domain/test_serving.py


def _ws(model: ModelSpec, batch: int, seq: int) -> float:
    job = WorkloadSpec(
        task="inference", model=model, precision="fp16", batch_size=batch, seq_len=seq
    )
    return _inference_workspace(job, 2.0)


def test_encoder_workspace_has_no_vocabulary_logits() -> None:
    ws = _ws(BERT_BASE, 256, 512)
    one_layer = 512 * 256 * (2 * 768 + 2 * 3072) * 2.0
    assert ws == one_layer
    assert ws / 1e9 < 2.1  # was 18 GB with 16 GB of logits


def test_decoder_keeps_the_last_tokens_logits() -> None:
    without_vocab = _ws(dataclasses.replace(LLAMA_8B, vocab_size=0), 4, 1000)
    assert _ws(LLAMA_8B, 4, 1000) - without_vocab == 4 * 128256 * 4.0
