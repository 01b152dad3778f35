"""An encoder-decoder's training memory prices each stack over its own positions (speech
review, 2026-12-05): Whisper's encoder over 1,500 audio positions per 30-second clip, its
decoder over the target tokens with a cross-attention block; and a decoder depth of its own
(large-v3-turbo: 32 encoder, 4 decoder layers)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import perf, seq2seq
from app.domain.workload import GB, ModelSpec, WorkloadSpec, activation_bytes, memory_breakdown
from tests.domain.test_seq2seq_inference import WHISPER_LARGE

# data/workloads.yaml whisper-large-v3 (config.json: d_model 1280, 32 + 32 layers, 20 heads)
LARGE = WHISPER_LARGE
# openai/whisper-large-v3-turbo: the same encoder, 4 decoder layers, 808,878,080 parameters
TURBO = replace(LARGE, params=808_878_080, decoder_layers=4)


def _train(model: ModelSpec = LARGE, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="fine-tuning", model=model, precision="fp16", batch_size=1, seq_len=448
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def _per_clip(work: WorkloadSpec, flash: bool = True) -> float:
    return activation_bytes(work, 2, flash_attention=flash) - activation_bytes(
        work, 1, flash_attention=flash
    )


def test_the_encoder_is_priced_over_1500_audio_positions_a_clip():
    # a pre-norm GELU layer under autocast with a fused kernel saves 40·h + 4 bytes a head per
    # token (GPT-2's layout, activations.decoder_layer_saved); the encoder alone is then
    # 32 layers × 1,500 positions of it, ~2.5 GB a clip — the review's ~42·h estimate
    encoder = 32 * 1500 * (40 * 1280 + 4 * 20)
    per_clip = _per_clip(_train())
    assert per_clip > encoder
    # the old price: one 448-token stack, 0.62 GB a clip
    assert per_clip > 4 * 0.62e9
    # text encoder-decoders keep the encoder over seq_len: fewer positions, less memory
    text = _per_clip(_train(replace(LARGE, input_size=None)))
    assert text < per_clip


def test_two_more_clips_cost_gigabytes_not_megabytes():
    # the review's A100 run: batch 2 → 32.06 GB, batch 4 → 32.13 GB (+0.06 GB for two clips)
    two = memory_breakdown(_train(batch_size=2, optimizer="adamw"), flash_attention=True)
    four = memory_breakdown(_train(batch_size=4, optimizer="adamw"), flash_attention=True)
    assert four.activations - two.activations > 2 * 4.0
    assert four.total - two.total > 2 * 3.5  # the gradients fill some of what they free


def test_eager_attention_matches_the_published_whisper_finetune_run():
    # yeyupiaoling/Whisper-Finetune issue #30 (large, LoRA, fp16, transformers of October
    # 2023: eager attention): ~37 GB a card at batch 2, 63 GB at batch 4 — ~13 GB a clip
    lora = _train(peft="lora")
    per_clip = _per_clip(lora, flash=False) / GB
    assert 10.0 < per_clip < 16.0


def test_checkpointing_keeps_both_stacks_layer_inputs():
    ckpt = activation_bytes(_train(gradient_checkpointing=True), 1, flash_attention=True)
    full = activation_bytes(_train(), 1, flash_attention=True)
    inputs = (32 * 1500 + 32 * 448) * 1280 * 4.0  # fp32 residual stream under autocast
    assert inputs < ckpt < full


def test_a_separate_decoder_depth_prices_the_decoder_stack_alone():
    assert seq2seq.decoder_layers(LARGE) == 32 and seq2seq.decoder_layers(TURBO) == 4
    assert seq2seq.encoder_params(TURBO) == seq2seq.encoder_params(LARGE)
    assert seq2seq.cross_kv_params(TURBO) == pytest.approx(seq2seq.cross_kv_params(LARGE) / 8)
    assert seq2seq.decoder_model(TURBO).layers == 4
    assert seq2seq.encoder_model(TURBO).cross_kv_layers == 4
    assert seq2seq.cross_kv_values(TURBO, 1500) == pytest.approx(
        seq2seq.cross_kv_values(LARGE, 1500) / 8
    )
    # training: the same encoder, 28 fewer decoder layers
    large, turbo = _per_clip(_train()), _per_clip(_train(TURBO))
    assert turbo < large
    encoder = 32 * 1500 * (40 * 1280 + 4 * 20)
    assert turbo > encoder


def test_the_turbo_decoder_steps_read_four_layers():
    work = WorkloadSpec(
        task="inference", model=TURBO, precision="fp16", seq_len=448, output_tokens=128
    )
    enc, dec = seq2seq.halves(work)
    assert dec.model.layers == 4 and enc.model.layers == 32
    assert enc.seq_len == 1500


def test_forward_flops_run_each_stack_over_its_own_positions():
    work = _train()
    flops = seq2seq.forward_flops(work)
    # the encoder's linears alone: 2 × 629 M parameters × 1,500 positions
    assert flops > 2 * seq2seq.encoder_params(LARGE) * 1500
    # perf prices an encoder-decoder's training step on it, not on the whole-model count
    # (2·P per token over the 448 target tokens, plus attention), which is well below it
    assert perf.forward_flops_per_sample(work) == flops
    p, s = LARGE.params, work.seq_len
    assert flops > 1.8 * (2.0 * p + 4.0 * (LARGE.layers or 0) * (LARGE.hidden_size or 0)) * s
