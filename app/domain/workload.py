"""The job description and its memory model.

Every size here is in decimal gigabytes (10^9 bytes), the unit vendors print on the box.
Formulas and their sources are listed in ``docs/methodology.md``; the constants below carry
a short reason each.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.domain.efficiency import EfficiencyTable

from app.domain import megatron
from app.domain.activations import (
    AUTOCAST,
    FP32,
    PURE16,
    UNFUSED_SCORE_BYTES,
    WIDE_B,
    Policy,
    block_params,
    decoder_layer_saved,
    embedding_params,
    encoder_layer_saved,
    head_saved,
    largest_param_tensor,
    logits_bytes,
    softmax_input_bytes,
    softmax_saves_input,
    table_transient,
    unet_saved,
    zero_grad_keeps_gradients,
)
from app.domain.derived import store_of
from app.domain.efficiency import has_startup_rule, runtime_share, serving_spec
from app.domain.formats import (
    bytes_per_weight,
    kv_bytes,
    quantised_value_bytes,
    runtime_bits,
    weight_bytes,
)
from app.domain.kernels import MEGATRON_SOFTMAX
from app.domain.megatron import MegatronLayout
from app.domain.operators import ForwardTable, block_linears
from app.domain.topology import NODE_GPUS
from app.vocab import (
    AMP_PRECISIONS,
    BYTES_PER_ELEMENT,
    CONV_FAMILIES,
    DIFFUSERS_DECODE_RUNTIMES,
    FP32_DECODE_PRESETS,
    QUANTIZATION_LABELS,
    RUNTIME_OWN_FORMATS,
    TRAINING_TASKS,
    TRANSFORMER_FAMILIES,
    WHOLE_FILE_FORMATS,
    Family,
    Optimizer,
    Peft,
    Task,
)

__all__ = ["Family", "ModelSpec", "Optimizer", "Peft", "Task", "WorkloadSpec"]

GB = 1e9
GIB = float(1 << 30)  # vendors' "80 GB" of HBM/GDDR is 80 GiB (see app.domain.efficiency)

# Bytes per stored value (app.vocab), with quantisation scales where they matter: int4 and fp4
# as the one weight-format table has them (app/domain/formats.py: AWQ/GPTQ g128 4.16 bits,
# NVFP4 4.5), so inference and serving size a checkpoint alike.
BYTES: dict[str, float] = {
    **BYTES_PER_ELEMENT,
    "int4": bytes_per_weight("int4"),
    "fp4": bytes_per_weight("fp4"),
}
# QLoRA's NF4 with double quantisation: 4 + 0.127 bits per parameter (Dettmers et al. 2023).
NF4_BYTES = 4.127 / 8

# Optimizer state in bytes per trainable parameter (fp32 moments; bitsandbytes 8-bit Adam keeps
# two 1-byte moments plus block scales; SGD with momentum keeps one fp32 buffer).
OPTIMIZER_BYTES: dict[str, float] = {"adamw": 8.0, "adam8bit": 2.0, "sgd": 4.0}
# Temporaries of the optimizer step, bytes per trainable parameter: PyTorch's default
# (foreach) AdamW computes sqrt(v) for the whole parameter group into new fp32 tensors
# (torch/optim/adam.py, _multi_tensor_adam: ``exp_avg_sq_sqrt = torch._foreach_sqrt(...)``);
# SGD's momentum and bitsandbytes' 8-bit Adam update in place.
OPTIMIZER_STEP_TEMP: dict[str, float] = {"adamw": 4.0, "adam8bit": 0.0, "sgd": 0.0}
# A torch optimizer creates its states like the parameter (torch.zeros_like(p) in
# torch/optim/adamw.py and sgd.py): in pure 16-bit training they are 16-bit, half the fp32
# bytes above; bitsandbytes' 8-bit states (and their fp32 block scales) do not depend on it.
_STATE_SHRINK: dict[str, float] = {"adamw": 0.5, "sgd": 0.5}

# CNN / diffusion / MLP activations are estimated from forward GFLOPs: Lambda's published
# per-GPU batch sizes for ResNet-50 with AMP (448 on 24 GB, 1280 on 80 GB, 256 on 16 GB) imply
# ~50 MB of stored activations per 224 px image, and ResNet-50 costs 8.2 forward GFLOPs, so
# ~6 MB of 16-bit activations per forward GFLOP. A coarse proxy, stated as such.
ACT_MB_PER_GFLOP_16BIT = 6.0
KORTHIKANTI_BYTES = 34.0  # s·b·h bytes per layer in 16-bit (Korthikanti et al. 2022)

# PyTorch's caching allocator rounds and splits blocks: reserved memory runs a few per cent
# above what tensors occupy during training (benchmark-methodology §peak memory).
TRAINING_FRAGMENTATION = 0.05

# FSDP FULL_SHARD / ZeRO-3 keeps each GPU's shards of every state, but runs each wrapped block
# (a transformer layer under the usual auto-wrap policy) on its whole parameters: it
# all-gathers them in the compute dtype before the block's forward and again before its
# backward, and the block's backward produces its whole gradient before the reduce-scatter
# shards it (Zhao et al. 2023, "PyTorch FSDP: Experiences on Scaling Fully Sharded Data
# Parallel", VLDB, arXiv:2304.11277: a GPU's memory is its shards plus the units it has
# materialised). Under FSDP's default ``backward_prefetch=BACKWARD_PRE`` the
# next block's all-gather is issued before the current block's gradient computation, "and at
# the peak, it holds the current set of parameters, next set of parameters, and current set
# of gradients in memory" (torch.distributed.fsdp.BackwardPrefetch's documentation); FSDP2
# likewise lets two all-gather outputs live at once. Two blocks' parameters, one block's
# gradient.
FSDP_BLOCKS_GATHERED = 2.0
FSDP_BLOCK_GRADIENTS = 1.0
# Wrapped units of a model with no layer count: the count the time model gathers over
# (perf.training_layout's ``m.layers or 50``).
FSDP_DEFAULT_UNITS = 50

# Inference runtime workspace beyond weights and KV cache: allocator fragmentation and
# temporary buffers (Transformer Math 101 quotes ~20 % all told; half of that is covered by the
# per-layer intermediate estimate below). Only for a runtime that allocates as it goes (eager
# PyTorch, llama.cpp, MLX): one that claims its memory up front (vLLM, SGLang, TensorRT-LLM)
# measures its peak in a profiling pass and keeps the rest of its claim back, so a slack on
# top would count the reserve twice (``allocator_slack``).
INFERENCE_FRAGMENTATION = 0.05

# The CUDA/ROCm context plus cuBLAS/cuDNN workspaces (0.3–2 GiB measured widely).
CONTEXT_GB: dict[str, float] = {"cuda": 1.0, "rocm": 1.0, "default": 0.5}

# What a diffusion pipeline holds beside its UNet (``ModelSpec.params``), frozen, by the name of
# the UNet's traced table (data/operators/<preset>.yaml ``model``): the text encoders and the
# VAE. CLIP ViT-L/14's text tower, 123,060,480 parameters, and OpenCLIP ViT-bigG's with its
# projection (``CLIPTextModelWithProjection``), 694,659,840, counted from their config.json
# (hidden 768 / 1280, 12 / 32 layers, MLP 3,072 / 5,120, vocabulary 49,408, 77 positions;
# huggingface.co/stabilityai/stable-diffusion-xl-base-1.0 text_encoder/ and text_encoder_2/,
# stable-diffusion-v1-5/stable-diffusion-v1-5 text_encoder/), which also matches their fp32
# model.safetensors (4 bytes each); the VAE (AutoencoderKL, 128/256/512/512) 83,653,863, the
# count of data/operators/vae/<preset>.yaml's trace. Diffusers' pipelines load all three to the
# device for inference; its training scripts (train_text_to_image_lora_sdxl.py,
# train_dreambooth.py) keep them there, frozen in the weight dtype, to encode each batch —
# kohya-ss sd-scripts' ``--cache_latents`` / ``--cache_text_encoder_outputs`` move them off
# it, a saving the breakdown's note names.
CLIP_L_TEXT_PARAMS = 123_060_480
OPENCLIP_BIGG_TEXT_PARAMS = 694_659_840
SD_VAE_PARAMS = 83_653_863
# FLUX.1 [dev] and [schnell] (diffusers FluxPipeline) hold beside their transformer the same
# CLIP ViT-L/14 text tower (text_encoder/, pooled prompt embedding) and a T5-v1.1-XXL encoder
# (text_encoder_2/, T5EncoderModel): 4,762,310,656 parameters, counted from its config.json
# (huggingface.co/black-forest-labs/FLUX.1-dev text_encoder_2/config.json: d_model 4096, d_ff
# 10240 gated-GELU, 24 layers, 64 heads of d_kv 64, vocabulary 32128, 32 relative-attention
# buckets): 32128 × 4096 shared embedding + 24 × (4 × 4096² attention + 3 × 4096 × 10240 MLP +
# 2 × 4096 norms) + 32 × 64 relative bias + 4096 final norm; transformers' T5EncoderModel built
# from that config counts the same. Their VAE (AutoencoderKL, 128/256/512/512 with 16 latent
# channels and no quant convolutions) 83,819,683, the count of
# data/operators/vae/flux-1-dev.yaml's trace.
T5_XXL_ENCODER_PARAMS = 4_762_310_656
FLUX_VAE_PARAMS = 83_819_683
PIPELINE_FROZEN_PARAMS: dict[str, dict[str, float]] = {
    "sdxl": {
        "text encoders": CLIP_L_TEXT_PARAMS + OPENCLIP_BIGG_TEXT_PARAMS,
        "VAE": SD_VAE_PARAMS,
    },
    "stable-diffusion-1.5": {"text encoder": CLIP_L_TEXT_PARAMS, "VAE": SD_VAE_PARAMS},
    "flux-1-dev": {
        "text encoders": CLIP_L_TEXT_PARAMS + T5_XXL_ENCODER_PARAMS,
        "VAE": FLUX_VAE_PARAMS,
    },
    "flux-1-schnell": {
        "text encoders": CLIP_L_TEXT_PARAMS + T5_XXL_ENCODER_PARAMS,
        "VAE": FLUX_VAE_PARAMS,
    },
}

# Denoisers that run ONE call per denoising step, by their traced table's name: FLUX.1 [dev] is
# guidance-distilled (the guidance scale enters as an embedding; diffusers' FluxPipeline runs
# true classifier-free guidance only when true_cfg_scale > 1, default 1.0) and FLUX.1 [schnell]
# timestep-distilled (guidance_scale 0). Every other diffusion preset's passes come in
# classifier-free-guidance pairs, one call on the conditional and unconditional latents.
GUIDANCE_DISTILLED_DENOISERS = frozenset({"flux-1-dev", "flux-1-schnell"})


def guidance_distilled(model: ModelSpec) -> bool:
    """Whether a diffusion model's denoising step is one denoiser call on the batch (no
    classifier-free guidance pair), read by its shipped table (``GUIDANCE_DISTILLED_DENOISERS``)."""
    return (
        model.family == "diffusion"
        and model.operators is not None
        and model.operators.model in GUIDANCE_DISTILLED_DENOISERS
    )


def guidance_latents(model: ModelSpec) -> int:
    """Latents per image in one denoiser call: 2 under classifier-free guidance (a diffusion
    preset's passes come in pairs), which diffusers runs as one call on the conditional and
    unconditional latents concatenated (``latent_model_input = torch.cat([latents] * 2)``, a
    2 × batch call), not as two calls on the batch; a guidance-distilled denoiser (FLUX.1)
    makes one call per step on the batch. The time (perf) and the memory
    (``_diffusion_transients``) of a denoiser call both follow it."""
    if guidance_distilled(model):
        return 1
    npass = model.passes_per_sample or 1
    return 2 if model.family == "diffusion" and npass > 1 and npass % 2 == 0 else 1


# FLUX.1 at fp16 (a card without bf16: Turing, Volta, Pascal) is no plain bf16 run: diffusers
# clips some of its activations to run it in fp16 (huggingface/diffusers PR #9097, commit
# f771be1, "Flux fp16 inference fix"), and its Flux page's "Running FP16 inference" says FP16
# "produces different outputs compared to FP32/BF16", naming Turing/Volta GPUs.
FP16_CLIPPED_DENOISERS = frozenset({"flux-1-dev", "flux-1-schnell"})
FLUX_FP16_NOTE = (
    "FLUX.1 at fp16: diffusers clips some of its activations to run it so (PR #9097), and its "
    "images differ from bf16's (diffusers Flux docs, 'Running FP16 inference')"
)


def fp16_clipped(model: ModelSpec) -> bool:
    """Whether a diffusion model's denoiser runs at fp16 only with clipped activations, its
    output differing from bf16's (``FP16_CLIPPED_DENOISERS``), read by its shipped table."""
    return (
        model.family == "diffusion"
        and model.operators is not None
        and model.operators.model in FP16_CLIPPED_DENOISERS
    )


# A latent diffusion model's image side: a multiple of the VAE's downsampling factor, 8
# (AutoencoderKL's three stride-2 stages in SD 1.x and SDXL), or the latents do not tile the
# image: every diffusers Stable Diffusion pipeline's ``check_inputs`` raises "`height` and
# `width` have to be divisible by 8". At least 64: SD 1.x's UNet halves its latent three more
# times (four block_out_channels levels), so a 64-pixel image is one latent pixel at its
# deepest level and anything smaller none; the estimate's traced tables would be scaled past
# any shape the network runs.
DIFFUSION_SIDE_MULTIPLE = 8
DIFFUSION_MIN_SIDE = 64
# Denoisers that pack their latents into 2 × 2 patches, by their traced table's name: FLUX.1's
# FluxPipeline (pipeline_flux.py, diffusers 0.42.1) needs each side divisible by
# vae_scale_factor × 2 = 16 — its ``check_inputs`` warns "`height` and `width` have to be
# divisible by 16 ... Dimensions will be resized accordingly" and ``prepare_latents`` floors
# each side to a multiple of 16, so any other side is not the image it generates.
PACKED_LATENT_DENOISERS = frozenset({"flux-1-dev", "flux-1-schnell"})
PACKED_SIDE_MULTIPLE = 16


def diffusion_side_multiple(model: ModelSpec | None) -> int:
    """The multiple a diffusion model's image side must be: 16 for a denoiser over 2 × 2 packed
    latents (``PACKED_LATENT_DENOISERS``, by its table), else the VAE's 8."""
    table = model.operators if model is not None else None
    if table is not None and table.model in PACKED_LATENT_DENOISERS:
        return PACKED_SIDE_MULTIPLE
    return DIFFUSION_SIDE_MULTIPLE


def diffusion_side_problem(side: float, model: ModelSpec | None = None) -> str | None:
    """Why a latent diffusion model (``model``; None: any, the VAE's multiple) cannot generate
    ``side``-pixel images, or None."""
    step = diffusion_side_multiple(model)
    if side < DIFFUSION_MIN_SIDE or side % step:
        if step == PACKED_SIDE_MULTIPLE:
            why = (
                "the VAE's factor 8 × its 2 × 2 latent packing; FluxPipeline floors any other "
                f"height or width to one, here to {_floored_side(side, step):g}"
            )
        else:
            why = (
                "the VAE's downsampling factor; diffusers' pipelines refuse any other height "
                "or width"
            )
        return (
            f"input_size {side:g}: a latent diffusion model's image side must be a whole "
            f"multiple of {step} pixels ({why}) and at least "
            f"{DIFFUSION_MIN_SIDE}, e.g. {_nearest_side(side, step):g}"
        )
    return None


def _nearest_side(side: float, step: int = DIFFUSION_SIDE_MULTIPLE) -> float:
    return max(float(DIFFUSION_MIN_SIDE), round(side / step) * step)


def _floored_side(side: float, step: int) -> float:
    return max(float(step), (side // step) * step)


DEFAULT_LORA_RANK = 16
# The UNet linears diffusers' LoRA scripts adapt (train_text_to_image_lora_sdxl.py,
# train_dreambooth_lora_sdxl.py: ``target_modules=["to_k", "to_q", "to_v", "to_out.0"]``)
UNET_LORA_TARGETS = (".to_q", ".to_k", ".to_v", ".to_out.0")
# FLUX.1's: diffusers' examples/dreambooth/train_dreambooth_lora_flux.py adapts, unless
# --lora_layers says otherwise, "attn.to_k", "attn.to_q", "attn.to_v", "attn.to_out.0",
# "attn.add_k_proj", "attn.add_q_proj", "attn.add_v_proj", "attn.to_add_out", "ff.net.0.proj",
# "ff.net.2", "ff_context.net.0.proj" and "ff_context.net.2". PEFT matches a target as the end
# of a module's dotted name, so the single-stream blocks' attn.to_q / to_k / to_v are adapted
# too, their proj_mlp and proj_out (and the modulation linears) not.
FLUX_LORA_TARGETS = (
    ".attn.to_k", ".attn.to_q", ".attn.to_v", ".attn.to_out.0", ".attn.add_k_proj",
    ".attn.add_q_proj", ".attn.add_v_proj", ".attn.to_add_out", ".ff.net.0.proj", ".ff.net.2",
    ".ff_context.net.0.proj", ".ff_context.net.2",
)  # fmt: skip
DIFFUSION_LORA_TARGETS = {"flux-1-dev": FLUX_LORA_TARGETS, "flux-1-schnell": FLUX_LORA_TARGETS}
LORA_FALLBACK_FRACTION = 0.01  # adapters ≈ 1 % of params when the layer shapes are unknown


@dataclass(frozen=True, slots=True)
class ModelSpec:
    family: str
    params: float
    layers: int | None = None
    hidden_size: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_context: int | None = None
    gflops_per_sample: float | None = None
    input_size: float | None = None
    active_params: float | None = None
    experts: int | None = None
    active_experts: int | None = None
    activation_mb_per_sample: float | None = None
    # Bytes autograd saves per token, per layer, per hidden unit in bf16-autocast training
    # with fused attention, measured per architecture (benchmarks/activation_memory.py); it
    # replaces Korthikanti et al.'s 34 (a GELU MLP, dropout, no fp32 residual stream).
    activation_coeff: float | None = None
    # Network passes per sample: a diffusion image is `steps × 2` UNet passes (classifier-free
    # guidance); gflops_per_sample covers them all. The pair runs as one call on 2 × batch
    # latents (``guidance_latents``), so one call's activations, the pair's, are alive at once.
    passes_per_sample: int | None = None
    # K+V values cached per token over the layers that keep every token, and over the
    # sliding-window layers (which keep at most ``sliding_window`` tokens); set when the shape
    # comes from a config.json (GQA with an explicit head_dim, latent attention, local layers).
    kv_elements_per_token: float | None = None
    kv_window_elements_per_token: float | None = None
    sliding_window: int | None = None
    # One sample's forward operators, shipped for CNN/UNet presets (data/operators/); None:
    # built from the shape (transformers) or priced whole-model (app.domain.perf)
    operators: ForwardTable | None = field(default=None, compare=False, hash=False, repr=False)
    # A diffusion preset's VAE decode of one image (data/operators/vae/), which turns the final
    # latents into pixels once per sample; None: priced as a whole (app.domain.perf)
    decoder_operators: ForwardTable | None = field(
        default=None, compare=False, hash=False, repr=False
    )
    # Whether the LM head shares the input embedding's matrix (config.json
    # ``tie_word_embeddings``); None: read from the parameter count (activations.py).
    tied_embeddings: bool | None = None
    # "mla": multi-head latent attention (DeepSeek-V2/V3), whose decode runs more kernels than
    # MHA/GQA (latent norms, a separate query up-projection, two absorbed-weight BMMs); None:
    # heads of their own (config.json's attention kind, hf_config.py)
    attention: str | None = None
    # Multi-head latent attention's ranks and head widths (config.json q_lora_rank,
    # kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim): the shapes of its five
    # projections (operators.attention_linears), which LoRA adapts; None: not known
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    # config.json's head_dim where the model states one: Qwen3 and Mistral-Nemo run 128-wide
    # heads that are not hidden ÷ heads (Qwen3-30B-A3B: 32 × 128 = 4096 against hidden 2048),
    # which sizes Q, the attention core and O's input; None: hidden ÷ heads (``head_dim``)
    explicit_head_dim: int | None = None
    # Shared experts every token runs beside the routed ones (DeepSeek: 1; Qwen3-MoE, Mixtral,
    # gpt-oss: 0); None: not known (counted as one)
    shared_experts: int | None = None
    # An encoder-decoder's encoder half (app.domain.seq2seq.encoder_model): the decoder's
    # cross-attention K/V projections of this many layers run once over the encoder's output,
    # priced with its pass (perf.forward_ops); None: a model of its own
    cross_kv_layers: int | None = None
    # Gated MLP (SwiGLU/GeGLU: gate, up, down) or plain (GELU: up, down), where a config.json
    # says so (hf_config.HfModel.gated_mlp); None: read off the parameter count
    # (activations.gated_mlp, the one rule memory and time share)
    gated_mlp: bool | None = None
    # An encoder-decoder's decoder depth where it differs from the encoder's (``layers``):
    # Whisper large-v3-turbo 32 encoder and 4 decoder layers, distil-large-v3 32 and 2
    # (config.json decoder_layers); None: both stacks are ``layers`` deep (app.domain.seq2seq)
    decoder_layers: int | None = None

    @property
    def is_transformer(self) -> bool:
        return self.family in TRANSFORMER_FAMILIES

    @property
    def has_shape(self) -> bool:
        return self.layers is not None and self.hidden_size is not None

    @property
    def conv_layers(self) -> bool:
        """Whether the network a job runs at its precision has convolutions, which stock
        PyTorch has no fp8 kernels for (data/frameworks.yaml fp8_convolution): a CNN; a
        diffusion model whose denoiser's traced table has a convolution (an SD/SDXL UNet) or
        that ships no table (not known: refused as a UNet is). FLUX.1's rectified-flow
        transformer traces none (data/operators/flux-1-dev.yaml: GEMMs, attention and
        element-wise ops only), so torchao float8 and TensorRT's FP8 convert all its matmuls;
        its VAE's convolutions run once per image and stay 16-bit."""
        if self.family not in CONV_FAMILIES:
            return False
        if self.family == "diffusion" and self.operators is not None:
            return self.operators.has_conv
        return True

    @property
    def params_per_token(self) -> float:
        """Parameters touched per token: MoE models only run their active experts."""
        return self.active_params or self.params

    @property
    def kv_heads(self) -> int | None:
        return self.num_kv_heads or self.num_heads

    @property
    def head_dim(self) -> float | None:
        if self.explicit_head_dim:
            return float(self.explicit_head_dim)
        if self.hidden_size is None or not self.num_heads:
            return None
        return self.hidden_size / self.num_heads

    @property
    def q_width(self) -> float:
        """Heads × head size: Q's width and O's input (the hidden size unless an explicit
        head_dim says otherwise); 0 without a shape."""
        return float(self.num_heads or 0) * float(self.head_dim or 0)

    def kv_values(self, context: float) -> float | None:
        """K+V values one sequence of ``context`` tokens keeps, over all layers."""
        if self.kv_elements_per_token is not None:
            window = min(context, float(self.sliding_window or context))
            local = (self.kv_window_elements_per_token or 0.0) * window
            return self.kv_elements_per_token * context + local
        if not self.has_shape or self.head_dim is None:
            return None
        return 2.0 * (self.layers or 0) * (self.kv_heads or 1) * self.head_dim * context

    def vit_tokens(self) -> int:
        side = int(self.input_size or 224)
        return (side // 16) ** 2 + 1  # patch 16 plus the class token


@dataclass(frozen=True, slots=True)
class ServingSpec:
    """The load and targets of task 'serving' (means; spreads size the KV cache)."""

    prompt_tokens: int
    output_tokens: int
    concurrent_requests: float | None = None
    requests_per_s: float | None = None
    prompt_tokens_spread: int | None = None
    output_tokens_spread: int | None = None
    # resolved: the user's targets, or the planner's defaults (serving.with_defaults) where the
    # request set none, which the two flags mark
    ttft_ms_target: float | None = None
    itl_ms_target: float | None = None
    target_percentile: str = "p50"
    kv_cache_precision: str | None = None
    ttft_target_default: bool = False
    itl_target_default: bool = False
    # the context each request is deployed with (serving.deploy_context: the serve command's
    # --max-model-len, llama-server's -c per slot); None: not planned here (a benchmark's load)
    context_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    task: str
    model: ModelSpec
    precision: str = "bf16"
    batch_size: int = 1
    seq_len: int = 512
    output_tokens: int = 128
    optimizer: str = "adamw"
    peft: str = "none"
    gradient_checkpointing: bool = False
    # Megatron's selective activation recomputation (--recompute-granularity selective,
    # Korthikanti et al. 2022 §5): only the attention core runs again in backward (perf.
    # attention_core); ignored under full recompute (gradient_checkpointing). Not an API field:
    # benchmarks set it from a published run's settings.
    selective_recompute: bool = False
    dataset_samples: float | None = None
    epochs: float = 1.0
    # Where dataset_samples comes from, in words: "yours", or "assumed: …" (the preset's own
    # dataset, or a stated default job size); None without a dataset. Read by no estimate.
    dataset_basis: str | None = field(default=None, compare=False, hash=False)
    latency_target_ms: float | None = None
    lora_rank: int = DEFAULT_LORA_RANK
    # The blocks LoRA adapts, counted from the last (mlx-lm's --num-layers): backward runs
    # through them alone. 0: the runtime's rule (data/efficiency.yaml lora_layers; every block
    # where it has none, PEFT's target modules). Read through ``adapted_layers``.
    lora_layers: int = 0
    # PyTorch leaves TF32 off for fp32 matmuls unless the user (or an NGC container through
    # TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1) turns it on; convolutions use TF32 by default.
    allow_tf32_matmul: bool = False
    preset: str | None = None
    # How the model runs (app.vocab Runtime) and its weight format (app.vocab Quantization);
    # ``weight_bits`` is the format's bits per weight from data/efficiency.yaml, scales included.
    # ``runtime`` is always set; ``runtime_given`` says the request named it (task 'serving'
    # otherwise picks it per GPU backend: vLLM on CUDA/ROCm, MLX on Apple, llama.cpp on CPU).
    runtime: str = "pytorch"
    runtime_given: bool = False
    # The GPU backend a llama.cpp job is pinned to (app.vocab GpuBackend: "vulkan", its Vulkan
    # build); None: the GPU's own backend as framework support picks it (evaluate._gate)
    gpu_backend: str | None = None
    quantization: str = "none"
    weight_bits: float | None = None
    # The weight format the model was published in where it is a quantised one (gpt-oss:
    # MXFP4 experts): run as released when a question names no other, with no quality cost
    # said against its own checkpoint (app/recommend/quality.py).
    released_format: str | None = None
    # The runtime efficiency table the estimate reads (data/efficiency.yaml); None: eager
    # PyTorch constants. Carried with the job so every caller of the engine sees the same one.
    efficiency: EfficiencyTable | None = field(default=None, compare=False, hash=False, repr=False)
    serving: ServingSpec | None = None
    # A CNN / UNet whose tensors are NHWC (PyTorch's memory_format=torch.channels_last, as
    # DeepLearningExamples' AMP recipes set): cuDNN's tensor-core convolutions then need no
    # NCHW<->NHWC transforms. Only an NCHW runtime's default depends on it (vocab.NCHW_RUNTIMES).
    channels_last: bool = False
    # A 16-bit CNN whose weights are themselves 16-bit (PyTorch's model.half(), as benchmark
    # scripts that predate autocast run it): no per-pass cast of each conv / linear weight, which
    # autocast over fp32 weights makes (perf._autocast_casts). Not an API field: benchmarks set
    # it from a published run's harness (a row's ``half_weights``).
    half_weights: bool = False
    # How a training job holds its state where the request says it does not hold it the usual
    # way (the API's master_weights, optimizer_in_backward, loss_chunks, paged_optimizer; the
    # defaults are today's). ``fp32_master`` False: pure 16-bit training (torchtune dtype bf16,
    # no fp32 copy; gradients and a torch optimizer's states in the parameters' dtype).
    # ``optimizer_in_backward``: each parameter is updated in its post-accumulate-grad hook and
    # its gradient freed (torch Tensor.register_post_accumulate_grad_hook; torchtune
    # optimizer_in_bwd), so only one tensor's gradient exists at a time. ``loss_chunks``: a
    # chunked cross-entropy (activations.logits_bytes). ``paged_optimizer``: bitsandbytes'
    # paged optimizers keep their states in CUDA unified memory, which the driver pages to the
    # host when the GPU is full; each parameter's state is prefetched to the GPU for its update.
    fp32_master: bool = True
    optimizer_in_backward: bool = False
    loss_chunks: int = 1
    paged_optimizer: bool = False
    # The fused attention kernel a job runs where it is not FlashAttention-2 (a key of
    # kernels.ATTENTION_KERNEL_SLOWDOWN): "triton" = MPT's attn_impl: triton; "flash1" = a
    # first-generation stack on every GPU (SDPA of PyTorch 2.0 / 2.1, xformers <= 0.0.20:
    # FlashAttention v1 or the CUTLASS memory-efficient kernel); "megatron-softmax" = no fused
    # kernel, Megatron-LM's 2022 attention (kernels.MEGATRON_SOFTMAX); "" = today's
    # (FlashAttention-2, or for PyTorch SDPA >= 2.2 below sm80 the memory-efficient kernel:
    # perf._attention_kernel).
    attention_kernel: str = ""
    # The KV cache's stored format for LLM inference where the job states one (a key of
    # formats.WEIGHT_FORMATS with a KV size: "fp8" = TensorRT-LLM's --fp8_kv_cache /
    # kv_cache_quant_algo FP8); "" = the 16-bit cache (fp32 for an fp32 job: ``kv_format``).
    # Not an API field: benchmarks set it from a published run's settings.
    kv_cache_precision: str = ""
    # How llama.cpp multiplies a quantised model's prompt (passes of more than 32 tokens) on
    # CUDA: "" = today's default (MMQ on Turing and later, since PR #8075 of June 2024);
    # "cublas" = dequantise each weight matrix to FP16, then FP16 cuBLAS, as builds before that
    # PR did on Volta and later (CUDA_USE_TENSOR_CORES) and GGML_CUDA_FORCE_CUBLAS builds do.
    # Read by the LLM step (perf._llm_card); not an API field (benchmarks: a row's build)
    prompt_gemm: str = ""
    # Where llama.cpp's CUDA backend replays its one-token CUDA graph (llm_step.GRAPH_BUILDS): "" =
    # today's builds, on one GPU and on a layer split alike; "one-gpu" = builds from PR #6766
    # (2024-05-08) to PR #13814 (in master 2025-05-30), whose pipeline-parallel scheduler changed
    # the graph at every evaluation so a layer split launched every kernel eagerly; "none" = builds
    # before PR #6766 (no CUDA graphs). Not an API field: benchmarks set it from a published run's
    # date.
    llamacpp_graphs: str = ""
    # FLUX.1's query / key RMSNorms run as diffusers' own RMSNorm, eight eager kernels with fp32
    # intermediates (app.domain.composite_norm), as diffusers did before its Flux attention
    # refactor (PR #11916, opened 2025-07-14); False: today's fused torch.nn.RMSNorm kernel, as
    # the shipped tables trace it. Read by eager PyTorch alone (a compiler fuses the chain). Not
    # an API field: benchmarks set it from a published run's date.
    composite_rms_norm: bool = False
    # The denoiser's attention runs through diffusers' xFormers processor, which copies query,
    # key and value into xFormers' (batch × heads, tokens, head dim) layout before the kernel
    # (operators.head_batch_copy_op); False: PyTorch's SDPA on strided views, as the shipped
    # tables trace. Read by eager PyTorch alone. Not an API field: benchmarks set it from a
    # published run's stated stack (a row's ``xformers``).
    head_batch_copies: bool = False
    # The PyTorch release the job runs ("2.1", "2.1.1+cu118"; "" = a current one). Read by LLM
    # decode where the runtime regrows its KV cache by torch.cat (kv_traffic > 1): a release
    # before 2.8 copies a 16-bit cache without vector loads, at half the bytes per second
    # (llm_step.cat_rate). Not an API field: benchmarks set it from a published run's stack.
    torch_version: str = ""
    # The step is one micro-batch of gradient accumulation (evaluate._with_savers): the
    # gradients the earlier micro-steps summed stay allocated through this one's forward and
    # backward, beside its activations. Not an API field.
    accumulates: bool = False
    # A diffusion fine-tune whose trainer encoded the captions and images once before training
    # and freed the text encoders and VAE (evaluate's ``cache_encodings`` saver): kohya-ss
    # sd-scripts' --cache_text_encoder_outputs --cache_latents, SimpleTuner's text-embed and VAE
    # caches. The API's workload.cache_encodings: true sets it; blank leaves it to the saver.
    cached_encodings: bool = False
    # The attention materialises grouped-query K/V for every query head each decode step
    # (transformers' repeat_kv: eager attention in every release, SDPA before v4.54 or with a
    # mask; llm_step.transformers_repeats_kv): a GQA model moves 2 × groups more cache bytes.
    # Not an API field: benchmarks set it from a published run's stack.
    kv_repeat: bool = False
    # The compiled runtime replays CUDA graphs (torch.compile modes "reduce-overhead" and
    # "max-autotune"): no host launch per kernel. False: torch.compile's default mode, whose
    # Inductor wrapper launches every kernel from Python (data/efficiency.yaml, torch-compile
    # host_us_per_op). Read by the operator path (perf._build_step_job); not an API field:
    # benchmarks set it from a published run's stated compile mode.
    cuda_graphs: bool = False
    # A diffusion loop that synchronises the host with the GPU every step (diffusers' PNDM and
    # DDIM read a device timestep on the host, TensorRT's demo syncs after each CUDA-graph
    # launch): under CUDA graphs or TensorRT the scheduler's host work after the sync runs with
    # the GPU idle (app.domain.diffusion_host). Not an API field: benchmarks set it from a
    # published harness's code. False: the loop overlaps its host work.
    step_sync: bool = False
    # The pipeline runs SD 1.5's safety checker after the decode (diffusers loads it with the
    # checkpoint unless told not to). Not an API field: benchmarks set it from the harness.
    safety_checker: bool = False
    # The decode attention runs TensorRT-LLM's masked multi-head attention kernel (a run with
    # XQA off: v0.9.0's default, TRTLLM_ENABLE_XQA unset): one thread block per query head and
    # sequence doing Q·K and A·V on the CUDA cores, so a grouped-query model's decode attention
    # costs its full per-query-head math at the decode profile's ``mmha_sm_share`` of the SM's
    # issue rate (llm_step.mmha_slowdown). Not an API field: benchmarks set it from a published
    # run's stack.
    mmha: bool = False
    # The routed experts' GEMMs multiply at the GPU's 16-bit tensor rate though their weights
    # are stored in the job's 8-bit format (a weight-only FP8 MoE: FP8 experts read, FP16
    # activations multiplied): TensorRT-LLM before 0.10, whose 0.10.0 release notes are the
    # first to list "FP8 quantization support for Mixtral" (llm_step.ReplicaJob.experts_16bit).
    # Not an API field: benchmarks set it from a published run's stack.
    experts_16bit: bool = False
    # Beams an encoder-decoder's generate() keeps per input (beam search: num_beams): each
    # decoder step runs batch × beams sequences, each with its own self- and cross-attention
    # cache (app.domain.seq2seq). Not an API field: benchmarks set it from a published run's
    # settings (faster-whisper's benchmark: beam_size 5).
    beams: int = 1
    # A Megatron training job's own layout (TP, PP, VP, CP, micro-batches per pipeline) where
    # the job states it (benchmarks: the held-out recipes); None under runtime megatron:
    # megatron.default_layout. Read only when runtime is megatron (not an API field yet).
    megatron: MegatronLayout | None = None
    # Terms the engine derives from the job alone (perf.llm_job's llm_step.ReplicaJob, the
    # single-GPU step's GPU-independent part), worked out once per spec on first use: a spec
    # is one request's job variant, so they live as long as the request does
    _derived: dict[tuple[object, ...], object] | None = field(
        default=None, init=False, compare=False, hash=False, repr=False
    )

    # Whether the task trains, and whether it is a language model's inference: fixed with the
    # task and model, and the facts the engine reads most (~800 times an open question), so
    # fields set once, where properties were a Python call at each read
    training: bool = field(init=False, compare=False, hash=False, repr=False)
    is_llm_inference: bool = field(init=False, compare=False, hash=False, repr=False)
    # Bits per weight taken as a mean over the whole file (see ``_own_bits``): read by every
    # weight size, set once with the fields it reads
    own_bits: float | None = field(init=False, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "training", self.task in TRAINING_TASKS)
        llm = self.task == "inference" and self.model.family == "decoder"
        object.__setattr__(self, "is_llm_inference", llm)
        object.__setattr__(self, "own_bits", self._own_bits())

    @property
    def derived(self) -> dict[tuple[object, ...], object]:
        """The spec's own store of derived terms (see ``_derived``)."""
        return store_of(self)

    @property
    def tokens_per_sample(self) -> int:
        if self.model.family == "vit":
            return self.model.vit_tokens()
        return self.seq_len if self.model.is_transformer else 1

    def with_precision(self, precision: str) -> WorkloadSpec:
        return replace(self, precision=precision)

    @property
    def kv_format(self) -> str:
        """The KV cache's stored format for an inference job: its own
        (``kv_cache_precision``), else 16-bit (fp32 for an fp32 job). Read by the memory
        breakdown and the LLM step alike."""
        if self.kv_cache_precision:
            return self.kv_cache_precision
        return "fp32" if self.precision in ("fp32", "tf32") else "bf16"

    def _own_bits(self) -> float | None:
        """Bits per weight taken as a mean over the whole file: a GGUF format's (llama-quantize
        counts every tensor, the embeddings and output included) or MLX's named 4-bit
        (vocab.WHOLE_FILE_FORMATS), or bits given with no format named (a benchmark's stated
        figure), or the runtime's own 4-bit format (MLX's affine
        4-bit quantises the embeddings and LM head too: formats.runtime_bits); None otherwise."""
        whole_file = self.quantization in WHOLE_FILE_FORMATS or self.quantization == "none"
        if not whole_file:
            return None
        if self.weight_bits is not None:
            return self.weight_bits
        return runtime_bits(self.runtime or "", self.precision)

    @property
    def format_bits(self) -> float | None:
        """A named format's bits per quantised weight (AWQ/GPTQ, NVFP4, MXFP4, NF4), scales
        included; its checkpoint keeps the embeddings and LM head in 16-bit. None: the
        precision's own row, or a whole-file mean (``own_bits``)."""
        return None if self.own_bits is not None else self.weight_bits

    @property
    def weight_bytes(self) -> float:
        """Stored weights of an inference or serving job: formats.weight_bytes, the one rule
        both tasks read (16-bit embeddings and head under a quantised format)."""
        return weight_bytes(self.model, self.precision, self.own_bits, format_bits=self.format_bits)

    @property
    def weight_bytes_per_param(self) -> float:
        """Stored bytes per weight: the mean of ``weight_bytes`` for inference; the
        precision's bytes for training."""
        if not self.training:
            return self.weight_bytes / self.model.params if self.model.params else 0.0
        return BYTES.get(self.precision, 2.0)

    def with_flags(self, **changes: object) -> WorkloadSpec:
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Per-GPU memory in GB. ``sharded`` parts are already divided by ``num_gpus``."""

    weights: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    master_weights: float = 0.0
    adapters: float = 0.0
    activations: float = 0.0
    # The LM head's logits and the loss over them (decoder training)
    logits: float = 0.0
    kv_cache: float = 0.0
    workspace: float = 0.0
    framework: float = 0.0
    num_gpus: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)
    # The sum of the parts, worked out once: a request memoises its breakdowns (a few) and
    # reads their totals for every card.
    total: float = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        total = (
            self.weights
            + self.gradients
            + self.optimizer
            + self.master_weights
            + self.adapters
            + self.activations
            + self.logits
            + self.kv_cache
            + self.workspace
            + self.framework
        )
        object.__setattr__(self, "total", total)

    @property
    def tensors(self) -> float:
        """What the tensors occupy at the peak (``torch.cuda.max_memory_allocated``): the
        total less the allocator's slack and the framework context."""
        return self.total - self.workspace - self.framework

    def parts(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer": self.optimizer,
            "master_weights": self.master_weights,
            "adapters": self.adapters,
            "activations": self.activations,
            "logits": self.logits,
            "kv_cache": self.kv_cache,
            "workspace": self.workspace,
            "framework": self.framework,
        }


def lora_params(model: ModelSpec, rank: int) -> float:
    """Adapter parameters for LoRA on the block linears (operators.block_linears: q, k, v, o,
    gate, up, down; MLA's five attention projections; an MoE model's attention alone, the
    layers its time is priced on); a diffusion UNet's on its attention projections
    (``UNET_LORA_TARGETS``), FLUX.1's on the linears diffusers' FLUX LoRA script adapts
    (``FLUX_LORA_TARGETS``), read off its table."""
    if model.family == "diffusion" and model.operators is not None:
        targets = DIFFUSION_LORA_TARGETS.get(model.operators.model, UNET_LORA_TARGETS)
        return rank * sum(
            (float(o["k"]) + float(o["n"])) * float(o.get("count") or 1)
            for o in model.operators.ops
            if o["kind"] == "gemm" and str(o.get("name") or "").endswith(targets)
        )
    if not (model.is_transformer and model.has_shape):
        return model.params * LORA_FALLBACK_FRACTION
    # an adapter B·A of rank r on a d_in → d_out layer holds r·(d_in + d_out) parameters; an
    # MoE model's experts carry none (its MLP had been counted as one expert's, adapters no
    # PEFT target list gives: "all-linear" adapts every expert, the default none)
    per_layer = rank * sum(d_in + d_out for d_in, d_out in block_linears(model))
    return per_layer * (model.layers or 0)


def adapted_layers(work: WorkloadSpec) -> float:
    """The blocks a LoRA / QLoRA job adapts, the last ones: the job's ``lora_layers``, else its
    runtime's (mlx-lm adapts the last 16 by default: data/efficiency.yaml), else every block
    (PEFT's target modules); never more than the model has. The model's layer count for a job
    without adapters."""
    total = float(work.model.layers or 0)
    asked = work.lora_layers
    if asked <= 0 and work.efficiency is not None and work.peft in ("lora", "qlora"):
        asked = int(work.efficiency.runtime_value(work.runtime, "lora_layers") or 0)
    if asked <= 0 or total <= 0:
        return total
    return min(total, float(asked))


def adapted_share(work: WorkloadSpec) -> float:
    """The share of the blocks a LoRA job adapts (``adapted_layers``): 1 for every block."""
    total = float(work.model.layers or 0)
    return adapted_layers(work) / total if total > 0 else 1.0


def job_lora_params(work: WorkloadSpec) -> float:
    """The job's trainable adapter parameters: ``lora_params`` on the blocks it adapts."""
    return lora_params(work.model, work.lora_rank) * adapted_share(work)


def qlora_in_kernel(work: WorkloadSpec) -> bool:
    """A QLoRA job whose runtime quantises the whole base in its own 4-bit format and
    dequantises inside its GEMM kernels (MLX: data/efficiency.yaml qlora_in_kernel)."""
    return (
        work.peft == "qlora"
        and work.efficiency is not None
        and bool(work.efficiency.runtime_value(work.runtime, "qlora_in_kernel"))
    )


def qlora_base_bytes(work: WorkloadSpec) -> float:
    """Bytes of a QLoRA job's frozen base: the runtime's own 4-bit format over every weight
    where it has one (``qlora_in_kernel``: MLX's affine 4-bit, embeddings and LM head too, at
    ``weight_bits``); else the blocks' linears in NF4 (GPTQ Int4 for a GPTQ base) with the
    embedding and the LM head in the 16-bit compute dtype, as bitsandbytes leaves them."""
    m = work.model
    if qlora_in_kernel(work):
        return m.params * (work.weight_bits or runtime_bits("mlx", "int4") or 4.5) / 8.0
    embed, head = embedding_params(m)
    vocab = embed + head
    gptq = work.quantization == "gptq"
    return (m.params - vocab) * (BYTES["int4"] if gptq else NF4_BYTES) + vocab * 2.0


def qlora_base_width(work: WorkloadSpec) -> float:
    """``qlora_base_bytes`` per parameter: the bytes a GEMM reads per frozen weight where the
    runtime's quantised kernels read the stored format (``qlora_in_kernel``)."""
    return qlora_base_bytes(work) / max(1.0, work.model.params)


def pipeline_frozen_params(model: ModelSpec) -> dict[str, float]:
    """The frozen modules a diffusion pipeline holds beside its UNet (``PIPELINE_FROZEN_PARAMS``),
    read by the UNet's shipped table; none for other models or a UNet of unknown pipeline."""
    if model.family != "diffusion" or model.operators is None:
        return {}
    return PIPELINE_FROZEN_PARAMS.get(model.operators.model, {})


_FROZEN_NOTE = "weights include the pipeline's frozen"
_VAE_PART = "VAE"  # the PIPELINE_FROZEN_PARAMS entry that runs the decode


def _frozen_pipeline_bytes(work: WorkloadSpec, notes: list[str]) -> float:
    """Bytes of a diffusion pipeline's text encoders and VAE, held in 16-bit (fp32 for an fp32
    job), with a note naming them."""
    parts = pipeline_frozen_params(work.model)
    if not parts:
        return 0.0
    wide = work.precision in ("fp32", "tf32")
    each = 4.0 if wide else 2.0
    total = sum(parts.values()) * each
    listed = ", ".join(f"{name} {n / 1e6:,.0f}M" for name, n in parts.items())
    held = "fp32" if wide else "16-bit"
    note = f"{_FROZEN_NOTE} {listed} parameters in {held}"
    if work.training and work.cached_encodings:
        # encoded once before training, then freed: nothing of them stays on the GPU
        notes.append(
            f"the pipeline's frozen {listed} parameters are not held: their outputs are cached "
            f"before training (kohya-ss --cache_text_encoder_outputs --cache_latents; "
            f"SimpleTuner's text-embed and VAE caches), {total / GIB:.2f} GiB saved"
        )
        return 0.0
    if work.training:
        note += (
            f" (they encode each batch; caching latents and text-encoder outputs, kohya-ss "
            f"--cache_latents --cache_text_encoder_outputs, saves {total / GIB:.2f} GiB)"
        )
    notes.append(note)
    return total


@dataclass(frozen=True, slots=True)
class ModelOffload:
    """A diffusion pipeline's inference under diffusers' ``enable_model_cpu_offload()``: its
    per-GPU memory with one component resident at a time, and the bytes each pipeline call
    copies host→device."""

    memory: MemoryBreakdown
    moved_bytes: float  # per pipeline call (one batch), every component once


def model_offload(work: WorkloadSpec, *, backend: str = "cuda") -> ModelOffload | None:
    """The job under model CPU offload, or None where it offloads nothing (not a diffusion
    pipeline's inference: training encodes every batch, and a bare UNet has nothing beside it).

    diffusers' model offloading keeps one of the pipeline's models (text encoders, UNet, VAE)
    on the GPU and the others on the CPU, the UNet staying for the whole denoising loop
    (docs/source/en/optimization/memory.md, "Model offloading"); ComfyUI's model management
    and A1111's --medvram do the same. Each component comes in only when it runs, after
    accelerate's CpuOffload hook has moved the one before it out and emptied the allocator's
    cache (``prev_module_hook.offload()`` then ``clear_device_cache()`` in its pre_forward),
    so the peak is the largest of each component's weights with its own transient: the UNet's
    (or transformer's) largest op beside the UNet, the decode's beside the VAE alone (the
    default pipeline's workspace adds the decode to every weight, and its allocator slack is
    sized on them all). Each call ends in ``maybe_free_model_hooks()``, which moves every
    component back to the CPU (pipelines/pipeline_utils.py), so every call copies all of them
    in again. The default pipeline (``.to("cuda")``) keeps them all resident, which
    ``memory_breakdown`` counts: this is the alternative, never the default."""
    parts = pipeline_frozen_params(work.model)
    if work.training or not parts:
        return None
    full = memory_breakdown(work, backend=backend)
    frozen = _frozen_pipeline_bytes(work, [])
    each = frozen / sum(parts.values())  # bytes per frozen parameter
    denoise, decode = _diffusion_transients(work, 4.0 if work.precision == "fp32" else 2.0)
    # (weights, transient) of each component while it alone is on the GPU; a text encoder's
    # own transient (one prompt's 77–512 tokens) is not traced and is small beside its weights
    held = [(work.weight_bytes, denoise)] + [
        (n * each, decode if name == _VAE_PART else 0.0) for name, n in parts.items()
    ]
    resident, transient = max(held, key=sum)
    notes = tuple(n for n in full.notes if not n.startswith(_FROZEN_NOTE))
    offloaded = replace(full, weights=resident / GB, workspace=transient / GB, notes=notes)
    return ModelOffload(offloaded, work.weight_bytes + frozen)


def activation_bytes(
    work: WorkloadSpec,
    batch: float,
    *,
    flash_attention: bool,
    act_bytes: float = 2.0,
    checkpointing: bool | None = None,
) -> float:
    """Stored activations for backward, in bytes.

    Transformers: Korthikanti et al. (2022) s·b·h·L·(34 + 5·a·s/h) bytes in 16-bit; fused
    attention kernels (FlashAttention / SDPA) never store the a·s² score matrix, dropping the
    second term; full recompute stores only the layer inputs, 2·s·b·h·L. Encoder-decoders:
    each stack over its own positions, logits and loss included
    (seq2seq.training_activation_bytes).
    """
    m = work.model
    scale = act_bytes / 2.0
    ckpt = work.gradient_checkpointing if checkpointing is None else checkpointing
    if m.family == "encoder-decoder" and m.has_shape:
        # each stack over its own positions (Whisper: the encoder's 1,500 audio frames, the
        # decoder's target tokens with their cross-attention): app.domain.seq2seq
        from app.domain.seq2seq import training_activation_bytes

        return training_activation_bytes(
            work, batch, flash_attention=flash_attention, act_bytes=act_bytes, checkpointing=ckpt
        )
    if (m.is_transformer or m.family == "vit") and m.has_shape:
        s = work.tokens_per_sample
        h = float(m.hidden_size or 0)
        n_layers = float(m.layers or 0)
        a = float(m.num_heads or 1)
        if ckpt:
            return 2.0 * s * batch * h * n_layers * scale
        per = (m.activation_coeff or KORTHIKANTI_BYTES) + (
            0.0 if flash_attention else 5.0 * a * s / h
        )
        logits = 0.0
        if m.vocab_size and m.family == "decoder":
            # the LM head: 16-bit logits plus the fp32 copy the loss upcasts to
            logits = s * batch * m.vocab_size * 6.0
        return s * batch * h * n_layers * per * scale + logits
    if m.activation_mb_per_sample is not None:
        per_sample = m.activation_mb_per_sample * 1e6 * scale
    else:
        per_pass = (m.gflops_per_sample or 0.0) / max(1, m.passes_per_sample or 1)
        per_sample = per_pass * ACT_MB_PER_GFLOP_16BIT * 1e6 * scale
    if ckpt:
        # keeps roughly √(layers) segment boundaries (Chen et al. 2016); ~ one fifth for ResNets
        per_sample *= 0.2
    return per_sample * batch


def kv_cache_bytes(work: WorkloadSpec, kv_bytes: float) -> float:
    """2 · L · kv_heads · head_dim · context · batch · bytes (grouped-query aware). An
    encoder-decoder's: the decoder's self-attention cache over its output tokens plus the
    cross-attention cache over the encoder's positions, per sequence of batch × beams
    (app.domain.seq2seq)."""
    m = work.model
    if m.family == "encoder-decoder" and m.has_shape and not work.training:
        from app.domain.seq2seq import cross_kv_values, encoder_tokens

        seqs = work.batch_size * max(1, work.beams)
        self_kv = m.kv_values(work.output_tokens + 1) or 0.0
        return (self_kv + cross_kv_values(m, encoder_tokens(work))) * kv_bytes * seqs
    if m.family != "decoder" or not m.has_shape:
        return 0.0
    context = work.seq_len + work.output_tokens
    return (m.kv_values(context) or 0.0) * kv_bytes * work.batch_size


def context_gb(backend: str, context_gib: float | None = None) -> float:
    """The runtime's context and workspaces per GPU, in GB: its own figure where the
    efficiency table gives one (``context_gib``), else the backend's. Inference and serving
    both read it."""
    if context_gib is not None:
        return float(context_gib) * GIB / GB
    return CONTEXT_GB.get(backend, CONTEXT_GB["default"])


def allocator_slack(weights: float, share: float, of_free: bool) -> float:
    """Allocator slack beside the weights (bytes in, bytes out) under a runtime claiming
    ``share`` of memory (efficiency.runtime_share): INFERENCE_FRAGMENTATION of the weights
    where it claims nothing up front, none where it does. Inference and serving both read it."""
    return INFERENCE_FRAGMENTATION * weights if share >= 1.0 and not of_free else 0.0


def kv_claim(kv: float, share: float, of_free: bool) -> float:
    """What a KV cache of ``kv`` bytes takes of a GPU's usable memory: itself, or under a
    runtime whose KV pool is a share of the memory left free (TensorRT-LLM's
    free_gpu_memory_fraction) kv ÷ share, the free memory that pool needs
    (efficiency.kv_pool_gb)."""
    return kv / share if of_free and share > 0 else kv


def profiles(work: WorkloadSpec) -> bool:
    """Whether the job's runtime sizes its KV pool at startup around activations it reserves
    by its own rule (efficiency.startup_activations_gb, which evaluate.usable_gb takes per
    GPU: vLLM's profiling peak, TensorRT-LLM's warm-up forward of max_num_tokens, SGLang's
    share left outside mem_fraction_static). That reserve covers the largest step the runtime
    will run (chunked prefill bounds it), so the job's own step activations live inside it and
    the breakdown does not count them again."""
    return has_startup_rule(serving_spec(work.efficiency, work.runtime))


def framework_gb(work: WorkloadSpec, backend: str) -> float:
    """The job's runtime context and workspaces per GPU on ``backend`` (``context_gb``)."""
    own = None
    if work.efficiency is not None:
        own = work.efficiency.runtime_value(work.runtime, "context_gib")
    return context_gb(backend, own)


def on_backend(mem: MemoryBreakdown, work: WorkloadSpec, backend: str) -> MemoryBreakdown:
    """``memory_breakdown(work, ...)`` of an inference job on ``backend``, from ``mem``, its
    breakdown at the same count on another backend: the framework's context is the only part
    of an inference job's memory that depends on the backend (and none on the attention
    kernels), so the other parts and their sum in ``total`` are the same to the last bit;
    an inference breakdown has no training parts."""
    framework = framework_gb(work, backend)
    if framework == mem.framework:
        return mem
    # the parts an inference breakdown has, by name (dataclasses.replace took as long as the
    # breakdown itself)
    return MemoryBreakdown(
        weights=mem.weights,
        kv_cache=mem.kv_cache,
        workspace=mem.workspace,
        framework=framework,
        num_gpus=mem.num_gpus,
        notes=mem.notes,
    )


def kv_copies(model: ModelSpec, tp: int) -> float:
    """Copies of the KV cache a tensor-parallel group of ``tp`` GPUs holds and reads each
    decode step: one, split by KV head, for ordinary attention; ``tp`` under latent attention
    (DeepSeek's MLA), whose cache is one latent per token shared by every head, so a GPU that
    holds a slice of the heads holds and reads all of it — SGLang's data-parallel-attention
    guide: with tensor parallelism an MLA model (one KV head) gets a "duplicated KV cache
    across all GPUs" (docs.sglang.io/advanced_features/dp_dpa_smg_guide.html). Taken for
    every tensor-parallel runtime (data-parallel attention, which keeps one copy, is not
    modelled). Grouped-query attention split over more GPUs than it has KV heads keeps a
    whole head on each (vLLM's QKVParallelLinear replicates them where tp ≥ kv heads, as
    ``head_split_error`` allows): tp ÷ kv copies, each GPU holding and reading its head's."""
    if tp <= 1:
        return 1.0
    if model.attention == "mla":
        return float(tp)
    kv = model.num_kv_heads or model.num_heads or tp
    return max(1.0, tp / kv)


def replicated_params(m: ModelSpec) -> float:
    """Parameters every tensor-parallel GPU of a replica holds and multiplies whole, all layers:
    latent attention's down-projections to the query and KV latents (q_a_proj and
    kv_a_proj_with_mqa, hidden × (q_lora_rank + kv_lora_rank + qk_rope_head_dim)). The latent
    is one per token and every rank attends over all of it (``kv_copies``), so the servers
    compute it whole on every rank: vLLM's DeepSeek-V2/V3 fuses the two into one
    MergedColumnParallelLinear with ``disable_tp=True`` (deepseek_v2.py; SGLang's is a
    ReplicatedLinear). A replica of tp GPUs multiplies and reads them tp times over, not once
    (``llm_step.MLA_REPLICATED_SOURCE``). 0 for every other model."""
    kv_lora, rope = m.kv_lora_rank or 0, m.qk_rope_head_dim or 0
    if m.attention != "mla" or not (kv_lora and rope and m.hidden_size and m.layers):
        return 0.0
    return float(m.layers) * m.hidden_size * ((m.q_lora_rank or 0) + kv_lora + rope)


def replicated_weight_bytes(m: ModelSpec, value_bytes: float, n: int) -> float:
    """Bytes each of a tensor-parallel replica's ``n`` GPUs holds beyond its even share: the
    ``replicated_params`` every one of its tp = min(n, a server) ranks keeps whole rather than a
    1/tp slice of, at ``value_bytes`` a weight (the format's quantised weight: DeepSeek's FP8
    release stores q_a_proj and kv_a_proj_with_mqa in FP8), over the n ÷ tp stages beyond, each
    of which holds its own layers' copy. DeepSeek-V3 in FP8 at TP 8: 0.92 GB × 7/8 = 0.81 GB a
    GPU that the 1/8 share leaves out. 0 for a model without such weights or on one GPU."""
    tp = min(n, NODE_GPUS)
    if tp <= 1:
        return 0.0
    return replicated_params(m) * value_bytes * (1.0 - 1.0 / tp) / max(1, n // tp)


def _tensor_span(work: WorkloadSpec, n: int) -> bool:
    """Whether ``n`` GPUs of LLM inference run one tensor-parallel replica (the runtime's
    ``span``; a layer split holds each layer once, on one GPU)."""
    if n <= 1 or not work.is_llm_inference:
        return False
    table = work.efficiency
    span = (table.runtime_value(work.runtime, "span") if table is not None else None) or "tensor"
    return span == "tensor"


def _kv_copies_held(work: WorkloadSpec, n: int) -> float:
    """Copies of the cache ``n`` GPUs of LLM inference hold (``kv_copies``): a tensor-parallel
    runtime's group of up to one server (its stages beyond hold their own layers); a layer
    split holds each layer's cache once."""
    return kv_copies(work.model, min(n, NODE_GPUS)) if _tensor_span(work, n) else 1.0


def _replicated_held(work: WorkloadSpec, n: int) -> float:
    """Bytes each of ``n`` GPUs of LLM inference holds beyond its 1/n share of the weights
    (``replicated_weight_bytes``); nothing under a layer split."""
    if not _tensor_span(work, n):
        return 0.0
    value = quantised_value_bytes(work.precision, work.own_bits, format_bits=work.format_bits)
    return replicated_weight_bytes(work.model, value, n)


def memory_breakdown(
    work: WorkloadSpec,
    *,
    num_gpus: int = 1,
    backend: str = "cuda",
    flash_attention: bool = True,
) -> MemoryBreakdown:
    """Per-GPU memory for ``work`` at its (already resolved) precision on ``num_gpus``.

    Sharded parts (weights, gradients, optimizer, master weights, adapters, activations, KV
    cache) divide by N: FSDP/ZeRO-3 or tensor parallelism for the model states, data or tensor
    parallelism for activations. The framework context is per process and does not shrink.
    Training sharded over N > 1 GPUs also holds, on each, the FSDP units it is running
    unsharded (two layers' gathered parameters in ``weights``, one layer's gradient in
    ``gradients``: ``fsdp_block_bytes``).
    """
    n = max(1, num_gpus)
    p = work.precision
    notes: list[str] = []
    framework = framework_gb(work, backend)
    if not work.training:
        weights = work.weight_bytes + _frozen_pipeline_bytes(work, notes)
        kv = kv_cache_bytes(work, kv_bytes(work.kv_format))
        act_b = 4.0 if p == "fp32" else 2.0
        share, of_free = runtime_share(work.efficiency, work.runtime, n)
        # the runtime's reservation (efficiency.runtime_share): its slack, or the free memory
        # its KV pool needs beyond the cache itself, counted as workspace
        reserve = allocator_slack(weights, share, of_free) + kv_claim(kv, share, of_free) - kv
        workspace = reserve
        if not profiles(work):
            workspace += _inference_workspace(work, act_b)
        if fp32_decode(work) and work.model.decoder_operators is not None:
            notes.append(_FP32_DECODE_NOTE)
        if p in ("int8", "int4", "fp4"):
            notes.append(_quantised_note(work))
        return MemoryBreakdown(
            weights=(weights / n + _replicated_held(work, n)) / GB,
            kv_cache=kv / n * _kv_copies_held(work, n) / GB,
            workspace=workspace / n / GB,
            framework=framework,
            num_gpus=n,
            notes=tuple(notes),
        )

    return _training_memory(work, n, framework, flash_attention, notes)


def _quantised_note(work: WorkloadSpec) -> str:
    """What a quantised inference job's weights hold: a GGUF type's bits are a mean over the
    whole file (embeddings and output quantised too), a named format's are per quantised
    weight (embeddings and LM head in 16-bit), a bare precision's its own."""
    kv = "16-bit" if work.kv_format in ("bf16", "fp16") else work.kv_format
    # a bare precision the runtime stores in its own format (MLX at int4: its affine 4-bit,
    # embeddings and LM head quantised too) is said as that format
    fmt = work.quantization
    if fmt == "none" and work.weight_bits is None:
        fmt = RUNTIME_OWN_FORMATS.get((work.runtime or "", work.precision), fmt)
    name = QUANTIZATION_LABELS.get(fmt, fmt)
    if fmt != "none" and work.own_bits is not None:
        return (
            f"weights in {name} ({work.own_bits:.3g} bits per weight over the whole file, "
            f"embeddings and output included); activations in 16-bit, KV cache in {kv}"
        )
    if fmt != "none" and work.weight_bits is not None:
        return (
            f"weights in {name} ({work.weight_bits:.3g} bits per quantised weight); "
            f"embeddings, LM head and activations kept in 16-bit, KV cache in {kv}"
        )
    return (
        f"weights quantised to {work.precision}; embeddings, LM head and activations kept in "
        f"16-bit, KV cache in {kv}"
    )


def training_policy(work: WorkloadSpec) -> Policy:
    """How the job holds its tensors: fp32 jobs in fp32; full 16-bit training under autocast
    with fp32 parameters, or in pure 16-bit without them (``pure16``: every tensor 16-bit, the
    base trained); LoRA/QLoRA on a 16-bit base (the adapters aside)."""
    lora = work.peft in ("lora", "qlora")
    if work.precision in ("fp32", "tf32"):
        return replace(FP32, frozen_base=True) if lora else FP32
    if lora:
        return PURE16
    return _PURE16_TRAINED if pure16(work) else AUTOCAST


# Pure 16-bit full training: PURE16's widths with every norm and the head trained
_PURE16_TRAINED = replace(PURE16, frozen_base=False)


def pure16(work: WorkloadSpec) -> bool:
    """A 16-bit training job with no fp32 master copy (the API's master_weights: none)."""
    return not work.fp32_master and work.precision in ("fp16", "bf16")


def autocast_encoder(work: WorkloadSpec) -> bool:
    """A 16-bit encoder trained under torch.autocast over fp32 weights, layer by layer
    (activations.encoder_layer_saved): not a half-precision model (``half_weights``: apex AMP
    O2, as NVIDIA DeepLearningExamples' BERT scripts run it), not checkpointed, not a preset
    with its own measured coefficient. torch.autocast is what a 16-bit PyTorch job runs
    unless it says otherwise: apex.amp is deprecated in favour of it (NVIDIA/apex issues #818,
    #1214) and Transformers' Trainer runs ``--fp16`` through it."""
    m = work.model
    return (
        m.family == "encoder"
        and m.has_shape
        and m.activation_coeff is None
        and work.precision in ("fp16", "bf16")
        and training_policy(work) is AUTOCAST
        and not work.half_weights
        and not work.gradient_checkpointing
    )


def saved_activations(
    work: WorkloadSpec, batch: float, *, flash_attention: bool
) -> tuple[float, float]:
    """(activations, logits) in bytes at a training step's peak, per operator for decoders.

    Without checkpointing every layer's saved tensors, the head's and the logits are alive at
    the start of backward. With full recompute (Hugging Face checkpoints each decoder layer)
    the layer inputs stay, plus the larger of the loss over the logits (first in backward) and
    one recomputed layer (after the logits are freed); the logits count either way.
    16-bit encoders under autocast count ``encoder_layer_saved`` per layer
    (``autocast_encoder``); other models keep ``activation_bytes``.
    """
    m = work.model
    pol = training_policy(work)
    # eager attention under PyTorch < 1.11 also keeps the scores softmax read
    old_softmax = not flash_attention and softmax_saves_input(work.torch_version)
    if autocast_encoder(work):
        s = float(work.tokens_per_sample)
        per_token = sum(
            encoder_layer_saved(
                m, pol, seq=s, flash_attention=flash_attention, softmax_input=old_softmax
            ).values()
        )
        return float(m.layers or 0) * per_token * s * batch, 0.0
    if m.family == "diffusion" and m.operators is not None:
        # per operator of the traced UNet; autocast runs the norms in fp32 (its fp32 op list)
        saved = unet_saved(
            m.operators,
            compute=pol.compute,
            norm=pol.residual,
            checkpointing=work.gradient_checkpointing,
        )
        return saved * batch, 0.0
    if not (m.family == "decoder" and m.has_shape):
        act_b = 4.0 if work.precision in ("fp32", "tf32") else 2.0
        acts = activation_bytes(work, batch, flash_attention=flash_attention, act_bytes=act_b)
        attends = (m.is_transformer or m.family == "vit") and m.has_shape
        if old_softmax and attends and not work.gradient_checkpointing:
            s = float(work.tokens_per_sample)
            acts += softmax_input_bytes(pol, m.num_heads or 1, s) * s * batch * (m.layers or 0)
        return acts, 0.0
    tokens = float(work.seq_len) * batch
    h = float(m.hidden_size or 0)
    per_layer = sum(
        decoder_layer_saved(
            m, pol, seq=work.seq_len, flash_attention=flash_attention, softmax_input=old_softmax
        ).values()
    )
    if m.activation_coeff is not None and pol is AUTOCAST:
        # the preset's measured figure (benchmarks/activation_memory.py) for the same policy
        scores = 0.0 if flash_attention else UNFUSED_SCORE_BYTES * (m.num_heads or 1) * work.seq_len
        if old_softmax:
            scores += softmax_input_bytes(pol, m.num_heads or 1, work.seq_len)
        per_layer = m.activation_coeff * h + scores
    head = head_saved(m, pol) * tokens
    # torch.compile fuses each chunk's upcast and loss (torchtune's compiled loss); eager keeps
    # every chunk's saved log-probabilities
    compiled = work.runtime == "torch-compile"
    own_loss = None
    if work.efficiency is not None:
        own_loss = work.efficiency.runtime_value(work.runtime, "loss_logit_bytes")
    logits = logits_bytes(m, tokens, pol, work.loss_chunks, compiled=compiled, own_loss=own_loss)
    # backward stops at the first adapted block (LoRA on the last ones: mlx-lm's
    # --num-layers): the blocks before it keep nothing for backward, as no gradient reaches
    # them, and under checkpointing their inputs are not kept either
    layers = adapted_layers(work) if work.peft in ("lora", "qlora") else float(m.layers or 0)
    if work.gradient_checkpointing:
        inputs = layers * tokens * h * pol.residual
        return inputs + max(head + logits, per_layer * tokens) - logits, logits
    return layers * per_layer * tokens + head, logits


def fsdp_block_bytes(work: WorkloadSpec) -> tuple[float, float]:
    """(parameters, gradient) in bytes of one FSDP unit as a GPU holds it unsharded: its
    parameters in the dtype they are gathered in (the compute dtype: 16-bit, fp32 for an fp32
    job; a LoRA base at its stored width, QLoRA's in 4-bit), and its trainable parameters'
    gradient in the dtype it is reduced in (16-bit; fp32 for fp32 jobs and for LoRA adapters,
    which PEFT keeps in fp32) — the widths perf.training_layout prices the gathers and
    reduce-scatters at. One unit is one transformer layer's linears (its norms are
    negligible), else the model's parameters over its layers (``FSDP_DEFAULT_UNITS``)."""
    m = work.model
    units = float(m.layers or FSDP_DEFAULT_UNITS)
    shaped = m.is_transformer and m.has_shape
    block = (block_params(m) if shaped else m.params) / units
    wide = work.precision in ("fp32", "tf32")
    if work.peft == "qlora":
        w_b = BYTES["int4"] if work.quantization == "gptq" else NF4_BYTES
    else:
        w_b = _gathered_width(work)
    lora = work.peft in ("lora", "qlora")
    trainable = job_lora_params(work) / units if lora else block
    grad_b = 4.0 if lora or wide else 2.0
    return block * w_b, trainable * grad_b


def _gathered_width(work: WorkloadSpec) -> float:
    """Bytes per parameter of a frozen or trained weight as FSDP gathers it: the compute
    dtype (16-bit; fp32 for an fp32 job), a LoRA base at its stored width."""
    if work.peft == "lora":
        return 2.0 if work.precision == "fp8" else BYTES[work.precision]
    return 4.0 if work.precision in ("fp32", "tf32") else 2.0


def fsdp_root_bytes(work: WorkloadSpec) -> tuple[float, float]:
    """(parameters, gradient) in bytes of the root FSDP unit as every GPU holds it from
    forward through backward.

    The root is what the auto-wrap policy leaves outside the wrapped layers (Hugging Face
    Accelerate/TRL's TRANSFORMER_BASED_WRAP on the decoder layer, Answer.AI's fsdp_qlora): the
    input embedding, the final norm and the LM head. It is not resharded after forward:
    FSDP1's ``_post_forward_reshard`` skips the root ("Do not free the root's parameters in the
    post-forward for FULL_SHARD with the intention that they are immediately used for
    backward computation", torch/distributed/fsdp/_runtime_utils.py), and FSDP2's
    ``fully_shard`` docstring: ``reshard_after_forward=None`` "is set to True for non-root
    modules and False for root modules" (PyTorch 2.13). Its gradient is reduce-scattered once
    the whole root has one, at the end of backward, so the LM head's, computed first, stays
    whole on every GPU beside the logits.

    Counted: the embedding and an untied head (a tied one is the same table, once; the norm is
    negligible) in the dtype they are gathered in — 16-bit under QLoRA, whose bitsandbytes
    base keeps them so — and, where they train, the head's gradient (a tied head's is the
    table's) in the dtype it is reduced in. An encoder's table gets its gradient last, after
    the activations are freed: none at the peak.
    """
    m = work.model
    embed, head = embedding_params(m)
    params = (embed + head) * (2.0 if work.peft == "qlora" else _gathered_width(work))
    if work.peft in ("lora", "qlora") or m.family != "decoder":
        return params, 0.0
    grad_b = 4.0 if work.precision in ("fp32", "tf32") else 2.0
    return params, (head or embed) * grad_b


def _fsdp_unsharded(work: WorkloadSpec, n: int, notes: list[str]) -> tuple[float, float]:
    """(gathered parameters, unsharded gradient) in bytes per GPU beside its shards when the
    job is sharded over ``n`` > 1 GPUs: two layers (``FSDP_BLOCKS_GATHERED``) and the root
    unit (``fsdp_root_bytes``); none on one GPU, nor under Megatron, whose tensor and pipeline
    layouts shard each layer's weights in place and never gather a whole one."""
    if n <= 1 or work.runtime == "megatron":
        return 0.0, 0.0
    params, grad = fsdp_block_bytes(work)
    gathered, unsharded = FSDP_BLOCKS_GATHERED * params, FSDP_BLOCK_GRADIENTS * grad
    notes.append(
        f"sharded over {n} GPUs (FSDP/ZeRO-3): each also holds two layers' gathered "
        f"parameters (the running one and the prefetched next) and one layer's unsharded "
        f"gradient, {(gathered + unsharded) / GIB:.2f} GiB"
    )
    root, root_grad = fsdp_root_bytes(work)
    if root > 0:
        decoder = work.model.family == "decoder"
        held = "input embedding, final norm, LM head" if decoder else "embeddings"
        head = f", and the LM head's unsharded gradient, {root_grad / GIB:.2f} GiB"
        notes.append(
            f"the root FSDP unit ({held}) stays gathered on every GPU from forward through "
            f"backward (FSDP does not reshard the root after forward): {root / GIB:.2f} GiB"
            f"{head if root_grad else ''}"
        )
    return gathered + root, unsharded + root_grad


def _training_memory(
    work: WorkloadSpec, n: int, framework: float, flash_attention: bool, notes: list[str]
) -> MemoryBreakdown:
    """A training step's peak: the larger of the start of backward (every saved activation,
    the loss over the logits, autocast's 16-bit weight copies) and the optimizer step
    (gradients and the optimizer's temporaries), on top of parameters and optimizer state."""
    m = work.model
    p = work.precision
    lay = work.megatron
    if (
        lay is not None
        and work.runtime == "megatron"
        and not lay.fsdp
        and work.peft == "none"
        and m.family == "decoder"
        and m.has_shape
        and n % lay.model_parallel == 0
    ):
        return _megatron_memory(work, lay, n, framework, flash_attention, notes)
    acts, logits = saved_activations(work, work.batch_size, flash_attention=flash_attention)
    frozen = _frozen_pipeline_bytes(work, notes)
    # per GPU, not divided by n: alive during forward and backward, not at the optimizer step
    gathered, unsharded = _fsdp_unsharded(work, n, notes)
    opt_b = optimizer_state_bytes(work)
    embed, head = embedding_params(m)
    slack = (acts + logits) * TRAINING_FRAGMENTATION
    if work.peft in ("lora", "qlora"):
        if qlora_in_kernel(work):
            # MLX quantises every Linear and Embedding (mlx_lm.convert -q) and its quantised
            # matmul dequantises inside the kernel: no 16-bit copy of a linear is ever made
            base = qlora_base_bytes(work)
            notes.append(
                f"frozen weights in MLX's affine 4-bit ({(work.weight_bits or 4.5):.3g} bits "
                "per weight, embeddings and LM head included); adapters in fp32"
            )
        elif work.peft == "qlora":
            # bitsandbytes quantises the blocks' nn.Linear layers (a GPTQ checkpoint's are
            # GPTQ Int4 at group 128, Qwen's Q-LoRA base); the embedding and the LM head stay
            # in the 16-bit compute dtype
            base = qlora_base_bytes(work)
            gptq = work.quantization == "gptq"
            fmt = "GPTQ Int4 (group 128)" if gptq else "NF4 with double quantisation"
            notes.append(
                f"frozen blocks in 4-bit {fmt}; embeddings and LM head in 16-bit; adapters in fp32"
            )
            # one linear at a time is dequantised to 16-bit for its matmul
            h = float(m.hidden_size or 0)
            slack += 2.0 * h * float(m.intermediate_size or 4 * h)
        else:
            base = m.params * (2.0 if p == "fp8" else BYTES[p])
        base += frozen
        adapters = job_lora_params(work)
        if adapted_share(work) < 1.0:
            notes.append(
                f"adapters on the last {adapted_layers(work):g} of {m.layers} blocks "
                "(mlx-lm's --num-layers): only their activations are saved for backward"
            )
        # adapters train in fp32 (PEFT upcasts them): weights + grads, and the optimizer's
        # state apart, as the QLoRA paper breaks it down: its paged AdamW keeps that state in
        # unified memory, which the driver evicts to the host when the GPU runs out. Pure
        # 16-bit (torchtune's LoRA recipes in bf16) keeps the adapters, their gradients and a
        # torch optimizer's states in 16-bit.
        adapter_b = 2.0 if pure16(work) else 4.0
        states = adapters * opt_b
        if work.paged_optimizer:
            # one layer's adapters at a time (each is a few small tensors)
            states = _paged_states(states, adapters / float(m.layers or 1) * opt_b, notes)
        return MemoryBreakdown(
            weights=base / n / GB + gathered / GB,
            adapters=adapters * (adapter_b + adapter_b) / n / GB + unsharded / GB,
            optimizer=states / n / GB,
            activations=acts / n / GB,
            logits=logits / n / GB,
            workspace=slack / n / GB,
            framework=framework,
            num_gpus=n,
            notes=tuple(notes),
        )

    params = m.params
    pure = pure16(work)
    if p in ("fp32", "tf32"):
        weights, master, casts = params * 4.0, 0.0, 0.0
    elif pure:
        # the model itself is 16-bit: no fp32 copy and no per-pass casts of it
        weights, master, casts = params * 2.0, 0.0, 0.0
        states_said = "" if work.paged_optimizer else " and optimizer states"
        notes.append(f"pure 16-bit training: weights, gradients{states_said} in 16-bit, "
                     "no fp32 master copy")  # fmt: skip
    else:
        # autocast: fp32 parameters (the master copy) plus the 16-bit copy of every weight a
        # matmul reads, cached for the forward and saved for backward (the embedding lookup
        # reads the fp32 table; a tied head casts it)
        master = params * 4.0
        weights = casts = 2.0 * (params - embed) if head else 2.0 * params
        if n > 1:
            # the 16-bit copy of the head (a tied head's of the table) is the root unit's
            # gathered parameters under FSDP, counted whole in ``gathered``
            weights = casts = casts - 2.0 * (head or embed)
    weights += frozen
    # the optimizer's temporaries take its states' width (``_state_width``); a paged
    # optimizer's fused kernel updates its states in place, no foreach temporaries
    grad_b = 2.0 if pure else 4.0
    grads = params * grad_b
    temp_b = 0.0 if work.paged_optimizer else OPTIMIZER_STEP_TEMP.get(work.optimizer, 0.0)
    temp_b *= _state_width(work)
    step_temp = params * temp_b
    states = params * opt_b
    if work.paged_optimizer:
        states = _paged_states(states, largest_param_tensor(m) * opt_b, notes)
    # the start of backward over all n GPUs (the FSDP unit's unsharded parameters and gradient
    # are per GPU, so n of them)
    backward_start = casts + acts + logits + n * (gathered + unsharded)
    if work.optimizer_in_backward:
        # each parameter's update runs in its gradient's post-accumulate hook, which then
        # frees it: one tensor's gradient (and its step's temporaries) at a time, never all of
        # them at a step after backward; as below, no more than backward's freed memory lacks
        one = largest_param_tensor(m) * (grad_b + temp_b)
        peak_grads = min(one, max(0.0, grads + step_temp - backward_start))
        notes.append(
            f"optimizer step in backward: each gradient is applied and freed as it is made, "
            f"so at most one tensor's, {one / GIB:.2f} GiB, is held, not all "
            f"{(grads + step_temp) / GIB:.2f} GiB"
        )
    elif work.accumulates:
        # micro-steps after the first start backward with the summed gradients still held
        peak_grads = grads + max(0.0, step_temp - backward_start)
        notes.append(
            "gradients stay allocated across the micro-batches of gradient accumulation, "
            "beside each one's activations"
        )
    elif zero_grad_keeps_gradients(work.torch_version):
        # zero-filled, not freed, between steps: alive at the start of backward too
        peak_grads = grads + max(0.0, step_temp - backward_start)
        notes.append("gradients stay allocated between steps (zero_grad() before PyTorch 2.0)")
    else:
        # Gradients (set to None between steps) are allocated during backward as activations
        # and weight copies are freed: they count only where the optimizer step outgrows the
        # start of backward.
        peak_grads = max(0.0, grads + step_temp - backward_start)
        if peak_grads < grads + step_temp:
            notes.append("gradients fill the memory activations free during backward")
    return MemoryBreakdown(
        weights=weights / n / GB + gathered / GB,
        gradients=peak_grads / n / GB + unsharded / GB,
        optimizer=states / n / GB,
        master_weights=master / n / GB,
        activations=acts / n / GB,
        logits=logits / n / GB,
        workspace=slack / n / GB,
        framework=framework,
        num_gpus=n,
        notes=tuple(notes),
    )


def optimizer_state_bytes(work: WorkloadSpec) -> float:
    """Bytes of optimizer state per trainable parameter as the job holds them: OPTIMIZER_BYTES
    at the width ``_state_width`` gives."""
    return OPTIMIZER_BYTES.get(work.optimizer, 8.0) * _state_width(work)


def _state_width(work: WorkloadSpec) -> float:
    """The share of their fp32 bytes a job's optimizer states and step temporaries take: a
    torch optimizer's take the parameters' dtype (zeros_like(p)), half under pure 16-bit
    (``_STATE_SHRINK``); bitsandbytes' 8-bit states are 8-bit either way, and a paged optimizer
    is bitsandbytes': its 32-bit states are fp32 whatever the parameters' dtype
    (Optimizer2State.init_state)."""
    if pure16(work) and not work.paged_optimizer:
        return _STATE_SHRINK.get(work.optimizer, 1.0)
    return 1.0


def _paged_states(states: float, one: float, notes: list[str]) -> float:
    """Bytes of a paged optimizer's states the GPU must hold: ``one`` parameter's (the
    largest), which bitsandbytes prefetches to the GPU for that parameter's update
    (Optimizer8bit.step: prefetch_state per parameter); the rest live in CUDA unified memory,
    which the driver evicts to host RAM when the GPU is full — nothing PyTorch's allocator
    counts (torchtune's peak-memory logs leave them out). The page traffic is not timed
    (docs/methodology.md §6.7t "tt2": whole states cycled each step read 0.50 of a measured
    A6000 step that leaves no time for it)."""
    held = min(states, one)
    notes.append(
        f"paged optimizer: its {states / GIB:.2f} GiB of states sit in CUDA unified memory, "
        f"paged to host RAM when the GPU is full (that much host RAM is needed); the GPU must "
        f"hold one parameter's, {held / GIB:.2f} GiB, for its update. The paging over PCIe "
        "each step is not in the time"
    )
    return held


def _megatron_memory(
    work: WorkloadSpec,
    lay: MegatronLayout,
    n: int,
    framework: float,
    flash_attention: bool,
    notes: list[str],
) -> MemoryBreakdown:
    """A Megatron job's memory on one GPU of ``n`` under its stated layout (megatron.py:
    Megatron-LM's theoretical_memory_usage.py): the model states split over TP × PP, the
    master weights and optimizer states over the data-parallel × CP group, the activations of
    the first pipeline stage for a micro-batch of the engine's per-GPU share."""
    wide = work.precision in ("fp32", "tf32")
    weights, grads, master, opt = megatron.state_bytes(
        work.model, lay, n, wide=wide, optimizer_bytes=OPTIMIZER_BYTES.get(work.optimizer, 8.0)
    )
    mb = lay.micro_batch or megatron.micro_batch_size(n, work.batch_size)
    # the score matrices are saved unless a fused kernel never writes them (Megatron-LM's 2022
    # attention does) or selective recomputation drops them (Korthikanti et al. 2022 §5)
    fused = flash_attention and work.attention_kernel != MEGATRON_SOFTMAX
    acts, logits = megatron.activation_bytes(
        work.model,
        lay,
        micro_batch=mb,
        seq=work.seq_len,
        wide=wide,
        recompute=work.gradient_checkpointing,
        flash_attention=fused or work.selective_recompute,
    )
    dp = n // lay.model_parallel
    notes.append(
        f"Megatron {lay.label} × DP{dp}: weights and fp32 gradients split {lay.tp * lay.pp} "
        f"ways, master weights and optimizer states {dp * lay.cp} ways (distributed "
        f"optimizer); activations of the first pipeline stage at micro-batch {mb}"
    )
    return MemoryBreakdown(
        weights=weights / GB,
        gradients=grads / GB,
        optimizer=opt / GB,
        master_weights=master / GB,
        activations=acts / GB,
        logits=logits / GB,
        workspace=(acts + logits) * TRAINING_FRAGMENTATION / GB,
        framework=framework,
        num_gpus=n,
        notes=tuple(notes),
    )


def _inference_workspace(work: WorkloadSpec, act_b: float) -> float:
    """Largest transient buffers of one forward pass."""
    m = work.model
    b = work.batch_size
    if m.is_transformer and m.has_shape:
        h = float(m.hidden_size or 0)
        inter = float(m.intermediate_size or 4 * h)
        s = work.seq_len
        if m.family == "encoder-decoder":
            # the largest pass is the encoder's, over its own positions (Whisper: 1,500);
            # each decoder step's logits are one token's
            from app.domain.seq2seq import encoder_tokens

            s = encoder_tokens(work)
            per_layer = s * b * (2 * h + 2 * inter) * act_b
            return per_layer + b * max(1, work.beams) * (m.vocab_size or 0) * 4.0
        per_layer = s * b * (2 * h + 2 * inter) * act_b
        if m.family != "decoder":
            # an encoder's inference (embeddings, classification, extractive QA: BertModel or a
            # task head) computes no vocabulary logits; only a masked-LM head would, and at
            # b × s × vocab in fp32 that is 16 GB for BERT-base at batch 256 × 512
            return per_layer
        return per_layer + b * (m.vocab_size or 0) * 4.0
    if m.family == "vit" and m.has_shape:
        s = m.vit_tokens()
        return s * b * 6 * float(m.hidden_size or 0) * act_b
    if m.family == "diffusion" and m.operators is not None:
        # the live peak of a UNet pass or of the VAE decode, whichever is larger
        return max(_diffusion_transients(work, act_b))
    # forward-only: one or two layers' feature maps live at a time, a small share of the
    # training footprint (which keeps every layer's)
    return 0.1 * activation_bytes(work, b, flash_attention=True, act_bytes=act_b)


_FP32_DECODE_NOTE = (
    "the VAE decodes in float32 (diffusers' SDXL pipeline upcasts it: force_upcast), its "
    "activations at 4 bytes and its weights at fp32 while it runs (pipe.enable_vae_slicing(), "
    "off by default, decodes a batch one image at a time)"
)


def fp32_decode(work: WorkloadSpec) -> bool:
    """Whether the pipeline decodes in float32 whatever the job's 16-bit precision
    (vocab.FP32_DECODE_PRESETS: diffusers' SDXL pipeline upcasts its VAE); the decode's time
    (perf._decode_ops) and its memory (``_diffusion_transients``) both follow it."""
    return (
        work.preset in FP32_DECODE_PRESETS
        and work.runtime in DIFFUSERS_DECODE_RUNTIMES
        and work.precision in AMP_PRECISIONS
    )


def vae_upcast_bytes(work: WorkloadSpec) -> float:
    """Bytes the VAE's weights grow by while an fp32 decode runs (``fp32_decode``): diffusers'
    ``upcast_vae`` is ``self.vae.to(dtype=torch.float32)`` in place, its 16-bit weights freed
    as each is converted, and the pipeline casts it back after the decode ("cast back to fp16
    if needed"), so the growth lives in the decode only. Releases before diffusers PR #12619
    kept post_quant_conv, the decoder's conv_in and its mid block in 16-bit under SDPA (10.5 M
    of 83.7 M parameters, a 21 MB difference): the whole VAE is counted, as today's code runs."""
    if not fp32_decode(work):
        return 0.0
    vae = pipeline_frozen_params(work.model).get(_VAE_PART, 0.0)
    return vae * (WIDE_B - 2.0)  # from the 16-bit copy _frozen_pipeline_bytes holds


def _diffusion_transients(work: WorkloadSpec, act_b: float) -> tuple[float, float]:
    """Bytes live at the peak of one UNet (or transformer) call and of the VAE decode
    (``activations.table_transient``), for the job's batch (0 where the model has no such
    table). A denoiser call runs on ``guidance_latents`` latents an image — the
    classifier-free-guidance pair in one call, so its activations are twice the batch's —
    while the decode runs once on the batch's latents. An fp32 decode (``fp32_decode``) holds
    its activations at 4 bytes an element and its VAE's weights at fp32
    (``vae_upcast_bytes``); the two phases never overlap, so the peak is the larger, not
    their sum."""
    m = work.model
    unet = table_transient(m.operators, act_b) if m.operators is not None else 0.0
    unet *= work.batch_size * guidance_latents(m)
    dec = m.decoder_operators
    if dec is None:
        return unet, 0.0
    upcast = fp32_decode(work)
    vae = table_transient(dec, WIDE_B if upcast else act_b)
    return unet, vae * work.batch_size + vae_upcast_bytes(work)
