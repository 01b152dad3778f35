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

from app.domain.workload import ModelSpec, WorkloadSpec

# Whisper's encoder positions per second of audio: 100 log-Mel frames per second (10 ms hop),
# halved by the stride-2 second convolution of its stem: 1,500 positions for a 30-second
# window (config.json max_source_positions 1500; Radford et al. 2022, §2.2 and Figure 1).
# A preset gives its input in audio seconds (``ModelSpec.input_size``); the two convolutions of
# the stem (~16 GFLOPs for large-v3, under 1 % of its encoder pass) are not priced.
# https://github.com/openai/whisper/blob/main/whisper/audio.py (HOP_LENGTH 160 at 16 kHz,
# N_SAMPLES_PER_TOKEN = HOP_LENGTH * 2)
AUDIO_POSITIONS_PER_S = 50

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


def encoder_params(m: ModelSpec) -> float:
    """The encoder stack's parameters: layers × (Q, K, V, O: 4·h² + a plain MLP: 2·h·I).
    A preset's ``layers`` is each stack's depth (Whisper large-v3: 32 encoder and 32 decoder
    layers, config.json encoder_layers / decoder_layers)."""
    h = float(m.hidden_size or 0)
    inter = float(m.intermediate_size or 4 * h)
    return float(m.layers or 0) * (4.0 * h * h + 2.0 * h * inter)


def cross_kv_params(m: ModelSpec) -> float:
    """The decoder's cross-attention K and V projections (2·h² a layer), which run once per
    input over the encoder's output, not at every decoder step."""
    h = float(m.hidden_size or 0)
    return float(m.layers or 0) * 2.0 * h * h


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
        cross_kv_layers=m.layers,
    )


def decoder_model(m: ModelSpec) -> ModelSpec:
    """The decoder half as a decoder-only model of what a step reads: everything but the
    encoder and the cross-attention K/V projections (the embedding, tied to the LM head, the
    self- and cross-attention Q/O, the MLP)."""
    params = max(m.params - encoder_params(m) - cross_kv_params(m), 1.0)
    return ModelSpec(
        family="decoder",
        params=params,
        layers=m.layers,
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
    2 × layers × heads × head size × encoder positions."""
    h = float((m.kv_heads or 1) * (m.head_dim or 0))
    return 2.0 * float(m.layers or 0) * h * enc_tokens


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
