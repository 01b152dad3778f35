"""An encoder-decoder's inference (Whisper, T5, BART) as the engine prices it: the encoder's
one pass over its input, then ``output_tokens`` decoder steps.

Hugging Face ``generate`` (and openai/whisper's loop) runs the encoder once per input — a
prefill-like pass over its length: Whisper's 1,500 audio frames per 30-second window, a T5 or
BART input's ``seq_len`` tokens — and then the decoder autoregressively, one token per step:
each step a decoder forward with its self-attention KV cache growing by one token and a
cross-attention reading the encoder's K/V, which were projected once from the encoder's
output and are cached for every step (transformers' ``EncoderDecoderCache``; openai/whisper's
``kv_cache`` hooks on the cross-attention key/value modules). This module splits the model
into those two halves; app.domain.perf prices the encoder with the encoder operator path and
each decoder step with the one LLM step function (llm_step), so eager host dispatch and CUDA
graphs are each runtime's own. Pure.
"""

from __future__ import annotations

from dataclasses import replace

from app.domain.activations import (
    FP32,
    LOSS_BYTES_PER_LOGIT,
    UNFUSED_SCORE_BYTES,
    Policy,
    decoder_layer_saved,
    head_saved,
    softmax_input_bytes,
    softmax_saves_input,
)
from app.domain.workload import ModelSpec, WorkloadSpec, training_policy

# Whisper's encoder positions per second of audio: 100 log-Mel frames per second (10 ms hop),
# halved by the stride-2 second convolution of its stem: 1,500 positions for a 30-second
# window (config.json max_source_positions 1500; Radford et al. 2022, §2.2 and Figure 1).
# A preset gives its input in audio seconds (``ModelSpec.input_size``); the two convolutions of
# the stem (~16 GFLOPs for large-v3, under 1 % of its encoder pass) are not priced.
# https://github.com/openai/whisper/blob/main/whisper/audio.py (HOP_LENGTH 160 at 16 kHz,
# N_SAMPLES_PER_TOKEN = HOP_LENGTH * 2)
AUDIO_POSITIONS_PER_S = 50
# One Whisper input: 30 seconds of audio, padded or trimmed to it (openai/whisper audio.py
# CHUNK_LENGTH 30, N_SAMPLES; max_source_positions 1500 = 30 × AUDIO_POSITIONS_PER_S).
SPEECH_WINDOW_S = 30.0

# Kernels a decoder layer's cross-attention block adds to a decoder-only layer's
# (llm_step.KERNELS_PER_LAYER): its norm, query projection, attention and output projection
# (the K/V projections ran once, over the encoder's output); two of them GEMMs.
CROSS_ATTENTION_KERNELS = 4
CROSS_ATTENTION_GEMMS = 2


# Beam search reorders each sequence's caches after every step to follow the beams kept: a
# gather that reads and writes every reordered cache (bytes: 2 × the cache) and dispatches its
# calls from the host. Which caches, and the calls per decoder layer, are the runtime's:
# * transformers (``EncoderDecoderCache.reorder_cache``, cache_utils.py, v4.42+): the self- and
#   the cross-attention caches, each ``DynamicCache.reorder_cache`` running per layer
#   ``key.index_select(0, beam_idx.to(device))`` and the same for the value: 4 calls a cache,
#   8 a layer;
# * a bare eager loop (openai/whisper's ``PyTorchInference.rearrange_kv_cache``): the
#   self-attention key and value tensors of each layer (its current releases index only the
#   ``kv_modules`` of self-attention; the 2022–23 releases indexed every cached tensor), each
#   ``tensor[source_indices].detach()``: 4 calls a layer.
# https://github.com/huggingface/transformers/blob/v4.46.3/src/transformers/cache_utils.py
# https://github.com/openai/whisper/blob/main/whisper/decoding.py
BEAM_REORDER: dict[str, tuple[bool, float]] = {  # runtime: (cross cache too, calls a layer)
    "transformers": (True, 8.0),
    "pytorch": (False, 4.0),
}


# Host calls per decoder layer and step of openai/whisper's own loop (runtime ``pytorch``), in
# place of the decode profile's bare-loop ``ops_per_layer`` (45, a hand-written Llama loop):
# its ``ResidualAttentionBlock`` is nn.Module code, each torch call and each module call counted
# once (whisper/model.py, e.g. fdf63e51, the SDPA-era file): the block (1); three LayerNorms,
# each module + ``x.float()`` + ``layer_norm`` + ``.type`` (12); self-attention: the module (1),
# query / out Linears, each module + ``weight.to`` + ``bias.to`` + ``F.linear`` (8), key (no
# bias) and value Linears under the kv-cache forward hook, + ``torch.cat`` + ``.detach`` (5 +
# 6), three ``view``/``permute`` pairs, SDPA, ``permute``/``flatten`` (9); cross-attention: the
# module, query, out and the same attention without K/V projections (18); the MLP: Sequential,
# two Linears, GELU module + call (11); three residual adds (3) — 74. By the same rule
# transformers' ``LlamaDecoderLayer`` makes ~68 torch calls + 14 module calls = 82, against the
# 81 op-equivalents its generate() row is priced at (data/efficiency.yaml, transformers decode):
# the rule reproduces the one measured eager figure, at the profile's own µs per op.
LAYER_CALLS: dict[str, float] = {"pytorch": 74.0}


def layer_calls(runtime: str) -> float | None:
    """Host calls per decoder layer and step of ``runtime``'s encoder-decoder loop where they
    are counted (openai/whisper's for ``pytorch``); None: the decode profile's ops_per_layer."""
    return LAYER_CALLS.get(runtime)


def search_calls(runtime: str, seqs: float, beams: int) -> float:
    """Host calls openai/whisper's loop (runtime ``pytorch``) makes per decoder step outside the
    model, counted from whisper/decoding.py (as stored at c09a7ae; ``transcribe()`` runs with
    timestamps, so ApplyTimestampRules is on). They run after a device sync — the timestamp
    rules' ``tokens[k].tolist()`` waits for the step's forward — so the GPU idles through them:
    the step is max(GPU, dispatch) + these, not a max. ``seqs`` = batch × beams sequences.

    * the logit filters, every step: ``tokens[:, -1:]``, ``logits[:, -1]``, SuppressTokens'
      index fill, the no-timestamps fill, ``log_softmax(logits.float())`` (6); per sequence the
      pairing and monotonic rules (``tokens[k, b:]``, ``.tolist()``, ``.ge``, the mask index,
      ``numel``, ``[-1]``, ``+ 1``, the slice fill: 8) and the timestamp-probability rule (two
      slices, ``logsumexp``, ``max``, ``>``, its ``bool``: 6) — 14;
    * beam search (``BeamSearchDecoder.update``): ``log_softmax(logits.float())`` and
      ``torch.tensor(next_tokens)`` (3); per sequence ``tokens[idx]``, ``.tolist()``,
      ``logprobs[idx]``, ``topk(beams + 1)``, iterating its two results (6), per candidate
      ``sum_logprobs[idx]``, ``+``, ``.item()``, ``token.item()`` (4 × (beams + 1)) and the
      kept score's write (1);
    * greedy (``GreedyDecoder.update``): ~17 vectorised calls and the ``completed`` check's
      ``bool`` (18), none per sequence.

    Other runtimes: 0 (transformers' generate() is priced by its decode row's 81 op-equivalents;
    its WhisperTimeStampLogitsProcessor ports the same per-sequence rules but runs only where
    generate() predicts timestamps, and its beam scorer changed across releases: not counted)."""
    if runtime != "pytorch":
        return 0.0
    filters = 6.0 + 14.0 * seqs
    if beams > 1:
        return filters + 3.0 + seqs * (7.0 + 4.0 * (beams + 1))
    return filters + 18.0


def beam_reorder(runtime: str) -> tuple[bool, float]:
    """(whether the cross-attention cache is reordered too, host calls per decoder layer) of
    a beam-search step under ``runtime``; a runtime without a row reorders the self-attention
    cache alone and dispatches nothing from the host for it (a compiled or graphed loop)."""
    return BEAM_REORDER.get(runtime, (False, 0.0))


def is_seq2seq_inference(work: WorkloadSpec) -> bool:
    """Whether the job is an encoder-decoder's inference with a known shape."""
    m = work.model
    return work.task == "inference" and m.family == "encoder-decoder" and m.has_shape


def encoder_tokens(work: WorkloadSpec) -> int:
    """Positions the encoder runs over per input: audio seconds × ``AUDIO_POSITIONS_PER_S``
    where the preset gives its input in seconds (Whisper), else the job's ``seq_len``."""
    m = work.model
    if m.input_size:
        return round(float(m.input_size) * AUDIO_POSITIONS_PER_S)
    return max(1, int(work.seq_len))


def decoder_layers(m: ModelSpec) -> int:
    """The decoder stack's depth: ``decoder_layers`` where the model states it (Whisper
    large-v3-turbo: 4 under a 32-layer encoder, config.json decoder_layers), else ``layers``
    (a preset's ``layers`` is each stack's depth: Whisper large-v3 32 and 32)."""
    return int(m.decoder_layers or m.layers or 0)


def encoder_params(m: ModelSpec) -> float:
    """The encoder stack's parameters: layers × (Q, K, V, O: 4·h² + a plain MLP: 2·h·I).
    ``layers`` is the encoder's depth (config.json encoder_layers); the decoder's is
    ``decoder_layers``."""
    h = float(m.hidden_size or 0)
    inter = float(m.intermediate_size or 4 * h)
    return float(m.layers or 0) * (4.0 * h * h + 2.0 * h * inter)


def cross_kv_params(m: ModelSpec) -> float:
    """The decoder's cross-attention K and V projections (2·h² a layer), which run once per
    input over the encoder's output, not at every decoder step."""
    h = float(m.hidden_size or 0)
    return float(decoder_layers(m)) * 2.0 * h * h


def encoder_model(m: ModelSpec) -> ModelSpec:
    """The encoder half as an encoder-only model (no token embedding: Whisper's input is the
    convolution stem's output; a T5/BART embedding lookup is a negligible gather)."""
    return ModelSpec(
        family="encoder",
        params=encoder_params(m),
        layers=m.layers,
        hidden_size=m.hidden_size,
        num_heads=m.num_heads,
        num_kv_heads=m.num_kv_heads,
        intermediate_size=m.intermediate_size,
        cross_kv_layers=decoder_layers(m),
    )


def decoder_model(m: ModelSpec) -> ModelSpec:
    """The decoder half as a decoder-only model of what a step reads: everything but the
    encoder and the cross-attention K/V projections (the embedding, tied to the LM head, the
    self- and cross-attention Q/O, the MLP)."""
    params = max(m.params - encoder_params(m) - cross_kv_params(m), 1.0)
    return ModelSpec(
        family="decoder",
        params=params,
        layers=decoder_layers(m),
        hidden_size=m.hidden_size,
        num_heads=m.num_heads,
        num_kv_heads=m.num_kv_heads,
        intermediate_size=m.intermediate_size,
        vocab_size=m.vocab_size,
        max_context=m.max_context,
        tied_embeddings=True,
    )


def cross_kv_values(m: ModelSpec, enc_tokens: float) -> float:
    """K+V values one input's cross-attention cache holds over the decoder's layers:
    2 × decoder layers × heads × head size × encoder positions."""
    h = float((m.kv_heads or 1) * (m.head_dim or 0))
    return 2.0 * float(decoder_layers(m)) * h * enc_tokens


def halves(work: WorkloadSpec) -> tuple[WorkloadSpec, WorkloadSpec]:
    """(the encoder's pass, the decoder's steps) as jobs of their own, kept on the job's spec:
    the encoder over ``encoder_tokens`` at the job's batch; the decoder over the job's batch ×
    ``beams`` sequences, ``output_tokens`` steps."""
    hit = work.derived.get(("seq2seq",))
    if isinstance(hit, tuple):
        return hit
    m = work.model
    enc = replace(work, model=encoder_model(m), seq_len=encoder_tokens(work), output_tokens=0)
    dec = replace(
        work,
        model=decoder_model(m),
        batch_size=work.batch_size * max(1, work.beams),
        seq_len=1,
        beams=1,
    )
    work.derived[("seq2seq",)] = (enc, dec)
    return enc, dec


# ---------------------------------------------------------------- training: each stack's own


def _policy(work: WorkloadSpec, act_bytes: float) -> Policy:
    """How the job holds its tensors (workload.training_policy); 4-byte activations asked for
    outright (an fp32 job) are fp32 throughout."""
    pol = training_policy(work)
    return FP32 if act_bytes >= 4.0 and pol.compute < 4.0 else pol


def _self_layer(
    m: ModelSpec, pol: Policy, seq: float, flash_attention: bool, softmax_input: bool
) -> tuple[float, float]:
    """(bytes per token one self-attention layer saves, its norm's share): a pre-norm layer
    as activations.decoder_layer_saved counts it (Whisper's encoder and decoder layers are
    GPT-2's layout: LayerNorm, attention, LayerNorm, GELU MLP — 40·h + 4 bytes a head per
    token under autocast with a fused kernel), or a preset's measured coefficient."""
    ops = decoder_layer_saved(
        m, pol, seq=seq, flash_attention=flash_attention, softmax_input=softmax_input
    )
    norm = ops["attention norm"]
    if m.activation_coeff is not None and pol.name == "autocast":
        h = float(m.hidden_size or 0)
        scores = sum(v for k, v in ops.items() if k in ("scores and softmax", "softmax input"))
        return m.activation_coeff * h + scores, norm
    return sum(ops.values()), norm


def _cross_block(
    m: ModelSpec,
    pol: Policy,
    enc_tokens: float,
    norm: float,
    flash_attention: bool,
    softmax_input: bool,
) -> tuple[float, float]:
    """(bytes per decoder token, bytes per encoder position) one decoder layer's
    cross-attention block saves. Per decoder token: its norm, the query projection's input and
    output, the attention's output (the output projection's input), and fused attention's
    fp32 log-sum-exp per head — or, unfused, the scores over the encoder's positions. Per
    encoder position: the K and V projections' outputs, which every decoder layer computes
    from the encoder's output, and under autocast each projection's own 16-bit cast of that
    fp32 output (activations.Policy.recast; held once, and counted once, otherwise)."""
    h = float(m.hidden_size or 0)
    heads = float(m.num_heads or 1)
    kv = float(m.kv_heads or 1) * float(m.head_dim or 0)
    c = pol.compute
    per_token = norm + 3.0 * c * h
    if flash_attention:
        per_token += 4.0 * heads
    else:
        per_token += UNFUSED_SCORE_BYTES * heads * enc_tokens * c / 2.0
        if softmax_input:
            per_token += softmax_input_bytes(pol, heads, enc_tokens)
    per_position = 2.0 * c * kv + (2.0 * c * h if pol.recast else 0.0)
    return per_token, per_position


def training_activation_bytes(
    work: WorkloadSpec,
    batch: float,
    *,
    flash_attention: bool,
    act_bytes: float = 2.0,
    checkpointing: bool = False,
) -> float:
    """Bytes an encoder-decoder's training step saves for backward (its peak, logits and
    loss included), each stack over its own positions: the encoder's ``layers`` over
    ``encoder_tokens`` (Whisper: 1,500 audio positions per 30-second clip), the decoder's
    ``decoder_layers`` over the target tokens (``seq_len``: Whisper's labels, at most
    max_target_positions 448), each decoder layer with its cross-attention block over the
    encoder's output (its K and V over every encoder position: ``_cross_block``).

    Under full recompute (Transformers' Whisper, BART and T5 checkpoint every encoder and
    decoder layer) the layer inputs of both stacks stay, with the encoder's output every
    decoder layer reads, plus the larger of the head and loss (first in backward) and one
    layer's recompute, as for a decoder (workload.saved_activations). Not counted: Whisper's
    convolution stem (~19 MB a clip for large-v3 against ~4 GB of layers)."""
    m = work.model
    pol = _policy(work, act_bytes)
    old = not flash_attention and softmax_saves_input(work.torch_version)
    h = float(m.hidden_size or 0)
    t_enc = float(encoder_tokens(work))
    t_dec = float(max(1, work.seq_len))
    l_enc, l_dec = float(m.layers or 0), float(decoder_layers(m))
    enc_layer, enc_norm = _self_layer(m, pol, t_enc, flash_attention, old)
    dec_self, dec_norm = _self_layer(m, pol, t_dec, flash_attention, old)
    cross_tok, cross_pos = _cross_block(m, pol, t_enc, dec_norm, flash_attention, old)
    # the encoder's final norm, and its output held once where no projection recasts it
    enc_out = enc_norm * t_enc + (0.0 if pol.recast else pol.compute * h * t_enc)
    head = head_saved(m, pol) * t_dec
    logits = t_dec * float(m.vocab_size or 0) * (LOSS_BYTES_PER_LOGIT + pol.compute)
    dec_layer = (dec_self + cross_tok) * t_dec + cross_pos * t_enc
    if checkpointing:
        inputs = (l_enc * t_enc + l_dec * t_dec + t_enc) * h * pol.residual
        one = max(enc_layer * t_enc, dec_layer)
        per_sample = inputs + enc_norm * t_enc + max(head + logits, one)
    else:
        per_sample = l_enc * enc_layer * t_enc + enc_out + l_dec * dec_layer + head + logits
    return per_sample * batch


def forward_flops(work: WorkloadSpec) -> float:
    """One training sample's forward FLOPs, each stack over its own positions: the encoder's
    parameters × 2 per encoder position, the decoder's cross-attention K/V projections × 2 per
    encoder position, the rest × 2 per target token (``seq_len``); attention 4·h per query
    and key: the encoder's self-attention over its positions, the decoder's over its tokens
    and across to the encoder's positions. Pure: perf.forward_flops_per_sample takes it for
    an encoder-decoder's training where it is wired."""
    m = work.model
    h = float(m.hidden_size or 0)
    t_enc = float(encoder_tokens(work))
    t_dec = float(max(1, work.seq_len))
    enc, cross = encoder_params(m), cross_kv_params(m)
    rest = max(m.params - enc - cross, 0.0)
    linear = 2.0 * (enc + cross) * t_enc + 2.0 * rest * t_dec
    attn = (
        4.0
        * h
        * (
            float(m.layers or 0) * t_enc * t_enc
            + float(decoder_layers(m)) * t_dec * (t_dec + t_enc)
        )
    )
    return linear + attn
