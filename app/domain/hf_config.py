"""A Hugging Face ``config.json`` → the model shape the engine needs.

Parameter counts are summed from the tensors the Transformers implementation of each
``model_type`` creates (embeddings, attention projections with their biases, gated or plain
MLPs, routed and shared experts, routers, norms), so a model that is not a preset gets its
total and active-per-token counts from its config alone. Nothing is fetched: the caller passes
the file's contents. Checked in tests against the published totals (Llama-3.1-8B 8.03B,
Qwen2.5-7B 7.62B, Mixtral-8x7B 46.7B / 12.9B active, DeepSeek-V3 671B / 37B active,
gpt-oss-120b 116.8B).

KV cache per token follows what serving runtimes store: K and V per KV head (grouped-query
aware, explicit ``head_dim`` honoured) on every layer; multi-head latent attention
(DeepSeek-V2/V3) stores one compressed latent of ``kv_lora_rank + qk_rope_head_dim`` values per
layer; sliding-window layers (Mistral v0.1, Gemma 2/3, gpt-oss) keep at most ``sliding_window``
tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from app.domain.seq2seq import AUDIO_POSITIONS_PER_S

# Model types whose MLP is gated (SwiGLU/GeGLU: gate, up and down projections).
GATED = frozenset(
    {
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
        "gemma2", "gemma3", "gemma3_text", "phi3", "phimoe", "deepseek_v2", "deepseek_v3",
        "gpt_oss", "olmo", "olmo2", "granite", "cohere", "cohere2", "internlm2", "yi",
        "mistral3", "ministral", "exaone", "glm", "glm4", "starcoder2_gated", "smollm3",
    }
)  # fmt: skip
# Model types that tie the output projection to the input embedding when the file is silent
# (each Transformers config class has its own default).
TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "phi"})
# Defaults of Transformers config classes for keys a config.json may leave out.
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262208, "sliding_window_pattern": 6,
                    "max_position_embeddings": 131072},
}  # fmt: skip
# The largest value read for each kind of key: the bounds the request puts on the same field
# typed in (app/recommend/schemas.py takes them from here), so a pasted config.json is held to
# what a person may type. Beyond them a config is a typo or a hostile input, not a model: its
# sums would overflow floats or walk millions of layers.
MAX_LAYERS = 1000
MAX_HIDDEN = 200_000  # widths and per-head or latent dimensions
MAX_HEADS = 1024
MAX_FFN = 1_000_000
MAX_VOCAB = 10_000_000
MAX_EXPERTS = 4096
MAX_SHARED_EXPERTS = 64
# max_position_embeddings caps the context asked for; published configs reach 10,485,760
# (Llama 4 Scout), so the bound sits well beyond that rather than at the longest context
# the engine prices.
MAX_POSITIONS = 1 << 27
ENCODERS = frozenset({"bert", "roberta", "deberta", "deberta-v2", "distilbert", "electra"})
# Encoder-decoder model types read: Whisper (WhisperConfig: encoder_layers, decoder_layers,
# d_model, encoder_attention_heads, encoder_ffn_dim, num_mel_bins, max_source_positions,
# max_target_positions), priced by app.domain.seq2seq over its audio positions.
READ_ENCODER_DECODERS = frozenset({"whisper"})
# Encoder-decoder model types refused (their shapes — relative position biases, separate
# encoder and decoder widths — are not read); any other config saying is_encoder_decoder is
# refused the same way rather than read as a decoder.
ENCODER_DECODERS = frozenset(
    {
        "t5", "mt5", "umt5", "longt5", "bart", "mbart", "pegasus", "pegasus_x", "marian",
        "m2m_100", "nllb-moe", "fsmt", "led", "blenderbot", "blenderbot-small", "prophetnet",
        "plbart", "switch_transformers", "speech_to_text", "speecht5", "seamless_m4t",
        "seamless_m4t_v2", "moonshine",
    }
)  # fmt: skip
# Speech encoders over audio frames (wav2vec 2.0 and its descendants: a convolutional feature
# encoder, then a transformer encoder, usually with a CTC head): no decoder, no KV cache, no
# tokens per second. Their configs carry a vocabulary (the CTC head's), so without this list
# they had been read as decoder LLMs. Any config with the feature encoder's keys
# (``feat_extract_norm``, ``conv_dim``) is refused the same way.
AUDIO_ENCODERS = frozenset(
    {
        "wav2vec2", "wav2vec2-conformer", "wav2vec2-bert", "hubert", "wavlm",
        "data2vec-audio", "sew", "sew-d", "unispeech", "unispeech-sat",
        "audio-spectrogram-transformer", "clap_audio_model", "mctct",
    }
)  # fmt: skip
SUPPORTED = (
    "hf_config reads decoder language models, BERT-style encoders and Whisper (model_type "
    "whisper) configs"
)
# Vision model types of Transformers (image classifiers and backbones): no vocabulary, and the
# convolutional ones no single hidden_size; hf_config reads language models only.
VISION = frozenset(
    {
        "vit", "deit", "beit", "dinov2", "swin", "swinv2", "vit_mae", "vit_msn", "dit",
        "convnext", "convnextv2", "resnet", "regnet", "efficientnet", "mobilenet_v1",
        "mobilenet_v2", "mobilevit", "levit", "poolformer", "van", "bit", "dinat", "nat",
        "clip_vision_model", "siglip_vision_model", "segformer", "yolos", "detr",
    }
)  # fmt: skip
# What a vision model is given as instead (the request's own model fields)
VISION_INSTEAD = (
    "hf_config reads decoder and encoder language-model configs only; describe a vision model "
    "with the model fields instead: family 'vit' with params, layers, hidden_size, num_heads "
    "and input_size, or family 'cnn' with params, gflops_per_sample (forward GFLOPs per "
    "image, 2 × MACs) and input_size"
)


class HfConfigError(ValueError):
    """A config the engine cannot read; ``field`` names the key inside config.json."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True, slots=True)
class HfModel:
    model_type: str
    family: str
    params: float
    active_params: float | None
    layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_context: int | None
    experts: int | None
    active_experts: int | None
    shared_experts: int | None
    attention: str  # mha | gqa | mqa | mla
    # K+V values cached per token, summed over the layers that keep every token …
    kv_elements_per_token: float
    # … and over the sliding-window layers, which keep at most ``sliding_window`` tokens.
    kv_window_elements_per_token: float
    sliding_window: int | None
    tied_embeddings: bool
    # gate, up and down projections (SwiGLU/GeGLU) rather than up and down (GELU/ReLU): what
    # the parameter count above assumed, and what the activations saved for backward follow
    # (``ModelSpec.gated_mlp``, activations.gated_mlp)
    gated_mlp: bool
    # An encoder-decoder's decoder depth (``layers`` is then the encoder's) and its input in
    # seconds of audio (Whisper: max_source_positions ÷ 50 positions a second = 30); None for
    # decoders and encoders
    decoder_layers: int | None = None
    input_size: float | None = None
    # MLA's (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim): the
    # shapes of its attention projections; None for other attention
    latent: tuple[int, int, int, int, int] | None = None

    def kv_bytes_per_token(self, bytes_per_value: float = 2.0) -> float:
        """KV bytes per token of context, counting sliding-window layers as full ones."""
        return (self.kv_elements_per_token + self.kv_window_elements_per_token) * bytes_per_value

    def kv_bytes(self, context: int, bytes_per_value: float = 2.0) -> float:
        """KV bytes for one sequence of ``context`` tokens."""
        window = min(context, self.sliding_window or context)
        per = self.kv_elements_per_token * context + self.kv_window_elements_per_token * window
        return per * bytes_per_value


def _int(cfg: dict[str, Any], *names: str, most: int, default: int | None = None) -> int | None:
    for name in names:
        value = cfg.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise HfConfigError(f"{name} must be a non-negative number", field=name)
        # JSON as Python reads it also carries Infinity and NaN
        if (isinstance(value, float) and not math.isfinite(value)) or value > most:
            raise HfConfigError(f"{name} must be at most {most:,}", field=name)
        return int(value)
    return default


def _need(cfg: dict[str, Any], *names: str, most: int) -> int:
    value = _int(cfg, *names, most=most)
    if value is None or value <= 0:
        raise HfConfigError(f"config.json has no {' / '.join(names)}", field=names[0])
    return value


def _text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Multimodal wrappers (Gemma 3, Mistral 3, Llama 4) keep the LLM under text_config."""
    inner = cfg.get("text_config")
    if isinstance(inner, dict) and "hidden_size" not in cfg:
        merged = {k: v for k, v in cfg.items() if k != "text_config"}
        merged.update(inner)
        return merged
    return cfg


def _layer_kinds(cfg: dict[str, Any], layers: int) -> list[bool]:
    """True for each sliding-window layer."""
    window = cfg.get("sliding_window")
    if not window or cfg.get("use_sliding_window") is False:
        return [False] * layers
    kinds = cfg.get("layer_types")
    if isinstance(kinds, list) and len(kinds) == layers:
        return [k == "sliding_attention" for k in kinds]
    pattern = _int(cfg, "sliding_window_pattern", most=MAX_LAYERS)
    if pattern:  # Gemma 3: every pattern-th layer is global
        return [(i + 1) % pattern != 0 for i in range(layers)]
    if cfg.get("model_type") == "gemma2":  # alternates local / global
        return [i % 2 == 0 for i in range(layers)]
    return [True] * layers


# ---------------------------------------------------------------- one resolver per concern
# Each reads its own keys of config.json, in the order parse_hf_config calls them (so a file
# with several problems always names the same one first).


def _read_config(raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The language model's config (text_config unwrapped, class defaults filled in) and its
    model_type; refuses what is not a decoder or encoder config."""
    if not isinstance(raw, dict):
        raise HfConfigError("config.json must be a JSON object", field="hf_config")
    if "_class_name" in raw and "model_type" not in raw:
        raise HfConfigError(
            f"{raw['_class_name']} is a diffusers config; give family, params and "
            "gflops_per_sample instead",
            field="_class_name",
        )
    cfg = _text_config(raw)
    mt = str(cfg.get("model_type") or "").lower()
    cfg = {**CLASS_DEFAULTS.get(mt, {}), **cfg}
    if mt in VISION or ("vocab_size" not in cfg and ("image_size" in cfg or "num_channels" in cfg)):
        raise HfConfigError(
            f"{'model_type ' + mt if mt else 'this config.json'} is a vision model's config; "
            + VISION_INSTEAD,
            field="model_type",
        )
    if mt in AUDIO_ENCODERS or ("feat_extract_norm" in cfg and "conv_dim" in cfg):
        raise HfConfigError(
            f"{'model_type ' + mt if mt else 'this config.json'} is a speech encoder over audio "
            "frames (wav2vec 2.0 / HuBERT style, a CTC or classification head), which the "
            f"engine does not model; {SUPPORTED}",
            field="model_type",
        )
    if mt not in READ_ENCODER_DECODERS and (
        mt in ENCODER_DECODERS or cfg.get("is_encoder_decoder") is True
    ):
        raise HfConfigError(
            f"{'model_type ' + mt if mt else 'this config.json'} is an encoder-decoder whose "
            f"shape is not read; {SUPPORTED}; describe it with the model fields instead "
            "(family 'encoder-decoder', params, layers, decoder_layers, hidden_size, "
            "num_heads, intermediate_size, vocab_size)",
            field="is_encoder_decoder" if mt not in ENCODER_DECODERS else "model_type",
        )
    return cfg, mt


@dataclass(frozen=True, slots=True)
class _Shape:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_context: int | None


def _shape(cfg: dict[str, Any]) -> _Shape:
    """Widths, depth, heads and vocabulary, under any of their names."""
    h = _need(cfg, "hidden_size", "n_embd", "d_model", most=MAX_HIDDEN)
    n_layers = _need(cfg, "num_hidden_layers", "n_layer", "num_layers", most=MAX_LAYERS)
    heads = _need(cfg, "num_attention_heads", "n_head", most=MAX_HEADS)
    kv_heads = _int(cfg, "num_key_value_heads", "n_head_kv", "num_kv_heads", most=MAX_HEADS)
    if kv_heads is None:
        kv_heads = 1 if cfg.get("multi_query") else heads
    if kv_heads <= 0 or kv_heads > heads:
        raise HfConfigError(
            "num_key_value_heads must be 1..num_attention_heads", "num_key_value_heads"
        )
    return _Shape(
        hidden=h,
        layers=n_layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=_int(cfg, "head_dim", most=MAX_HIDDEN) or h // heads,
        intermediate=_int(cfg, "intermediate_size", "n_inner", "ffn_dim", most=MAX_FFN) or 4 * h,
        vocab=_need(cfg, "vocab_size", most=MAX_VOCAB),
        max_context=_context(cfg),
    )


def _context(cfg: dict[str, Any]) -> int | None:
    """The longest context the config serves: its positions, or under YaRN rope scaling the
    original positions × the factor, as vLLM derives max_model_len (config.py
    ``_get_and_verify_max_len``: for rope_type yarn, original_max_position_embeddings ×
    factor) — Qwen3's config.json says 40,960 with YaRN 4 × 32,768 = 131,072 added."""
    most = _int(cfg, "max_position_embeddings", "n_positions", "seq_length", most=MAX_POSITIONS)
    rs = cfg.get("rope_scaling")
    if not isinstance(rs, dict) or rs.get("rope_type", rs.get("type")) != "yarn":
        return most
    try:
        original = _int(rs, "original_max_position_embeddings", most=MAX_POSITIONS)
    except HfConfigError as e:
        raise HfConfigError(f"rope_scaling.{e.message}", f"rope_scaling.{e.field}") from e
    factor = rs.get("factor")
    if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float))):
        raise HfConfigError("rope_scaling.factor must be a number", field="rope_scaling.factor")
    if original is None or factor is None:
        return most  # no original length: read as unscaled (vLLM's rule needs the field)
    if not math.isfinite(factor) or not 1.0 <= factor <= 1024.0:
        raise HfConfigError("rope_scaling.factor must be 1 to 1024", field="rope_scaling.factor")
    scaled = min(MAX_POSITIONS, int(original * factor))
    return max(most or 0, scaled)


def _tied(cfg: dict[str, Any], mt: str) -> bool:
    tied = cfg.get("tie_word_embeddings")
    return bool(tied) if tied is not None else mt in TIED_BY_DEFAULT


@dataclass(frozen=True, slots=True)
class _Mlp:
    """How one MLP of a given width counts: gated (3 matrices) or plain (2), with biases."""

    hidden: int
    mats: int
    bias: bool

    def params(self, width: int, bias: bool | None = None) -> int:
        with_bias = self.bias if bias is None else bias
        return self.mats * self.hidden * width + (
            (self.mats - 1) * width + self.hidden if with_bias else 0
        )


# Activations that name a gated MLP where the model type does not (Gemma's gated MLP says
# ``gelu_pytorch_tanh``, so the model type decides first); GPT-2-style configs name theirs
# ``activation_function`` (``gelu_new``: plain).
GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu", "geglu"})


def _gated(cfg: dict[str, Any], mt: str) -> bool:
    act = cfg.get("hidden_act") or cfg.get("activation_function") or ""
    return mt in GATED or str(act).lower() in GATED_ACTIVATIONS


def _mlp(cfg: dict[str, Any], mt: str, h: int) -> _Mlp:
    gated = _gated(cfg, mt)
    mlp_bias = bool(cfg.get("mlp_bias")) or mt in ("gpt2", "gpt_neox", "phi", "bert", "roberta")
    return _Mlp(hidden=h, mats=3 if gated else 2, bias=mlp_bias)


@dataclass(frozen=True, slots=True)
class _Attention:
    params: int  # per layer
    kv_per_layer: int  # values cached per token per layer
    kind: str  # mha | gqa | mqa | mla
    head_dim: int
    kv_heads: int
    # MLA's (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)
    latent: tuple[int, int, int, int, int] | None = None


def _attention(cfg: dict[str, Any], mt: str, shape: _Shape) -> _Attention:
    attn_bias = bool(cfg.get("attention_bias")) or bool(cfg.get("bias"))
    qkv_bias = attn_bias or mt in ("qwen2", "qwen2_moe")
    kv_lora = _int(cfg, "kv_lora_rank", most=MAX_HIDDEN)
    if kv_lora:
        return _latent_attention(cfg, shape, kv_lora)
    return _head_attention(mt, shape, qkv_bias=qkv_bias, attn_bias=attn_bias)


def _latent_attention(cfg: dict[str, Any], shape: _Shape, kv_lora: int) -> _Attention:
    """Multi-head latent attention (DeepSeek-V2/V3): one shared latent per token."""
    h, heads = shape.hidden, shape.heads
    rope = _need(cfg, "qk_rope_head_dim", most=MAX_HIDDEN)
    nope = _need(cfg, "qk_nope_head_dim", most=MAX_HIDDEN)
    v_dim = _int(cfg, "v_head_dim", most=MAX_HIDDEN) or nope
    q_lora = _int(cfg, "q_lora_rank", most=MAX_HIDDEN)
    q_dim = heads * (nope + rope)
    q = (h * q_lora + q_lora + q_lora * q_dim) if q_lora else h * q_dim
    kv = h * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v_dim)
    return _Attention(
        params=q + kv + heads * v_dim * h,
        kv_per_layer=kv_lora + rope,
        kind="mla",
        head_dim=nope + rope,
        kv_heads=1,
        latent=(q_lora or 0, kv_lora, nope, rope, v_dim),
    )


def _head_attention(mt: str, shape: _Shape, *, qkv_bias: bool, attn_bias: bool) -> _Attention:
    """Multi-head, grouped-query or multi-query attention."""
    h, heads, kv_heads, head_dim = shape.hidden, shape.heads, shape.kv_heads, shape.head_dim
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    attn = h * q_out + 2 * h * kv_out + q_out * h
    if qkv_bias:
        attn += q_out + 2 * kv_out
    if attn_bias:
        attn += h
    if mt.startswith("qwen3") or mt.startswith("gemma3"):
        attn += 2 * head_dim  # q_norm / k_norm
    if mt == "gpt_oss":
        attn += heads  # attention sinks
    kind = "mha" if kv_heads == heads else ("mqa" if kv_heads == 1 else "gqa")
    return _Attention(attn, 2 * kv_heads * head_dim, kind, head_dim, kv_heads)


@dataclass(frozen=True, slots=True)
class _Experts:
    routed: int
    topk: int
    expert: int  # params of one routed expert
    shared: int  # params of the shared expert(s), every token
    shared_n: int | None
    router: int
    intermediate: int
    layer_ids: frozenset[int]  # the layers whose MLP is a mixture of experts


def _experts(cfg: dict[str, Any], mt: str, shape: _Shape, mlp: _Mlp) -> _Experts | None:
    """The mixture of experts, or None for a dense model."""
    routed = _int(cfg, "n_routed_experts", "num_local_experts", "num_experts", most=MAX_EXPERTS)
    topk = _int(cfg, "num_experts_per_tok", "experts_per_token", "moe_topk", most=MAX_EXPERTS)
    if not (routed and routed > 1 and topk):
        return None
    if topk > routed:
        raise HfConfigError(
            "num_experts_per_tok exceeds the number of experts", "num_experts_per_tok"
        )
    h = shape.hidden
    e_inter = _int(cfg, "moe_intermediate_size", most=MAX_FFN) or shape.intermediate
    n_shared = _int(cfg, "n_shared_experts", most=MAX_SHARED_EXPERTS)
    shared_inter = _int(cfg, "shared_expert_intermediate_size", most=MAX_FFN)
    shared_p, shared_n = 0, None
    if n_shared:
        shared_p, shared_n = mlp.params(e_inter * n_shared), n_shared
    elif shared_inter:
        shared_p, shared_n = mlp.params(shared_inter) + h, 1  # plus the shared-expert gate
    return _Experts(
        routed=routed,
        topk=topk,
        expert=mlp.params(e_inter, bias=mlp.bias or mt == "gpt_oss"),
        shared=shared_p,
        shared_n=shared_n,
        router=h * routed + (routed if mt in ("gpt_oss", "deepseek_v3") else 0),
        intermediate=e_inter,
        layer_ids=_moe_layers(cfg, mt, shape.layers),
    )


def _moe_layers(cfg: dict[str, Any], mt: str, n_layers: int) -> frozenset[int]:
    first_dense = _int(cfg, "first_k_dense_replace", most=MAX_LAYERS, default=0) or 0
    freq = _int(cfg, "moe_layer_freq", "decoder_sparse_step", most=MAX_LAYERS, default=1) or 1
    only_mlp = set(cfg.get("mlp_only_layers") or [])
    if mt in ("qwen2_moe", "qwen3_moe"):  # sparse when (i + 1) % step == 0
        return frozenset(i for i in range(n_layers) if (i + 1) % freq == 0 and i not in only_mlp)
    return frozenset(
        i
        for i in range(n_layers)
        if i >= first_dense and (i - first_dense) % freq == 0 and i not in only_mlp
    )


def _param_counts(
    shape: _Shape,
    attn: _Attention,
    dense_mlp: int,
    experts: _Experts | None,
    *,
    tied: bool,
    encoder: bool,
) -> tuple[float, float]:
    """(total, active per token) parameters: every layer, embeddings, head, final norm."""
    h = shape.hidden
    base = attn.params + 2 * h  # attention and the layer's two norms
    total = active = 0.0
    for i in range(shape.layers):
        if experts is not None and i in experts.layer_ids:
            fixed = base + experts.shared + experts.router
            total += fixed + experts.routed * experts.expert
            active += fixed + experts.topk * experts.expert
        else:
            total += base + dense_mlp
            active += base + dense_mlp
    embed = shape.vocab * h
    head = 0 if tied else shape.vocab * h
    if encoder:
        embed += (shape.max_context or 512) * h  # learned positions
    return total + embed + head + h, active + embed + head + h


def _whisper(cfg: dict[str, Any], mt: str) -> HfModel:
    """A Whisper config as an encoder-decoder (app.domain.seq2seq): ``layers`` the encoder's,
    ``decoder_layers`` the decoder's (large-v3-turbo: 32 and 4; distil-large-v3: 32 and 2),
    ``max_context`` the decoder's max_target_positions, ``input_size`` the audio seconds its
    encoder's max_source_positions cover.

    Parameters as Transformers' WhisperForConditionalGeneration creates them: the encoder's
    two convolutions (num_mel_bins → d and d → d, kernel 3, with biases), its position table
    (max_source_positions × d, sinusoidal but a registered embedding) and layers (Q, V, O
    projections with biases, K without; two LayerNorms; fc1/fc2 with biases) and final norm;
    the decoder's token and position tables, layers with a self- and a cross-attention block
    of the same kind and three LayerNorms, final norm; the output projection tied to the token
    table unless tie_word_embeddings is false. This gives 37,760,640 for whisper-tiny,
    241,734,912 for small, 1,543,490,560 for large-v3, 808,878,080 for large-v3-turbo."""
    d = _need(cfg, "d_model", "hidden_size", most=MAX_HIDDEN)
    enc_layers = _need(cfg, "encoder_layers", "num_hidden_layers", most=MAX_LAYERS)
    dec_layers = _need(cfg, "decoder_layers", most=MAX_LAYERS)
    heads = _need(cfg, "encoder_attention_heads", most=MAX_HEADS)
    if d % heads:
        raise HfConfigError(
            "d_model must be a multiple of encoder_attention_heads", "encoder_attention_heads"
        )
    ffn = _need(cfg, "encoder_ffn_dim", most=MAX_FFN)
    dec_ffn = _int(cfg, "decoder_ffn_dim", most=MAX_FFN) or ffn
    vocab = _need(cfg, "vocab_size", most=MAX_VOCAB)
    mels = _int(cfg, "num_mel_bins", most=MAX_HIDDEN) or 80
    src = _int(cfg, "max_source_positions", most=MAX_POSITIONS) or 1500
    tgt = _int(cfg, "max_target_positions", most=MAX_POSITIONS) or 448
    tied = cfg.get("tie_word_embeddings") is not False
    attn = 4 * d * d + 3 * d  # Q, K, V, O; biases on Q, V and O
    norm = 2 * d

    def mlp(width: int) -> int:
        return 2 * d * width + width + d

    stem = mels * d * 3 + d + d * d * 3 + d
    encoder = stem + src * d + enc_layers * (attn + mlp(ffn) + 2 * norm) + norm
    decoder = vocab * d + tgt * d + dec_layers * (2 * attn + mlp(dec_ffn) + 3 * norm) + norm
    total = float(encoder + decoder + (0 if tied else vocab * d))
    return HfModel(
        model_type=mt,
        family="encoder-decoder",
        params=total,
        active_params=None,
        layers=enc_layers,
        hidden_size=d,
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=d // heads,
        intermediate_size=ffn,
        vocab_size=vocab,
        max_context=tgt,
        experts=None,
        active_experts=None,
        shared_experts=None,
        attention="mha",
        # the decoder's self-attention cache per output token (the cross-attention cache over
        # the encoder's positions is app.domain.seq2seq's)
        kv_elements_per_token=float(2 * dec_layers * d),
        kv_window_elements_per_token=0.0,
        sliding_window=None,
        tied_embeddings=tied,
        gated_mlp=False,
        decoder_layers=dec_layers,
        input_size=src / AUDIO_POSITIONS_PER_S,
    )


def parse_hf_config(raw: dict[str, Any]) -> HfModel:
    """Derive the engine's model shape from a config.json's contents."""
    cfg, mt = _read_config(raw)
    if mt in READ_ENCODER_DECODERS:
        return _whisper(cfg, mt)
    family = "encoder" if mt in ENCODERS else "decoder"
    shape = _shape(cfg)
    tied = _tied(cfg, mt)
    mlp = _mlp(cfg, mt, shape.hidden)
    attn = _attention(cfg, mt, shape)
    experts = _experts(cfg, mt, shape, mlp)
    total, active = _param_counts(
        shape,
        attn,
        mlp.params(shape.intermediate),
        experts,
        tied=tied,
        encoder=family == "encoder",
    )
    sliding = _layer_kinds(cfg, shape.layers)
    n_slide = sum(sliding)
    return HfModel(
        model_type=mt or "unknown",
        family=family,
        params=float(total),
        active_params=float(active) if experts else None,
        layers=shape.layers,
        hidden_size=shape.hidden,
        num_heads=shape.heads,
        num_kv_heads=attn.kv_heads,
        head_dim=attn.head_dim,
        intermediate_size=experts.intermediate if experts else shape.intermediate,
        vocab_size=shape.vocab,
        max_context=shape.max_context,
        experts=experts.routed if experts else None,
        active_experts=experts.topk if experts else None,
        shared_experts=experts.shared_n if experts else None,
        attention=attn.kind,
        kv_elements_per_token=float(attn.kv_per_layer * (shape.layers - n_slide)),
        kv_window_elements_per_token=float(attn.kv_per_layer * n_slide),
        sliding_window=_int(cfg, "sliding_window", most=MAX_POSITIONS) if n_slide else None,
        tied_embeddings=tied,
        gated_mlp=mlp.mats == 3,
        latent=attn.latent,
    )
