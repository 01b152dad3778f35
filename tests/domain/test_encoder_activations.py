"""A BERT-style encoder layer's saved tensors per policy: torch.autocast keeps LayerNorm and
softmax in fp32 (42·h + 7·a·s per token), a half-precision model (apex AMP O2) is K22's
all-16-bit 34·h + 5·a·s (methodology §1)."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain.activations import AUTOCAST, FP32, PURE16, Policy, encoder_layer_saved
from app.domain.workload import WorkloadSpec, saved_activations
from tests.domain.fixtures import BERT_LARGE

H, A, S = 1024, 16, 512


def _per_token(policy: Policy, *, flash_attention: bool) -> float:
    saved = encoder_layer_saved(BERT_LARGE, policy, seq=S, flash_attention=flash_attention)
    return sum(saved.values())


def test_autocast_layer_keeps_fp32_norms_and_probabilities() -> None:
    # what saved-tensor hooks count on Transformers' 2022 BertLayer (benchmarks/encoder_saved.py)
    assert _per_token(AUTOCAST, flash_attention=False) == pytest.approx(42 * H + 7 * A * S)
    assert _per_token(FP32, flash_attention=False) == pytest.approx(66 * H + 9 * A * S)


def test_half_model_layer_is_korthikanti_all_16_bit() -> None:
    assert _per_token(PURE16, flash_attention=False) == pytest.approx(34 * H + 5 * A * S)


def test_fused_attention_keeps_no_scores() -> None:
    eager = encoder_layer_saved(BERT_LARGE, AUTOCAST, seq=S, flash_attention=False)
    fused = encoder_layer_saved(BERT_LARGE, AUTOCAST, seq=S, flash_attention=True)
    assert "scores and softmax" in eager and "scores and softmax" not in fused
    assert fused["log-sum-exp"] == 4.0 * A


def _work(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="training", model=BERT_LARGE, precision="fp16", batch_size=4, seq_len=S
    )
    return WorkloadSpec(**{**base, **kw})  # type: ignore[arg-type]


def test_autocast_encoder_job_counts_the_autocast_layer() -> None:
    """An fp16 encoder job runs torch.autocast unless its weights are 16-bit (half_weights:
    apex AMP O2, as DeepLearningExamples' BERT scripts run), which keeps K22's count."""
    tokens, layers = 4 * S, 24
    amp, _ = saved_activations(_work(), 4, flash_attention=False)
    assert amp == pytest.approx(layers * tokens * (42 * H + 7 * A * S))
    half, _ = saved_activations(_work(half_weights=True), 4, flash_attention=False)
    assert half == pytest.approx(layers * tokens * (34 * H + 5 * A * S))
    old, _ = saved_activations(_work(torch_version="1.10"), 4, flash_attention=False)
    assert old - amp == pytest.approx(4.0 * A * S * tokens * layers)  # fp32 softmax input
    ckpt = dataclasses.replace(_work(), gradient_checkpointing=True)
    assert saved_activations(ckpt, 4, flash_attention=False)[0] < half
