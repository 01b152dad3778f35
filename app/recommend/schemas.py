"""The recommendation contract: request and response models of /api/v1/recommendations,
/api/v1/estimate and /api/v1/workloads. Field names are public API."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from types import UnionType
from typing import Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.catalog.schemas import SegmentIn as SegmentName
from app.catalog.schemas import VendorIn as VendorName
from app.domain.cost import DEFAULT_ELECTRICITY_USD_PER_KWH, Usage
from app.domain.evaluate import COUNTS
from app.domain.hf_config import (
    MAX_EXPERTS,
    MAX_FFN,
    MAX_HEADS,
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_SHARED_EXPERTS,
    MAX_VOCAB,
)
from app.domain.rank import DEFAULT_SPEED_WEIGHT
from app.numbers import field_error, parse_hours, parse_number
from app.vocab import (
    ENCODER_SERVING_RUNTIMES,
    INFERENCE_TASKS,
    LLAMACPP_VULKAN_RUNTIME,
    ONE_JOB_TASKS,
    RUNTIMES,
    TRAINING_TASKS,
    Acquisition,
    Condition,
    EncoderServingRuntime,
    ExtraGpus,
    Family,
    Framework,
    GpuBackend,
    MasterWeights,
    MultiGpu,
    Objective,
    Optimizer,
    Peft,
    Precision,
    PriceBasis,
    PurchaseBasis,
    Quantization,
    Runtime,
    Segment,
    ServingKind,
    ServingRuntime,
    Task,
    Tier,
    Vendor,
)
from app.vocab import HostTier as OfferTier
from app.vocab import KvCachePrecision as KvPrecision

__all__ = [
    "Acquisition", "Family", "Framework", "KvPrecision", "Objective", "Optimizer", "Peft",
    "Precision", "Quantization", "Runtime", "SegmentName", "ServingRuntime", "Task", "VendorName",
]  # fmt: skip


MAX_PARAMS = 1e13  # 10 trillion: beyond any published dense or MoE model by a wide margin
MAX_SEQ = 1 << 21  # 2M tokens
# the most GPUs a job may span: the largest count the planner walks (evaluate.COUNTS)
MOST_GPUS = COUNTS[-1]
# The largest latency target (an hour): what a user gives for "no limit" on one of them
MAX_TARGET_MS = 3.6e6


def _absent(value: object) -> bool:
    """A response field left out of the JSON where it is None (new, optional echoes)."""
    return value is None


def ui(
    group: str,
    *,
    tasks: tuple[str, ...] | None = None,
    kind: str | None = None,
    assumed: str | None = None,
    form: bool = True,
    form_help: str | None = None,
) -> dict[str, Any]:
    """Form metadata for a request field (read by app/web/forms.py, ignored by the API).

    ``group``: the form section; ``tasks``: the tasks the field matters for (all when
    omitted); ``kind``: how a number is written and shown ("count" 8.03B, "usd" $800);
    ``assumed``: what the engine assumes when the field is blank; ``form=False`` keeps a
    field out of the HTML form. The field's title is its label, its description the help
    (``form_help`` where the form says it in its own words: "leave all unticked" where the API
    says "an empty list").
    """
    extra: dict[str, Any] = {"group": group}
    if tasks is not None:
        extra["tasks"] = list(tasks)
    if kind is not None:
        extra["kind"] = kind
    if assumed is not None:
        extra["assumed"] = assumed
    if not form:
        extra["form"] = False
    if form_help is not None:
        extra["form_help"] = form_help
    return extra


# workload.batch_size's limit, which the deadline's larger-batch search stays within too
MAX_BATCH_SIZE = 1 << 20


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # the block's name in the form's field names (app.numbers.NUMBER_EXAMPLES: the serving block's
    # "serving.output_tokens" has its own examples, the workload's "output_tokens" others)
    _form_prefix: ClassVar[str] = ""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic reads true as 1 for an int field: "batch_size": true ran a batch of one
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation is not bool and bool not in get_args(annotation):
                raise ValueError("a number or text is wanted here, not true/false")
        # and 1 or 0 as true or false for a yes/no field
        if isinstance(value, int | float) and not isinstance(value, bool) and info.field_name:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation is bool or bool in get_args(annotation):
                raise ValueError("true or false is wanted here, not a number")
        if isinstance(value, str) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation is bool or bool in get_args(annotation):
                return _written_bool(value)
            folded = _word_any_case(value, annotation)
            if folded is not None:
                return folded
            extra = cls.model_fields[info.field_name].json_schema_extra
            if isinstance(extra, dict) and extra.get("kind") == "hours":
                return parse_hours(value)  # "36h", "2 days": a time as people write it
            try:
                return _written_number(value, annotation)
            except ValueError as exc:
                # the field's own examples, as the form and the CLI give them
                raise field_error(exc, cls._form_prefix + info.field_name) from None
        return value


# The words the HTML form's yes/no select sends ("on"/"off", templates/_macros.html) and a
# hand-written link's "true"/"false": the only text a yes/no field reads
_FORM_YES_NO = {"on": True, "true": True, "off": False, "false": False}


def _written_bool(value: str) -> bool:
    """A yes/no field's text: only the form's words (``_FORM_YES_NO``), as numbers are read in
    the form's writing (``_written_number``); pydantic's lax reading had also taken "yes",
    "y", "t" and "1" as true, "gradient_checkpointing": "yes" among them."""
    if value in _FORM_YES_NO:
        return _FORM_YES_NO[value]
    raise ValueError("true or false is wanted here (JSON true/false, not text)")


def _word_any_case(value: str, annotation: Any) -> str | None:
    """A closed field's word as people write it, in the vocabulary's case, or None where it
    is not one: "Q4_K_M" (llama.cpp's and every GGUF file's spelling; Ollama's tags write
    "q4_K_M"), "LoRA", "BF16", "vLLM", "AdamW" had each been a 422 listing the lower-case word,
    where a vendor ("NVIDIA", app.catalog.schemas) and a preset already read in any case.
    Only a word that is one of the field's own after folding is changed, so an unknown one is
    refused with the list as before."""
    union = get_origin(annotation) in (Union, UnionType)
    words = [
        w
        for kind in (get_args(annotation) if union else (annotation,))
        if get_origin(kind) is Literal
        for w in get_args(kind)
        if isinstance(w, str)
    ]
    if not words or value in words:
        return None
    key = value.strip().lower()
    return key if key in words else None


def _written_number(value: str, annotation: Any) -> Any:
    """A number field's text read as the form and the CLI read it (app.numbers: "8.03B",
    "350M", "15k", "$800", "1.2e9"): the JSON API had refused "1.3B" for params, whose own
    description offers it. Text for a field that takes text stays as it is."""
    union = get_origin(annotation) in (Union, UnionType)
    kinds = set(get_args(annotation)) if union else {annotation}
    if str in kinds or not kinds & {int, float}:
        return value
    number = parse_number(value)  # its ValueError names the forms it reads (a 422)
    if float not in kinds:
        if number != int(number):
            raise ValueError("must be a whole number")
        return int(number)
    return number


class ModelIn(_In):
    family: Family | None = Field(
        default=None,
        title="Model family",
        description="The architecture type; decides the memory and FLOP formulas.",
        json_schema_extra=ui("model"),
    )
    params: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PARAMS,
        title="Parameters",
        description="Model size: 8.03B, 350M, 1.2e9 or a plain number.",
        json_schema_extra=ui("model", kind="count"),
    )
    layers: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LAYERS,
        title="Layers",
        description="Transformer blocks (or network depth); an encoder-decoder's encoder depth.",
        json_schema_extra=ui("shape"),
    )
    decoder_layers: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LAYERS,
        title="Decoder layers",
        description="Encoder-decoders only: the decoder's depth where it differs from the "
        "encoder's (Whisper large-v3-turbo 4 under 32, distil-large-v3 2; config.json "
        "decoder_layers). Blank: as deep as the encoder.",
        json_schema_extra=ui("shape", form=False),
    )
    hidden_size: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="Hidden size",
        description="Model width (d_model).",
        json_schema_extra=ui("shape"),
    )
    num_heads: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HEADS,
        title="Attention heads",
        description="Query heads per layer.",
        json_schema_extra=ui("shape"),
    )
    num_kv_heads: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HEADS,
        title="Key/value heads",
        description="Fewer than the attention heads with grouped-query attention.",
        json_schema_extra=ui("shape"),
    )
    explicit_head_dim: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="Head size",
        description="config.json's head_dim where it is not hidden ÷ heads (Qwen3-30B-A3B: "
        "128 at hidden 2048 and 32 heads; gpt-oss 64): the width of Q, the attention core and "
        "O's input. Blank: hidden ÷ heads.",
        json_schema_extra=ui("shape", form=False),
    )
    intermediate_size: int | None = Field(
        default=None,
        ge=1,
        le=MAX_FFN,
        title="Feed-forward width",
        description="Inner size of each feed-forward block.",
        json_schema_extra=ui("shape"),
    )
    vocab_size: int | None = Field(
        default=None,
        ge=1,
        le=MAX_VOCAB,
        title="Vocabulary size",
        description="Tokens in the vocabulary (embedding and output layer).",
        json_schema_extra=ui("shape", kind="count"),
    )
    max_context: int | None = Field(
        default=None,
        ge=1,
        le=MAX_SEQ,
        title="Longest context",
        description="The most tokens the model accepts.",
        json_schema_extra=ui("shape", kind="count"),
    )
    gflops_per_sample: float | None = Field(
        default=None,
        gt=0,
        le=1e7,
        title="Forward GFLOPs per sample",
        description="For CNNs and diffusion models: forward-pass cost of one sample.",
        json_schema_extra=ui("shape"),
    )
    input_size: float | None = Field(
        default=None,
        gt=0,
        le=16384,
        title="Input size (image pixels or audio seconds)",
        description="Image side length in pixels for vision models; seconds of audio per "
        "input for a speech encoder-decoder (Whisper: 30, its window: the encoder runs over 50 "
        "positions a second, 1,500 a window). Blank for an encoder-decoder: its encoder runs "
        "over seq_len tokens, as a text model's (T5, BART) does.",
        json_schema_extra=ui("shape"),
    )
    experts: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPERTS,
        title="Experts",
        description="Mixture-of-experts models: experts per layer.",
        json_schema_extra=ui("shape"),
    )
    active_experts: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPERTS,
        title="Active experts",
        description="Experts each token is routed to.",
        json_schema_extra=ui("shape"),
    )
    active_params: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PARAMS,
        title="Active parameters",
        description="Parameters used per token (mixture of experts).",
        json_schema_extra=ui("shape", kind="count"),
    )
    activation_mb_per_sample: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        title="Activations per sample (MB)",
        description="Measured activation memory of one training sample, when known.",
        json_schema_extra=ui("shape"),
    )
    activation_coeff: float | None = Field(
        default=None,
        gt=0,
        le=10_000,
        title="Activation bytes per token·layer·hidden unit",
        description="Measured bytes saved for backward per token, layer and hidden unit "
        "(transformers; benchmarks/activation_memory.py).",
        json_schema_extra=ui("shape"),
    )
    passes_per_sample: int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        title="Network passes per sample",
        description="network passes per sample (diffusion steps × 2)",
        json_schema_extra=ui("shape"),
    )
    kv_elements_per_token: float | None = Field(
        default=None,
        gt=0,
        le=1e9,
        title="KV values per token",
        description="K+V values cached per token over the layers that keep every token "
        "(derived from a config.json; overrides 2 × layers × KV heads × head size).",
        json_schema_extra=ui("shape", tasks=INFERENCE_TASKS, kind="count"),
    )
    kv_window_elements_per_token: float | None = Field(
        default=None,
        ge=0,
        le=1e9,
        title="KV values per token (sliding-window layers)",
        description="K+V values per token over the layers that keep only a window.",
        json_schema_extra=ui("shape", tasks=INFERENCE_TASKS, kind="count"),
    )
    sliding_window: int | None = Field(
        default=None,
        ge=1,
        le=MAX_SEQ,
        title="Sliding window (tokens)",
        description="Tokens a sliding-window layer keeps.",
        json_schema_extra=ui("shape", tasks=INFERENCE_TASKS, kind="count"),
    )
    tied_embeddings: bool | None = Field(
        default=None,
        title="LM head tied to the embedding",
        description="Whether the output head shares the input embedding's matrix "
        "(config.json tie_word_embeddings); read from the parameter count when blank. Sizes "
        "QLoRA's 16-bit head and autocast's weight copies.",
        json_schema_extra=ui("shape", tasks=TRAINING_TASKS, form=False),
    )
    gated_mlp: bool | None = Field(
        default=None,
        title="Gated MLP (SwiGLU/GeGLU)",
        description="Whether each layer's MLP is gated (gate, up and down projections: "
        "Llama, Mistral, Qwen) or plain (up and down: GPT-2, BERT, ViT); read from a "
        "config.json's model type and hidden_act, else from the parameter count when blank. "
        "Sizes the MLP's FLOPs, its saved activations and LoRA's adapters.",
        json_schema_extra=ui("shape", tasks=TRAINING_TASKS, form=False),
    )
    attention: Literal["mla"] | None = Field(
        default=None,
        title="Attention kind",
        description="'mla': multi-head latent attention (DeepSeek-V2/V3; config.json "
        "kv_lora_rank), whose decode runs more kernels per layer; blank: heads of their own.",
        json_schema_extra=ui("shape", tasks=INFERENCE_TASKS, form=False),
    )
    q_lora_rank: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="Query latent rank (MLA)",
        description="Multi-head latent attention: config.json q_lora_rank (DeepSeek-V3 1,536; "
        "blank where queries are not compressed). With the four below it shapes MLA's five "
        "projections, which LoRA adapts.",
        json_schema_extra=ui("shape", form=False),
    )
    kv_lora_rank: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="Key-value latent rank (MLA)",
        description="config.json kv_lora_rank (DeepSeek-V3 512).",
        json_schema_extra=ui("shape", form=False),
    )
    qk_nope_head_dim: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="MLA query-key head size without RoPE",
        description="config.json qk_nope_head_dim (DeepSeek-V3 128).",
        json_schema_extra=ui("shape", form=False),
    )
    qk_rope_head_dim: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="MLA query-key head size with RoPE",
        description="config.json qk_rope_head_dim (DeepSeek-V3 64).",
        json_schema_extra=ui("shape", form=False),
    )
    v_head_dim: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        title="MLA value head size",
        description="config.json v_head_dim (DeepSeek-V3 128).",
        json_schema_extra=ui("shape", form=False),
    )
    shared_experts: int | None = Field(
        default=None,
        ge=0,
        le=MAX_SHARED_EXPERTS,
        title="Shared experts",
        description="Experts every token runs beside the routed ones (DeepSeek 1; Qwen3-MoE, "
        "Mixtral, gpt-oss 0); blank: counted as one.",
        json_schema_extra=ui("shape", tasks=INFERENCE_TASKS, form=False),
    )
    hf_config: dict[str, Any] | None = Field(
        default=None,
        title="Or paste its config.json",
        description="A Hugging Face config.json: family, total and active parameters, layers, "
        "heads, KV heads and KV bytes per token are derived from it (dense, GQA, MoE with "
        "shared experts, latent attention); fields given here override it. Nothing is fetched.",
        json_schema_extra={**ui("model"), "widget": "textarea"},
    )


class ServingIn(_In):
    """An LLM served to many users at once (task 'serving')."""

    _form_prefix: ClassVar[str] = "serving."

    concurrent_requests: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        title="Concurrent users",
        description="Requests in flight at once. Give this or requests per second.",
        json_schema_extra=ui("serving", tasks=("serving",), kind="count"),
    )
    requests_per_s: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        title="Requests per second",
        description="Arrival rate of new requests, instead of concurrent users.",
        json_schema_extra=ui("serving", tasks=("serving",)),
    )
    prompt_tokens: int = Field(
        default=1000,
        ge=1,
        le=MAX_SEQ,
        title="Prompt tokens (mean)",
        description="Mean input length per request.",
        json_schema_extra=ui("serving", tasks=("serving",), kind="count", assumed="1,000"),
    )
    output_tokens: int = Field(
        default=300,
        ge=1,
        le=MAX_SEQ,
        title="Output tokens (mean)",
        description="Mean generated length per request.",
        json_schema_extra=ui("serving", tasks=("serving",), kind="count", assumed="300"),
    )
    prompt_tokens_spread: int | None = Field(
        default=None,
        ge=0,
        le=MAX_SEQ,
        title="Prompt spread (±)",
        description="Optional: typical deviation of the prompt length; the KV cache is sized "
        "for mean + spread.",
        json_schema_extra=ui("serving", tasks=("serving",), kind="count"),
    )
    output_tokens_spread: int | None = Field(
        default=None,
        ge=0,
        le=MAX_SEQ,
        title="Output spread (±)",
        description="Optional: typical deviation of the output length.",
        json_schema_extra=ui("serving", tasks=("serving",), kind="count"),
    )
    ttft_ms_target: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TARGET_MS,
        title="Time to first token ≤ (ms)",
        description="Longest acceptable wait for the first token; configurations that miss "
        "it are excluded. Blank: 2,000 ms, MLPerf Inference's Llama 2 70B server limit. "
        "For no limit, give 3,600,000 (an hour).",
        json_schema_extra=ui("serving", tasks=("serving",), assumed="2,000 (MLPerf)"),
    )
    itl_ms_target: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TARGET_MS,
        title="Time between tokens ≤ (ms)",
        description="Inter-token latency; 50 ms ≈ 20 tokens/s per user. Blank: 200 ms, "
        "MLPerf's time per output token for Llama 2 70B (its interactive limit is 40 ms). "
        "For no limit, give 3,600,000.",
        json_schema_extra=ui("serving", tasks=("serving",), assumed="200 (MLPerf)"),
    )
    target_percentile: Literal["p50", "p95"] = Field(
        default="p50",
        title="Targets apply to",
        description="The median request (p50) or the 95th percentile (MLPerf holds its "
        "limits at the 99th).",
        json_schema_extra=ui("serving", tasks=("serving",)),
    )
    kv_cache_precision: KvPrecision | None = Field(
        default=None,
        title="KV cache precision",
        description="bf16/fp16, or fp8 (halves the cache; Ada, Hopper, Blackwell, MI300).",
        json_schema_extra=ui("serving", tasks=("serving",), assumed="the planner tries both"),
    )


class MegatronLayoutIn(_In):
    """How a Megatron (runtime ``megatron``) training replica spans its GPUs, as the user runs
    it (app/domain/megatron.py ``MegatronLayout``). Blank: Megatron's usual layout for the
    memory the job needs (tensor parallel in a node, pipeline stages only beyond 8). API only:
    not on the HTML form."""

    tensor_parallel: int = Field(default=1, ge=1, le=64, description="Tensor-parallel size (TP).")
    pipeline_parallel: int = Field(
        default=1, ge=1, le=64, description="Pipeline-parallel stages (PP)."
    )
    virtual_stages: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Virtual stages per pipeline rank (VP, interleaved 1F1B); more than 1 "
        "only with pipeline_parallel > 1.",
    )
    context_parallel: int = Field(default=1, ge=1, le=64, description="Context-parallel size (CP).")
    microbatches: int | None = Field(
        default=None,
        ge=1,
        le=1 << 20,
        description="Micro-batches per pipeline per optimizer step (global batch ÷ (micro "
        "batch × data-parallel size)). Blank: the job's gradient-accumulation steps.",
    )
    tp_comm_overlap: bool = Field(
        default=False, description="Megatron's --tp-comm-overlap (off by default)."
    )
    overlap_grad_reduce: bool = Field(
        default=False,
        description="Megatron's --overlap-grad-reduce / --overlap-param-gather (off by default).",
    )


class WorkloadIn(_In):
    preset: str | None = Field(
        default=None,
        max_length=100,
        title="Workload",
        description="A known model fills every blank field; or describe your own.",
        json_schema_extra=ui("workload", kind="preset"),
    )
    task: Task | None = Field(
        default=None,
        title="Task",
        description="What the GPU will do with the model.",
        json_schema_extra=ui("workload"),
    )
    model: ModelIn | None = None
    precision: Precision | None = Field(
        default=None,
        title="Precision",
        description="Number format of weights and compute.",
        json_schema_extra=ui("workload"),
    )
    batch_size: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BATCH_SIZE,
        title="Batch size (all GPUs)",
        description="Samples (or sequences) processed per step, across all the GPUs: the "
        "global batch (data-parallel copies and FSDP split it, batch ÷ N each: Hugging Face's "
        "per_device_train_batch_size × N; a model split over GPUs runs it whole).",
        json_schema_extra=ui("workload", tasks=ONE_JOB_TASKS, kind="count"),
    )
    seq_len: int | None = Field(
        default=None,
        ge=1,
        le=MAX_SEQ,
        title="Sequence length",
        description="Tokens per sample (the prompt, for inference).",
        json_schema_extra=ui("workload", tasks=ONE_JOB_TASKS, kind="count"),
    )
    output_tokens: int | None = Field(
        default=None,
        ge=1,
        le=MAX_SEQ,
        title="Output tokens",
        description="Tokens generated per request.",
        json_schema_extra=ui("workload", tasks=("inference",), kind="count"),
    )
    optimizer: Optimizer | None = Field(
        default=None,
        title="Optimizer",
        description="Decides the optimizer-state memory per trainable parameter.",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS),
    )
    peft: Peft | None = Field(
        default=None,
        title="Parameter-efficient fine-tuning",
        description="LoRA / QLoRA train small adapters and freeze the base model.",
        json_schema_extra=ui("workload", tasks=("fine-tuning",)),
    )
    beams: int | None = Field(
        default=None,
        ge=1,
        le=16,
        title="Beams",
        description="Encoder-decoder inference only (Whisper, T5): the beam search width "
        "(generate's num_beams, faster-whisper's beam_size); blank: greedy decoding, 1.",
        json_schema_extra=ui("workload", tasks=("inference",), assumed="1", form=False),
    )
    lora_rank: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        title="LoRA rank",
        description="Adapter rank for LoRA / QLoRA.",
        json_schema_extra=ui("workload", tasks=("fine-tuning",), assumed="16"),
    )
    lora_layers: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        title="LoRA layers",
        description="runtime mlx only: the blocks LoRA / QLoRA adapts, counted from the last "
        "(mlx-lm's --num-layers); backward runs through them alone. Blank: mlx-lm's default, "
        "16; the model's layer count adapts every block (mlx-lm's -1).",
        json_schema_extra=ui("workload", tasks=("fine-tuning",), assumed="16", form=False),
    )
    gradient_checkpointing: bool | None = Field(
        default=None,
        title="Activation checkpointing",
        description="Recompute activations: less memory, for one more forward pass a step: "
        "about 33 % more compute in full training, 50 % under LoRA / QLoRA (no weight "
        "gradients).",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS),
    )
    cache_encodings: bool | None = Field(
        default=None,
        title="Cache text encodings and latents",
        description="Diffusion fine-tuning only: encode the captions and images once before "
        "training and free the text encoders and VAE (kohya-ss --cache_text_encoder_outputs "
        "--cache_latents): less memory, but the text encoders cannot train (kohya trains a "
        "text-encoder LoRA of SD and SDXL unless --network_train_unet_only) and no per-step "
        "caption or crop augmentation. Blank: the engine caches them only where the job needs "
        "it to fit; false: never; true: always.",
        json_schema_extra=ui(
            "workload",
            tasks=TRAINING_TASKS,
            form_help="Diffusion fine-tuning: encode the captions and images once and free the "
            "text encoders and VAE (kohya-ss --cache_text_encoder_outputs --cache_latents). "
            "Less memory, but no text-encoder LoRA (kohya trains one for SD and SDXL unless "
            "--network_train_unet_only). Default: only where the job needs it to fit.",
        ),
    )
    master_weights: MasterWeights | None = Field(
        default=None,
        title="Master weights",
        description="How a 16-bit training job holds its weights. 'fp32': mixed precision "
        "(torch.autocast, apex AMP), an fp32 copy of every weight with fp32 gradients and "
        "optimizer states; 'none': pure 16-bit (torchtune dtype: bf16), the weights, gradients "
        "and a torch optimizer's states all 16-bit. Blank: fp32.",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS),
    )
    optimizer_in_backward: bool | None = Field(
        default=None,
        title="Optimizer step in backward",
        description="Full training only: each parameter is updated as soon as its gradient "
        "is ready and the gradient freed (torchtune optimizer_in_bwd: True; PyTorch's "
        "register_post_accumulate_grad_hook), so one tensor's gradient is held, not all. Not "
        "with gradient accumulation or gradient clipping. Blank: false.",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS),
    )
    paged_optimizer: bool | None = Field(
        default=None,
        title="Paged optimizer",
        description="bitsandbytes' paged AdamW (PagedAdamW, PagedAdamW8bit; Hugging Face "
        "optim paged_adamw_32bit / paged_adamw_8bit): the optimizer states live in CUDA "
        "unified memory and page to host RAM when the GPU is full, so the GPU holds one "
        "parameter's states for its update. The paging traffic is not timed. Blank: false.",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS),
    )
    loss_chunks: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        title="Loss chunks",
        description="Language-model training: a chunked cross-entropy that upcasts and "
        "differentiates the logits one chunk of tokens at a time (torchtune "
        "CEWithChunkedOutputLoss, 8 chunks). Blank: 1, the loss over all the logits at once.",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS, kind="count"),
    )
    dataset_samples: float | None = Field(
        default=None,
        gt=0,
        le=1e13,
        title="Dataset size (samples)",
        description="Samples per training epoch, or to run inference on, e.g. 1.28M or 15k. "
        "Inference: the images to generate or requests to answer, which a deadline needs. "
        "Blank: the preset's dataset, else a stated default (1 M tokens for a language model's "
        "fine-tuning), which the answer names as assumed.",
        # shown wherever "Finish within" is: a deadline needs a job of known size
        json_schema_extra=ui("workload", tasks=ONE_JOB_TASKS, kind="count"),
    )
    epochs: float | None = Field(
        default=None,
        gt=0,
        le=1e5,
        title="Epochs",
        description="Passes over the dataset.",
        json_schema_extra=ui("workload", tasks=TRAINING_TASKS),
    )
    latency_target_ms: float | None = Field(
        default=None,
        gt=0,
        le=3.6e6,
        title="Latency target (ms)",
        description="The slowest acceptable time for one whole batch of requests.",
        json_schema_extra=ui("workload", tasks=("inference",)),
    )
    extra_gpus: ExtraGpus | None = Field(
        default=None,
        title="Extra GPUs run as",
        description="How LLM inference uses GPUs beyond the fewest that hold the model: one "
        "replica over all of them, or copies side by side. Blank or "
        "'one_replica': one replica over all of them, as the runtime spreads it (tensor "
        "parallel or a layer split): the latency of one stream. 'copies': the samples are a "
        "batch of independent work (offline generation, embeddings), so extra GPUs may run "
        "copies side by side, each on its share of the batch, wherever that gets through the "
        "batch faster than one replica (the row names the layout it took). The batch size "
        "stays the whole batch: to run each of c copies at b, ask b × c. Changes LLM "
        "inference only (other models already run extra GPUs as copies); 422 for other tasks.",
        json_schema_extra=ui("workload", tasks=("inference",), assumed="One replica"),
    )
    allow_tf32_matmul: bool | None = Field(
        default=None,
        title="TF32 for FP32 matrix maths",
        description="Let FP32 matrix products run on TF32 tensor cores (PyTorch's "
        "allow_tf32). Off unless the preset says so.",
        json_schema_extra=ui("assumptions", assumed="The preset's choice"),
    )
    channels_last: bool | None = Field(
        default=None,
        title="Channels-last tensors (CNN, UNet)",
        # kept under the form's fold length (one line, no "More"): the field is on every page
        description="A CNN or UNet run in torch.channels_last (NHWC): no cuDNN NCHW "
        "transposes. Blank: no, PyTorch's NCHW. Models without convolutions ignore it.",
        json_schema_extra=ui("assumptions", tasks=ONE_JOB_TASKS, assumed="No"),
    )
    runtime: Runtime | EncoderServingRuntime | None = Field(
        default=None,
        title="Runtime",
        description="How the model runs: eager PyTorch, torch.compile, TensorRT, vLLM, "
        "llama.cpp (llama.cpp-vulkan: its Vulkan build, no ROCm or oneAPI), ... Blank: "
        "eager PyTorch; Hugging Face generate for LLM inference; "
        "llama.cpp for GGUF formats; for serving vLLM on CUDA/ROCm/Intel (llama.cpp where "
        "vLLM does not run), MLX on Apple, llama.cpp on CPU. torch.compile is priced in "
        "its default mode (no CUDA graphs); an LLM's decode and prefill as "
        'mode="reduce-overhead" (CUDA graphs).',
        json_schema_extra=ui("workload", assumed="Picked for the job"),
    )
    gpu_backend: GpuBackend | None = Field(
        default=None,
        title="llama.cpp GPU backend",
        description="Runtime 'llama.cpp' only: 'vulkan' runs its Vulkan build (what runtime "
        "'llama.cpp-vulkan' asks for); blank: the GPU's own build (CUDA, HIP, Metal, SYCL).",
        json_schema_extra=ui("workload", tasks=INFERENCE_TASKS, form=False),
    )
    quantization: Quantization | None = Field(
        default=None,
        title="Weight format",
        description="Format of a quantised model's weights (GGUF, AWQ, GPTQ, NVFP4, MLX "
        "4-bit, ...); blank: the model's published weights, at the precision above.",
        json_schema_extra=ui("workload", tasks=INFERENCE_TASKS),
    )
    serving: ServingIn | None = Field(
        default=None, description="The load and latency targets of task 'serving'."
    )
    megatron_layout: MegatronLayoutIn | None = Field(
        default=None,
        description="Runtime 'megatron' only: the job's tensor/pipeline/virtual/context "
        "parallel layout. TP×PP×CP must divide constraints.num_gpus; without num_gpus, GPU "
        "counts it does not divide are excluded with a reason.",
    )

    @field_validator("preset", mode="before")
    @classmethod
    def _preset_any_case(cls, value: Any) -> Any:
        """A preset's id in any case ("Llama-3-8B", as the model's own name is written): the
        ids are lower case, and the refusal had offered 'llama-3-8b' as a guess."""
        return value.strip().lower() if isinstance(value, str) else value

    # whether the request named runtime 'llama.cpp-vulkan' (folded below): a refusal of the
    # pin then names workload.runtime, the field the user wrote, not workload.gpu_backend
    _vulkan_named: bool = PrivateAttr(default=False)

    @property
    def vulkan_runtime_named(self) -> bool:
        return self._vulkan_named

    @model_validator(mode="wrap")
    @classmethod
    def _vulkan_runtime(cls, data: Any, handler: ModelWrapValidatorHandler[WorkloadIn]) -> Any:
        """Runtime 'llama.cpp-vulkan' (the form's and the CLI's choice) is llama.cpp on its Vulkan
        backend: folded into runtime 'llama.cpp' + gpu_backend 'vulkan', so every llama.cpp rule
        (GGUF formats, layer split, serving) holds for it and only the backend differs."""
        runtime = data.get("runtime") if isinstance(data, dict) else None
        named = isinstance(runtime, str) and runtime.strip().lower() == LLAMACPP_VULKAN_RUNTIME
        if named:
            if data.get("gpu_backend") not in (None, "vulkan"):
                raise ValueError("runtime 'llama.cpp-vulkan' runs the Vulkan backend only")
            data = {**data, "runtime": "llama.cpp", "gpu_backend": "vulkan"}
        model = handler(data)
        if named:
            model._vulkan_named = True
        return model

    @field_validator("runtime", mode="before")
    @classmethod
    def _known_runtime(cls, value: Any) -> Any:
        """An unknown runtime named with what to write instead: pydantic's list of the
        fourteen left "ollama" (what a hobbyist installs) without a word about llama.cpp."""
        if not isinstance(value, str) or value in RUNTIMES or value in ENCODER_SERVING_RUNTIMES:
            return value
        if value.strip().lower() in RUNTIMES:  # "vLLM", "TensorRT-LLM", as their projects write
            return value.strip().lower()
        key = value.strip().lower().replace(" ", "-").replace("_", "-")
        hint = LLAMA_CPP_APPS.get(key) or SPEECH_RUNTIMES.get(key)
        if hint is not None:
            raise ValueError(hint)
        raise ValueError(f"unknown runtime '{value}'{did_you_mean(value, RUNTIMES)}")

    @field_validator("dataset_samples")
    @classmethod
    def _whole_samples(cls, value: float | None) -> float | None:
        """A dataset is a count of samples: 1.5 had been answered as "1.5 samples × 90 epochs".
        The field stays a float so "1.28M" and 1.2e9 read as written."""
        if value is not None and (value < 1 or not float(value).is_integer()):
            raise ValueError(f"a whole number of samples, 1 or more (got {value:g})")
        return value


# Desktop apps people name as their runtime, which run GGUF models on llama.cpp's kernels
# (Ollama's README lists llama.cpp as its backend; LM Studio's docs name llama.cpp, and MLX
# on Apple silicon): what to ask for instead, rather than an alias the engine has no data for.
_LM_STUDIO = (
    "LM Studio runs GGUF models with llama.cpp (MLX models on a Mac): use 'llama.cpp' (or 'mlx')"
)
LLAMA_CPP_APPS = {
    "ollama": "Ollama runs GGUF models on llama.cpp's kernels: use 'llama.cpp'",
    "lm-studio": _LM_STUDIO,
    "lmstudio": _LM_STUDIO,
}


# Whisper runtimes people name that the engine has no rows for: what it does price instead.
# faster-whisper runs Whisper on CTranslate2 (its README: "up to 4 times faster than
# openai/whisper for the same accuracy while using less memory", with fused int8/fp16
# kernels), WhisperX on faster-whisper; whisper.cpp is ggml's own Whisper program, separate
# from llama.cpp (which runs no Whisper model). The encoder pass and decoder steps the
# modelled runtimes price are the same work; those runtimes' kernels and dispatch are not.
# https://github.com/SYSTRAN/faster-whisper, https://github.com/ggml-org/whisper.cpp
_CTRANSLATE2 = (
    "{name} (Whisper on CTranslate2) is not modelled here: use 'transformers' (Hugging Face "
    "generate) or 'pytorch' (openai/whisper), the closest modelled runtimes; faster-whisper's "
    "README measures it up to 4× faster than openai/whisper, so expect it to beat their "
    "estimates"
)
SPEECH_RUNTIMES = {
    "faster-whisper": _CTRANSLATE2.format(name="faster-whisper"),
    "fasterwhisper": _CTRANSLATE2.format(name="faster-whisper"),
    "ctranslate2": _CTRANSLATE2.format(name="CTranslate2"),
    "whisperx": _CTRANSLATE2.format(name="WhisperX (on faster-whisper)"),
    "whisper.cpp": "whisper.cpp (ggml's Whisper program, separate from llama.cpp) is not "
    "modelled here: use 'pytorch' (openai/whisper) or 'transformers', the closest modelled "
    "runtimes",
}
SPEECH_RUNTIMES["whispercpp"] = SPEECH_RUNTIMES["whisper.cpp"]
SPEECH_RUNTIMES["whisper-cpp"] = SPEECH_RUNTIMES["whisper.cpp"]


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """ "; did you mean 'llama-3-8b'?" for the names closest to ``word``, or ""."""
    close = difflib.get_close_matches(word.strip().lower(), list(known), n=3, cutoff=0.6)
    if not close:
        return ""
    said = [f"'{c}'" for c in close]
    return (
        "; did you mean "
        + (f"{', '.join(said[:-1])} or " if len(said) > 1 else "")
        + said[-1]
        + "?"
    )


class ConstraintsIn(_In):
    framework: Framework = Field(
        default="pytorch",
        title="Framework",
        description="GPUs without a supported build of this framework are left out.",
        json_schema_extra=ui("budget"),
    )
    max_purchase_usd: float | None = Field(
        default=None,
        ge=0,
        le=1e9,
        title="Most to spend buying (USD)",
        description="For all the GPUs of one option together, e.g. $800 or 15k.",
        json_schema_extra=ui("budget", kind="usd", assumed="no limit"),
    )
    max_hourly_usd: float | None = Field(
        default=None,
        ge=0,
        le=1e6,
        title="Most to pay renting (USD per hour)",
        description="Per hour of cloud time, all GPUs together.",
        json_schema_extra=ui("budget", kind="usd", assumed="no limit"),
    )
    max_job_cost_usd: float | None = Field(
        default=None,
        ge=0,
        le=1e10,
        title="Most the job may cost (USD)",
        description="To finish the whole job.",
        json_schema_extra=ui("budget", kind="usd", assumed="no limit"),
    )
    max_hours: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        title="Finish within (hours)",
        description="The longest the whole job may take (dataset × epochs), in hours or "
        "with a unit (36h, 2 days, 1 week); slower configurations are left out, and when "
        "none is fast enough the answer says what would be: more GPUs, a faster card, or a "
        "shorter job.",
        json_schema_extra=ui(
            "budget", tasks=(*TRAINING_TASKS, "inference"), kind="hours", assumed="no limit"
        ),
    )
    allow_4bit: bool | None = Field(
        default=None,
        title="Allow 4-bit weights",
        description="Let serving pick 4-bit weight formats (int4 AWQ/GPTQ, NVFP4/MXFP4) "
        "to fit or speed up; each such row names its known quality cost. Blank: the model's "
        "published weights only (bf16, or fp8 where the model publishes it and the card runs "
        "it natively).",
        json_schema_extra=ui("budget", tasks=("serving",), assumed="No"),
    )
    acquisition: Acquisition = Field(
        default="either",
        title="Buy or rent",
        description="Whether costs use purchase prices, cloud prices or both.",
        json_schema_extra=ui("budget"),
    )
    vendors: list[VendorName] | None = Field(
        default=None,
        max_length=10,
        title="Vendors",
        description="Any vendor when left out or an empty list.",
        json_schema_extra=ui("budget", form_help="Leave all unticked for any vendor."),
    )
    segments: list[SegmentName] | None = Field(
        default=None,
        max_length=10,
        title="Kinds of card",
        description="Any kind when left out or an empty list.",
        json_schema_extra=ui("budget", form_help="Leave all unticked for any kind."),
    )
    max_gpus: int = Field(
        default=8,
        ge=1,
        le=MOST_GPUS,
        title="Most GPUs",
        description="Largest number of GPUs to split the job over.",
        json_schema_extra=ui("assumptions"),
    )
    num_gpus: int | None = Field(
        default=None,
        ge=1,
        le=MOST_GPUS,
        title="Exactly N GPUs",
        description="Only configurations with exactly this many GPUs (blank: every count "
        "from the fewest that hold the job up to the most GPUs).",
        json_schema_extra=ui("assumptions", assumed="any count up to the most GPUs"),
    )
    electricity_usd_per_kwh: float | None = Field(
        default=None,
        ge=0,
        le=10,
        title="Electricity (USD per kWh)",
        description="Energy price for running bought GPUs.",
        json_schema_extra=ui(
            "assumptions", kind="usd", assumed=f"{DEFAULT_ELECTRICITY_USD_PER_KWH} (US average)"
        ),
    )
    providers: list[str] | None = Field(
        default=None,
        max_length=30,
        title="Rent from",
        description="Only these clouds (SkyPilot's names: lambda, runpod, vast, nebius, ...). "
        "Left out or an empty list: any; a blank name is refused.",
        # API and CLI only: any SkyPilot cloud name or an imported provider is valid
        json_schema_extra=ui("budget", form=False),
    )
    tiers: list[OfferTier] | None = Field(
        default=None,
        max_length=3,
        title="Kinds of host",
        description="on-demand: the provider's own machines; marketplace: resold hosts; "
        "community: peer hosts. Any when left out or an empty list.",
        json_schema_extra=ui(
            "budget",
            form_help="on-demand: the provider's own machines; marketplace: resold hosts; "
            "community: peer hosts. Leave all unticked for any.",
        ),
    )
    exclude_marketplace: bool = Field(
        default=False,
        title="On-demand providers only",
        description="Leave out marketplace and community hosts (only the on-demand tier).",
        json_schema_extra=ui("budget", form=False),
    )
    allow_spot: bool | None = Field(
        default=None,
        title="Allow spot instances",
        description="Use an interruptible (spot) price where it is cheaper.",
        json_schema_extra=ui("budget", assumed="No"),
    )
    # Floors a person could mean (an hour a week, a week of keeping the card): below them a
    # card's price spread over its hours of use overflows into infinite value, not an answer.
    hours_per_week: float = Field(
        default=40,
        ge=1,
        le=168,
        title="Hours of use per week",
        description="How much you would use the GPUs. With the years, the hours a bought "
        "card's price is spread over (work per dollar) and the horizon of buy versus rent.",
        json_schema_extra=ui("assumptions"),
    )
    years: float = Field(
        default=3,
        ge=0.02,
        le=10,
        title="Years of use",
        description="How long you would keep bought cards.",
        json_schema_extra=ui("assumptions"),
    )
    resale_fraction: float = Field(
        default=0,
        ge=0,
        le=1,
        title="Resale value (fraction)",
        description="Share of the purchase price you expect back when you sell the cards.",
        json_schema_extra=ui("assumptions"),
    )
    purchase_basis: PurchaseBasis = Field(
        default="auto",
        title="Purchase price basis",
        description="Which price a bought card costs: a new price, a used/market price or "
        "the launch price; automatic takes new, else used, else launch (a card without a "
        "price of the chosen kind has no purchase price).",
        json_schema_extra=ui("assumptions"),
    )

    @field_validator("providers")
    @classmethod
    def _no_blank_provider(cls, value: list[str] | None) -> list[str] | None:
        """A blank name is a cleared field, not a cloud: refused as an empty query parameter
        is (it had been answered "no offer comes from ; ..."). An empty list is no filter,
        as the form's unticked boxes are."""
        if value is not None and any(not name.strip() for name in value):
            raise ValueError("a blank provider name; leave the field out or give [] for any")
        return value

    def applied_caps(self) -> tuple[float | None, float | None]:
        """(max_purchase_usd, max_hourly_usd) as the answer applies them: a purchase cap
        limits no rental and an hourly cap no purchase, so asked only to rent (or only to
        buy) the other way's cap is dropped (and said: ``unapplied_caps``). Kept, an hourly
        cap under acquisition 'buy' had made every answer need a price, so the 38 cards
        with none to buy were left out, a budget that reads no purchase deciding which."""
        buys, rents = self.acquisition != "rent", self.acquisition != "buy"
        return (
            self.max_purchase_usd if buys else None,
            self.max_hourly_usd if rents else None,
        )

    def unapplied_caps(self) -> list[str]:
        """The caps ``applied_caps`` drops, named in the answer's warnings."""
        dropped = {
            "rent": ("max_purchase_usd", self.max_purchase_usd, "renting", "purchase"),
            "buy": ("max_hourly_usd", self.max_hourly_usd, "buying", "rental"),
        }.get(self.acquisition)
        if dropped is None or dropped[1] is None:
            return []
        field, _, way, other = dropped
        return [
            f"constraints.{field} not applied: acquisition '{self.acquisition}' ranks "
            f"{way}, so a {other} price limits nothing here (acquisition 'either' weighs both)"
        ]

    def usage(self) -> Usage:
        """The usage the costs assume: the buy-versus-rent horizon and the hours a bought
        card's price is spread over."""
        return Usage(
            hours_per_week=self.hours_per_week,
            years=self.years,
            resale_fraction=self.resale_fraction,
            electricity_usd_per_kwh=(
                DEFAULT_ELECTRICITY_USD_PER_KWH
                if self.electricity_usd_per_kwh is None
                else self.electricity_usd_per_kwh
            ),
        )


class RecommendationRequest(_In):
    workload: WorkloadIn
    constraints: ConstraintsIn = Field(default_factory=ConstraintsIn)
    objective: Objective = Field(
        default="balanced",
        title="Rank by",
        description="What 'best' means for you.",
        json_schema_extra=ui("answer"),
    )
    speed_weight: float = Field(
        default=DEFAULT_SPEED_WEIGHT,
        ge=0,
        le=1,
        title="Balanced: weight of speed",
        description="Balanced ranks by speed score^w × value score^(1−w), each relative to "
        "the best GPU (value: work per dollar). 0.5 weighs them equally; 1 is fastest, 0 best "
        "value.",
        json_schema_extra=ui("assumptions"),
    )
    limit: int = Field(
        default=10,
        ge=1,
        le=500,
        title="Rows",
        description="How many GPUs to rank.",
        json_schema_extra=ui("assumptions"),
    )
    device_report_id: str | int | None = Field(
        default=None,
        title="Compare with my machine",
        description="A stored device report: your machine appears as the baseline row.",
        json_schema_extra=ui("answer", kind="report"),
    )
    what_if: bool = Field(
        default=False,
        description="Also rank a few variations of the job (batch, precision, PEFT, "
        "checkpointing, objective, each of the request's limits lifted) and say what each "
        "changes.",
        json_schema_extra=ui("answer", form=False),
    )
    group_by: Literal["gpu", "config"] = Field(
        default="gpu",
        title="One row per",
        description="gpu: each card once, in its best configuration for the objective, with "
        "its other GPU counts as alternatives; config: every configuration ranked on its own.",
        json_schema_extra=ui("answer", form=False),
    )


class EstimateRequest(_In):
    workload: WorkloadIn
    gpu: str = Field(min_length=1, max_length=100, description="catalog slug")
    num_gpus: int | None = Field(default=None, ge=1, le=MOST_GPUS)
    constraints: ConstraintsIn = Field(default_factory=ConstraintsIn)


# ---------------------------------------------------------------- responses


class ModelOut(BaseModel):
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
    experts: int | None = None
    active_experts: int | None = None
    active_params: float | None = None
    activation_mb_per_sample: float | None = Field(
        None, description="measured activation memory of one training sample, MB (10^6 bytes)"
    )
    activation_coeff: float | None = None
    passes_per_sample: int | None = None
    kv_elements_per_token: float | None = None
    kv_window_elements_per_token: float | None = None
    sliding_window: int | None = None
    tied_embeddings: bool | None = None
    gated_mlp: bool | None = None
    attention: str | None = None
    explicit_head_dim: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    shared_experts: int | None = None
    decoder_layers: int | None = None
    kv_bytes_per_token_16bit: float | None = Field(
        default=None, description="KV cache bytes per token of context at 2 bytes per value"
    )


class ResolvedWorkload(BaseModel):
    preset: str | None
    task: Task
    model: ModelOut
    precision: Precision
    batch_size: int
    seq_len: int | None
    output_tokens: int | None
    optimizer: Optimizer | None
    peft: Peft
    lora_rank: int | None
    lora_layers: int | None = Field(
        None,
        description="the blocks LoRA adapts, the last ones, where the runtime adapts fewer "
        "than all (mlx-lm's --num-layers); null: every block, or no adapters",
    )
    gradient_checkpointing: bool
    dataset_samples: float | None
    epochs: float | None
    dataset_basis: str | None = Field(
        None,
        description='"yours", or "assumed: …" naming the preset\'s dataset or the stated default '
        "job size (e.g. 1 M tokens of fine-tuning data) that fills time and cost to finish",
    )
    latency_target_ms: float | None = Field(
        description="the request's latency target: the slowest acceptable time for one whole "
        "batch, milliseconds (compared with latency_ms)"
    )
    allow_tf32_matmul: bool
    runtime: Runtime | EncoderServingRuntime = "pytorch"
    gpu_backend: GpuBackend | None = Field(
        None, description="the backend llama.cpp is pinned to ('vulkan': its Vulkan build)"
    )
    quantization: Quantization = "none"
    weight_bits: float | None = None
    serving: ServingResolvedOut | None = None
    beams: int = Field(1, description="beam search width of an encoder-decoder's inference")
    # how a training job holds its state, echoed only where the request set it (absent: the
    # default, fp32 master weights, gradients held until the step, one loss pass, unpaged)
    master_weights: MasterWeights | None = Field(None, exclude_if=_absent)
    optimizer_in_backward: bool | None = Field(None, exclude_if=_absent)
    paged_optimizer: bool | None = Field(None, exclude_if=_absent)
    loss_chunks: int | None = Field(None, exclude_if=_absent)


class ServingResolvedOut(BaseModel):
    concurrent_requests: float | None
    requests_per_s: float | None = Field(description="arrival rate, requests per second")
    prompt_tokens: int
    output_tokens: int
    prompt_tokens_spread: int | None = None
    output_tokens_spread: int | None = None
    ttft_ms_target: float | None = Field(
        description="the time-to-first-token target applied (yours or the default), milliseconds"
    )
    itl_ms_target: float | None = Field(
        description="the inter-token latency target applied, milliseconds"
    )
    target_percentile: str
    kv_cache_precision: str | None
    ttft_ms_target_basis: str = Field(
        "yours", description='"yours", or "default (MLPerf …)" when the request gave none'
    )
    itl_ms_target_basis: str = "yours"


class MemoryOut(BaseModel):
    # 10^9 bytes, all three: compare required_gb with available_gb (what CUDA hands a process
    # of the card, less any runtime's claim), not with gpu.memory_gb, the vendor's "GB" (2^30)
    required_gb: float = Field(description="memory the job needs per GPU, in 10^9 bytes")
    available_gb: float | None = Field(
        default=None,
        description="memory a process gets per GPU, in 10^9 bytes (the card's CUDA total where "
        "the catalog has it, less a runtime's claimed share); the fit is required_gb <= this",
    )
    headroom_gb: float | None = Field(
        default=None, description="available_gb - required_gb, in 10^9 bytes"
    )
    num_gpus: int = 1
    breakdown: dict[str, float]
    notes: list[str] = []


class RankedGpu(BaseModel):
    """The GPU of a ranked row: the catalog's GpuOut, shortened to what a row needs."""

    slug: str
    name: str
    vendor: Vendor
    architecture: str
    segment: Segment
    memory_gb: float = Field(
        description="the vendor's figure, whose GB are 2^30 bytes (a '24 GB' card holds 24 "
        "GiB): memory.available_gb gives the same card in 10^9 bytes, as the job is sized"
    )
    memory_bandwidth_gbs: float = Field(
        description="peak device-memory bandwidth in GB/s (10^9 bytes per second), per card, "
        "as GET /api/v1/gpus gives it"
    )
    tdp_w: float | None = Field(None, description="board power in watts, per card")
    compute_capability: str | None = None
    interconnect: str | None = None
    purchase_usd: float | None = Field(
        None,
        description="one card's purchase price in US dollars as the row buys it (cost.buy's "
        "unit_usd: new, else used, "
        "a launch price only within three years; null when there is no current price); a "
        "GPU block without a priced row (an excluded card) shows the catalog's street price, "
        "else its launch price",
    )
    hourly_usd: float | None = Field(
        None,
        description="the row's rental per GPU, US dollars per GPU-hour (cost.rent's instance "
        "price ÷ the GPUs it pays for; null when the row cannot be rented); without a priced "
        "row, the catalog's quoted per-GPU price. Per GPU, unlike cost.hourly_usd (every GPU "
        "the row rents)",
    )


class ThroughputOut(BaseModel):
    value: float = Field(
        description="in ``unit``: tokens/s for a language model's training (samples/s × "
        "seq_len), generated tokens/s for LLM inference, images/s for an image model (CNN, "
        "ViT, diffusion: one generated image), 30-s windows/s for Whisper, inference and "
        "training (one sample is one 30-second audio window), else samples/s"
    )
    unit: str
    per_gpu: float
    compute_precision: str
    samples_per_s: float | None = Field(
        None,
        description="the samples/s behind a tokens/s training figure (time to finish reads it)",
    )
    audio_seconds_per_s: float | None = Field(
        None,
        description="a speech model (Whisper), inference or training: seconds of audio "
        "transcribed or trained on per second, the windows/s × the window's seconds",
    )


class ChosenOfferOut(BaseModel):
    """The concrete instance a rental row rents."""

    provider: str
    instance_type: str
    gpus: int = Field(description="GPUs in the instance (paid for, whether used or not)")
    instances: int = Field(
        1,
        description="instances of this type rented side by side (a count); the row's "
        "cost.rent.usd_per_hour pays for all of them",
    )
    usd_per_hour: float = Field(
        description="listed price of one whole instance (all `gpus` GPUs), US dollars per "
        "hour: on-demand, or the spot price for a `tier: spot` offer; as GET /api/v1/offers "
        "lists it"
    )
    spot_usd_per_hour: float | None = Field(
        None, description="spot price of one whole instance, US dollars per hour, if listed"
    )
    tier: Tier
    regions: int | None = Field(None, description="how many regions offer it (a count)")
    as_of: str
    source: str
    note: str | None = Field(None, description="e.g. a node paid for whole to use 2 of its GPUs")
    launchable: bool = Field(
        False, description="a SkyPilot instance: GET /api/v1/offers/launch-spec can benchmark it"
    )
    accelerator: str | None = Field(
        None, description="SkyPilot's accelerator name for this cloud (launchable offers)"
    )


class SeenPriceOut(BaseModel):
    """A rental price seen elsewhere (a note, a blog, a hobby repository), not in a provider's
    bookable catalog: shown beside a row, never rented nor ranked (data/offers/README.md)."""

    provider: str
    usd_per_gpu_hour: float = Field(description="the quoted price, US dollars per GPU-hour")
    as_of: str
    source: str
    text: str = Field(description="seen at $x (source, date)")


class SpotTrainingOut(BaseModel):
    """What checkpoints and restarts mean for a training job rented at a spot price. No
    published interruption rate exists for the shipped spot offers, so the row's time and
    cost leave them out (``overhead_included``) and give what needs no rate
    (docs/methodology.md, "Spot rentals")."""

    checkpoint_gb: float = Field(
        description="training state one checkpoint holds: the fp32 copy of the trainable "
        "parameters and the optimizer's state, all GPUs together, in 10^9 bytes"
    )
    on_demand_usd_per_hour: float | None = Field(
        None,
        description="the same instances on demand, every instance, US dollars per hour",
    )
    break_even_overhead: float | None = Field(
        None,
        description="extra run time from checkpoints and restarts, a fraction of the job's "
        "time, at which spot costs what on-demand does",
    )
    break_even_extra_h: float | None = Field(
        None, description="that fraction of this job's time to finish, hours"
    )
    disk_mbps: float | None = Field(
        None,
        description="the instance type's documented cap on persistent (managed) disk "
        "throughput, MBps; none where no figure is sourced",
    )
    checkpoint_write_h_min: float | None = Field(
        None,
        description="one checkpoint written (or read back after an interruption) at that cap "
        "over every instance, hours: a lower bound, a disk's own cap can be lower",
    )
    disk_source: str | None = Field(None, description="where disk_mbps comes from")
    overhead_included: bool = Field(
        False, description="whether time_to_finish_h and job_usd include the overhead"
    )


class RentCostOut(BaseModel):
    basis: Literal["rent"] = "rent"
    usd_per_hour: float = Field(
        description="what the job pays per hour in US dollars, every instance together "
        "(offer.usd_per_hour × offer.instances, at the spot price where `spot`)"
    )
    spot: bool = False
    interruption: SpotTrainingOut | None = Field(
        None, description="training at a spot price: checkpoint size and break-even overhead"
    )
    job_usd: float | None = Field(
        None,
        description="renting for the time to finish the job and the instance's start-up "
        "(startup_usd), US dollars",
    )
    startup_usd: float | None = Field(
        None,
        description="within job_usd: an assumed minute of the instance's price for its "
        "start-up before the first step (boot, image pull, model load: published start-ups "
        "run from 30 s to 10 min; billed per second or per minute on AWS, Lambda, Scaleway), "
        "US dollars",
    )
    samples_per_usd: float | None = Field(
        None,
        description="the row's throughput unit per dollar rented (`throughput.unit`: tokens "
        "for LLM rows, images, samples, audio seconds), over the whole job with its start-up "
        "where the job has a length",
    )
    as_of: str
    source: str
    stale: bool = Field(
        description="the price is older than the server's offer_stale_days, as an offer's"
    )


class BuyCostOut(BaseModel):
    basis: Literal["buy"] = "buy"
    usd: float = Field(
        description="all the cards the row buys, US dollars, at the price basis below"
    )
    unit_usd: float = Field(
        description="one card, US dollars (GET /api/v1/gpus' buy_at.usd under basis auto)"
    )
    condition: Condition = Field(description="the price basis")
    energy_usd_per_hour: float | None = Field(
        None,
        description="electricity of the bought cards at board power, US dollars per hour, all "
        "of them; null without a power figure",
    )
    job_usd: float | None = Field(None, description="purchase plus energy for the job, US dollars")
    samples_per_usd: float | None = Field(
        None,
        description="the row's throughput unit (`throughput.unit`: tokens for LLM rows) per "
        "dollar, over the usage horizon (hours_per_week × years), energy included",
    )
    as_of: str
    source: str
    stale: bool = Field(
        description="the price is older than the server's offer_stale_days, as an offer's"
    )
    note: str | None = Field(None, description="the data's caveat on this price")


class VerdictOut(BaseModel):
    cheaper: PriceBasis
    break_even_hours: float | None = Field(
        description="hours of use after which buying costs less than renting; null where it "
        "never does"
    )
    buy_total_usd: float = Field(
        description="buying over `hours`: purchase less resale, plus energy, US dollars"
    )
    rent_total_usd: float = Field(description="renting for `hours`, US dollars")
    hours: float = Field(description="hours of use compared: hours_per_week × 52 × years")
    rent_gpus_paid: int | None = Field(
        None,
        description="GPUs the rent side pays for, where more than the job uses (and buys)",
    )
    gpus_used: int | None = Field(None, description="GPUs the job uses, with rent_gpus_paid")
    note: str | None = Field(
        None,
        description="the rent side in words where it pays for more GPUs than the job uses: "
        "'renting a whole 8-GPU Standard_ND40rs_v2, 1 of 8 GPUs used'",
    )


class CostOut(BaseModel):
    rent: RentCostOut | None = None
    buy: BuyCostOut | None = None
    purchase_basis: Condition | None = None
    purchase_usd: float | None = Field(
        description="buying every card the row uses, US dollars (buy.usd; gpu.purchase_usd "
        "is one card)"
    )
    purchase_as_of: str | None = None
    hourly_usd: float | None = Field(
        description="renting the row's instances, US dollars per hour, all of them "
        "(rent.usd_per_hour; gpu.hourly_usd is per GPU)"
    )
    hourly_as_of: str | None = None
    hourly_provider: str | None = None
    power_w: float | None = Field(description="board power of all the row's cards, watts")
    energy_usd_per_hour: float | None = Field(
        description="electricity of all the row's cards at board power, US dollars per hour"
    )
    rent_to_finish_usd: float | None = Field(
        description="renting until the job is done, US dollars (hourly_usd × time_to_finish_h)"
    )
    energy_to_finish_usd: float | None = Field(
        description="electricity until the job is done on bought cards, US dollars"
    )
    buy_to_finish_usd: float | None = Field(
        description="purchase_usd plus energy_to_finish_usd, US dollars"
    )
    job_cost_usd: float | None = Field(
        description="what finishing the job costs the way the request acquires (the cheaper of "
        "rent_to_finish_usd and buy_to_finish_usd under 'either'), US dollars"
    )
    job_cost_note: str | None = Field(
        None,
        description="why job_cost_usd is null where the row's purchase price and the job's "
        "length are known: no power figure for the card, so no energy for the job",
    )
    break_even_hours: float | None = Field(
        description="hours of use after which buying costs less than renting"
    )
    samples_per_usd_rent: float | None = Field(
        description="work per US dollar rented, in the row's throughput unit (tokens for LLM "
        "rows, images, samples, audio seconds): rent.samples_per_usd"
    )
    samples_per_usd_buy: float | None = Field(
        description="work per US dollar bought, in the row's throughput unit, over the usage "
        "horizon: buy.samples_per_usd"
    )


class TimeBandOut(BaseModel):
    """The likely range of a time the row shows, from the band on the rate it is the inverse
    of: a rate band ×a–×b gives the time ÷b to ÷a (app/domain/bands.py time_band)."""

    low: float = Field(description="ms: the estimate ÷ the rate band's high factor")
    high: float = Field(description="ms: the estimate ÷ the rate band's low factor")
    factor_low: float = Field(description="low ÷ the estimate (1 ÷ the rate's high factor)")
    factor_high: float = Field(description="high ÷ the estimate (1 ÷ the rate's low factor)")
    basis: str = Field(description="what set the rate band, widenings included")


class UncertaintyOut(BaseModel):
    """The likely range of the row's throughput (low–high in its unit; factors on the
    estimate), and of its time to first token where it has one."""

    low: float
    high: float
    factor_low: float
    factor_high: float
    basis: str
    time_to_first_token_ms: TimeBandOut | None = Field(
        default=None,
        description="LLM inference and serving rows: the band on time_to_first_token_ms, from "
        "the calibrated prefill band (the prompt rate's) inverted",
    )


class TimingOut(BaseModel):
    step_time_s: float = Field(
        description="seconds of one step, which compute_s + memory_s + overhead_s add up to "
        "(host_transfer_s too where the harness copies before its kernels; otherwise the copy "
        "overlaps the step). Training and "
        "fine-tuning: one micro-batch, a forward and backward pass of `micro_batch` samples "
        "over the row's GPUs with its share of the gradient sync and 1/accumulation_steps of "
        "the optimizer update (which runs once per optimizer step); one optimizer step takes "
        "step_time_s × accumulation_steps. Inference: one batch's whole request (prompt and "
        "every output token). Serving: one decode step at the asked load (the ITL)."
    )
    compute_s: float = Field(description="seconds of the GPU's math at its roofline")
    memory_s: float = Field(description="seconds of the GPU's memory traffic at its roofline")
    overhead_s: float = Field(
        description="seconds of fixed costs beyond the GPU's own work: kernel launches, and "
        "host time only where the host outlasts that work (a host-bound step counts its dispatch's "
        "excess over the GPU's work here; `bottleneck` then names host overhead)"
    )
    host_transfer_s: float = Field(
        description="seconds copying the step's input from host to device"
    )
    interconnect_s: float = Field(
        description="seconds of GPU-to-GPU communication not hidden behind compute"
    )
    scaling_efficiency: float = Field(
        description="throughput on the row's GPUs ÷ (GPUs × one GPU's), a fraction, 1 for one GPU"
    )


class AlternativeOut(BaseModel):
    """Another configuration of the same card, as evaluated (not re-ranked), with the
    instance it would rent."""

    num_gpus: int
    replicas: int | None = Field(None, description="serving: replicas of gpus_per_replica GPUs")
    gpus_per_replica: int | None = None
    precision: str | None = Field(None, description="serving: weight precision")
    kv_cache_precision: str | None = Field(None, description="serving: KV cache precision")
    itl_ms: float | None = Field(
        None, description="serving: inter-token latency at the load, milliseconds"
    )
    ttft_ms: float | None = Field(
        None, description="serving: time to first token at the load, milliseconds"
    )
    memory_savers: list[str] = []
    micro_batch: int | None = None
    accumulation_steps: int = 1
    required_gb: float = Field(description="memory per GPU, in 10^9 bytes")
    throughput: float = Field(description="in `unit`, as the row's throughput.value")
    unit: str
    scaling_efficiency: float = Field(description="a fraction, as timing.scaling_efficiency")
    time_to_finish_h: float | None = Field(None, description="hours to finish the job")
    purchase_usd: float | None = Field(
        None, description="buying every card of this configuration, US dollars"
    )
    hourly_usd: float | None = Field(
        None,
        description="renting ``offer`` (every instance), US dollars per hour, when one is chosen",
    )
    job_cost_usd: float | None = Field(
        None, description="finishing the job as the request acquires, US dollars"
    )
    offer: ChosenOfferOut | None = Field(None, description="the instance this configuration rents")
    price_known: bool = True


class Recommendation(BaseModel):
    rank: int
    gpu: RankedGpu
    num_gpus: int
    memory_savers: list[str] = Field(
        default_factory=list,
        description="memory savers the engine added because they let fewer cards hold the job",
    )
    micro_batch: int | None = Field(
        default=None,
        description="the micro-batch of one accumulation step over all the row's GPUs, when "
        "the batch runs as accumulation steps",
    )
    micro_batch_per_gpu: int | None = Field(
        default=None,
        description="what each GPU runs of that micro-batch (Hugging Face's "
        "per_device_train_batch_size): ⌈micro_batch ÷ num_gpus⌉",
    )
    accumulation_steps: int = 1
    fits: bool
    precision: Precision
    runtime: str = Field(default="pytorch", description="the runtime this estimate assumes")
    backend: str | None = Field(default=None, description="the backend it runs on")
    framework_status: str
    memory: MemoryOut
    throughput: ThroughputOut
    latency_ms: float | None = Field(
        None,
        description="inference: milliseconds for one batch's whole request, prompt and every "
        "output token (timing.step_time_s × 1000)",
    )
    time_to_first_token_ms: float | None = Field(
        None, description="LLM inference: milliseconds until the first output token (prefill)"
    )
    ms_per_output_token: float | None = Field(
        None, description="LLM inference: milliseconds per output token after the first"
    )
    meets_latency_target: bool | None = None
    time_to_finish_h: float | None = Field(
        None, description="hours to finish the whole job (dataset × epochs); null without one"
    )
    slow_end_hours: float | None = Field(
        None,
        description="with constraints.max_hours: hours to finish at the slow end of the row's "
        "range (time_to_finish_h ÷ uncertainty.factor_low); the bands are calibrated to hold "
        "about 80 % of published measurements, so about one run in ten takes longer",
    )
    may_miss_deadline: bool | None = Field(
        None,
        description="with constraints.max_hours: true where the row finishes within the "
        "deadline on its estimate (which keeps and ranks it) but not at the slow end of its "
        "range (slow_end_hours); false where it meets it even there; null without a deadline",
    )
    bottleneck: Literal[
        "compute",
        "memory bandwidth",
        "host transfer",
        "host overhead",
        "kernel launches",
        "interconnect",
    ]
    generation_bottleneck: (
        Literal["compute", "memory bandwidth", "host overhead", "kernel launches", "interconnect"]
        | None
    ) = Field(
        None,
        description="LLM inference: what limits one decode step (`bottleneck` is the whole "
        "request's, prompt included)",
    )
    timing: TimingOut
    mfu: float | None = Field(
        None,
        description="training: model FLOPs utilisation — the model's FLOPs per sample (per "
        "token 6 × the parameters a token multiplies by — an input embedding only where it is "
        "also the tied LM head the step computes — + 12·layers·hidden·seq of attention; under "
        "LoRA/QLoRA 4 × the frozen parameters + 6 × the adapters; a CNN's or diffusion model's "
        "published forward FLOPs × 3, × 2 under LoRA) × samples/s ÷ (GPUs × the dense "
        "datasheet peak at throughput.compute_precision, boost clock, no sparsity; TF32 for a "
        "mixed fp32 step); "
        "recomputation not counted",
    )
    cost: CostOut
    score: float
    uncertainty: UncertaintyOut
    provenance: dict[str, str]
    explanation: list[str]
    tips: list[str]
    warnings: list[str] = []
    speedup_vs_baseline: float | None = None
    alternatives: list[AlternativeOut] = Field(
        default_factory=list,
        description="this card's other configurations (GPU counts, savers), less any no faster "
        "(within 5 %) than one listed that costs less unless it has the memory room or meets "
        "the latency target that one lacks (serving rows: every other GPU count, each a "
        "different capacity)",
    )
    alternatives_left_out: int = Field(
        0,
        description="how many of this card's other configurations were left out of "
        "``alternatives`` as no faster than a cheaper one listed",
    )
    serving: ServingOut | None = None
    price_known: bool = True
    offer: ChosenOfferOut | None = None
    verdict: VerdictOut | None = None
    usd_per_million_output_tokens_blended: float | None = Field(
        None,
        description="LLM inference, renting the chosen offer, US dollars per million output "
        "tokens: the whole hourly cost ÷ output tokens per hour (what API price lists compare "
        "with); on the rented basis whatever the row is ranked on (serving: "
        "serving.usd_per_million_* are on serving.price_basis, the ranked basis, under "
        "acquisition 'either' owning where that is cheaper)",
    )
    usd_per_million_output_tokens: float | None = Field(
        None,
        description="LLM inference, renting the chosen offer, US dollars per million output "
        "tokens: for serving, the share of the hour spent decoding ÷ output tokens (the split "
        "with usd_per_million_input_tokens); for one-job inference the same as the blended "
        "figure",
    )
    usd_per_million_input_tokens: float | None = Field(
        None,
        description="LLM inference prefill, renting the chosen offer, US dollars per million "
        "input tokens",
    )
    seen_prices: list[SeenPriceOut] = Field(
        default_factory=list,
        description="rental prices of this GPU seen elsewhere (not bookable offers): shown, "
        "never rented nor ranked",
    )


class CurvePointOut(BaseModel):
    concurrency: int = Field(description="running requests per replica")
    itl_ms: float = Field(description="inter-token latency, milliseconds")
    ttft_ms: float = Field(description="time to first token, milliseconds")
    output_tokens_per_s: float = Field(description="output tokens per second, all replicas")


class EncoderCurvePointOut(BaseModel):
    clients: int = Field(description="concurrent clients, all replicas")
    latency_ms: float = Field(description="mean latency, request in to embedding out, ms")
    latency_p95_ms: float = Field(description="p95 latency, milliseconds")
    embeddings_per_s: float = Field(description="embeddings (sequences) per second, all replicas")


class DeployOut(BaseModel):
    """How to start a serving plan: the runtime's command and, for a SkyPilot instance, a
    service file."""

    command: str = Field(description="the runtime's serve command with this plan's flags")
    skypilot_service: str | None = Field(
        None, description="a SkyPilot service YAML (sky serve up) renting the row's instance"
    )
    notes: list[str] = []


class ServingOut(BaseModel):
    """One serving configuration: its shape, latency at the asked load, capacity and cost."""

    replicas: int
    gpus_per_replica: int
    tensor_parallel: int = Field(description="GPUs that split every layer (1 under a layer split)")
    multi_gpu: MultiGpu = Field(
        "tensor",
        description="how a replica uses its GPUs: tensor parallel, or whole layers per GPU that "
        "a token passes through in turn (llama.cpp's default split, Accelerate's device_map)",
    )
    runtime: str
    runtime_version: str
    weight_precision: str
    weight_format: str
    kv_cache_precision: str
    max_concurrency: int = Field(description="requests all replicas hold at once (KV cache)")
    ttft_ms: float | None = Field(description="time to first token at the asked load, milliseconds")
    ttft_p95_ms: float | None = Field(
        description="time to first token at the asked load, milliseconds, 95th percentile"
    )
    itl_ms: float | None = Field(description="inter-token latency at the asked load, milliseconds")
    itl_p95_ms: float | None = Field(
        description="inter-token latency at the asked load, milliseconds, 95th percentile"
    )
    output_tokens_per_s: float | None = Field(
        description="output tokens per second at the asked load, all replicas"
    )
    input_tokens_per_s: float | None = Field(
        description="prompt tokens per second at the asked load, all replicas"
    )
    requests_per_s: float | None = Field(
        description="requests completed per second at the asked load, all replicas"
    )
    max_output_tokens_per_s: float = Field(
        description="output tokens per second at saturation, all replicas"
    )
    usd_per_hour: float | None = Field(
        description="what the configuration costs per hour on price_basis, US dollars: renting its "
        "instances "
        "(the row's offer), or owning its cards (purchase less resale over the usage hours, plus "
        "energy); under acquisition 'either' the cheaper of the two"
    )
    price_basis: PriceBasis | None = Field(
        None,
        description="the basis of usd_per_hour and the $ per million tokens here, the one the "
        "row is ranked on (the row's own usd_per_million_* are always the rented basis)",
    )
    usd_per_million_output_tokens: float | None = Field(
        description="US dollars per million output tokens: the share of the hour spent decoding "
        "÷ output tokens (GPU time split "
        "between prompts and outputs by their step time)"
    )
    usd_per_million_input_tokens: float | None = Field(
        description="US dollars per million input tokens: the share of the hour spent on prompts "
        "÷ input tokens"
    )
    usd_per_million_output_tokens_blended: float | None = Field(
        None,
        description="US dollars per million output tokens: the whole hourly cost ÷ output tokens "
        "per hour, the figure API price "
        "lists compare with (prompts are paid for inside it)",
    )
    meets_slo: bool
    misses: list[str] = []
    kv_cache_gb_per_request: float = Field(
        description="KV cache one request holds at its prompt and output length, in 10^9 bytes"
    )
    kv_cache_gb_held_per_request: float | None = Field(
        default=None,
        description="KV cache a running request is counted at by the runtime's admission rule, "
        "in 10^9 bytes: its whole length where the runtime reserves it up front (TensorRT-LLM), "
        "its prompt and the runtime's share of its output on average where it allocates on demand "
        "(vLLM 0.5, SGLang 0.549); "
        "max_concurrency and the memory breakdown count this",
    )
    curve: list[CurvePointOut] = []
    deploy: DeployOut | None = None
    # an encoder's serving (an embedding model, a reranker: one forward pass a request): its
    # latency is ttft_ms (the first answer is the whole answer), itl_ms is None, and these
    # name its figures in its own units
    kind: ServingKind = Field(
        "decoder",
        description="decoder: an LLM generating tokens; encoder: an embedding model or reranker "
        "behind a dynamic batcher, whose ttft_ms is the request's whole latency (no tokens follow)",
    )
    embeddings_per_s: float | None = Field(
        None,
        description="encoder: embeddings (sequences) per second at the asked load, all replicas",
    )
    max_embeddings_per_s: float | None = Field(
        None, description="encoder: embeddings (sequences) per second at saturation, all replicas"
    )
    usd_per_million_embeddings: float | None = Field(
        None,
        description="encoder: US dollars per million embeddings (sequences) at the asked load, on "
        "price_basis",
    )
    batch_sequences: int | None = Field(
        None,
        description="encoder: the most sequences one batch carries (the server's batch limits)",
    )
    batch_ms: float | None = Field(
        None, description="encoder: milliseconds one full batch's forward pass takes"
    )
    encoder_curve: list[EncoderCurvePointOut] = Field(
        [],
        description="encoder: latency against embeddings per second as concurrent clients grow "
        "past saturation (the first rows shown); absent where empty",
        # left out where empty: a decoder's row reads as it did before encoders had curves
        exclude_if=lambda v: not v,
    )


class ServingSummaryOut(BaseModel):
    """Whether any configuration carries the load within the targets, and if not, why."""

    met: bool
    message: str
    load: str
    relax: list[str] = []
    closest: list[Recommendation] = []
    # what an empty answer's closest shapes need to carry the load, as the what-if re-ranks it
    # (app/recommend/serving.py ScaleOut); not part of the wire format
    _scale: Any = PrivateAttr(default=None)


ExclusionCode = Literal[
    "does_not_fit",
    "precision_unsupported",
    "framework_unsupported",
    "over_budget",
    "filtered_out",
    "no_price",
    "no_figures",
    "misses_targets",
    "runtime_unsupported",
    "misses_deadline",
    "instance_too_small",
]


class Excluded(BaseModel):
    slug: str
    name: str
    code: ExclusionCode
    reason: str
    detail: str | None = Field(
        None,
        description="this card's own figures behind a reason several cards share (a serving "
        "card's closest shape, how far it gets and how many replicas would carry the load)",
    )


class BaselineOut(BaseModel):
    slug: str
    name: str
    throughput: float | None
    unit: str | None
    calibrated: bool
    basis: Literal["calibrated", "modelled"] = Field(
        default="modelled",
        description="calibrated: modelled with the efficiencies your device report measured; "
        "modelled: from datasheet figures and priors (no figure here is a direct measurement "
        "of this job)",
    )
    source: str | None = None
    note: str | None = None
    tips: list[str] = Field(
        default_factory=list, description="What the device report measured, in plain words"
    )


class CountsOut(BaseModel):
    ranked: int
    excluded: int
    unpriced: int = Field(description="ranked GPUs with no known price (price_known: false)")


class AnswerSummaryOut(BaseModel):
    """The answer in one sentence, and the assumptions behind it in one line."""

    sentence: str = Field(description="the pick, its price, why, the runner-up, the main caveat")
    assumptions: str


class RecommendationResponse(BaseModel):
    workload: ResolvedWorkload
    memory: MemoryOut
    objective: Objective
    acquisition: Acquisition
    framework: Framework
    count: int
    counts: CountsOut | None = None
    recommendations: list[Recommendation]
    excluded: list[Excluded]
    baseline: BaselineOut | None = None
    warnings: list[str] = []
    advice: list[str] = Field(
        default_factory=list,
        description="what an expert would point out first: memory savers that let fewer or "
        "cheaper cards do the job, and what they cost",
    )
    what_if: list[WhatIfOut] | None = None
    serving: ServingSummaryOut | None = None
    summary: AnswerSummaryOut | None = Field(
        None, description="the verdict first: one sentence a reader can act on"
    )
    empty: EmptyAnswerOut | None = Field(
        None,
        description="when no GPU can run the job: why (exclusions by reason), what to relax and "
        "the nearest configurations that would run (each a re-rank with one thing changed)",
    )
    deadline: DeadlineOut | None = Field(
        None,
        description="constraints.max_hours: whether any configuration meets it, and if "
        "none does, what would",
    )


class NearestOut(BaseModel):
    """A configuration that would run the job were one thing relaxed."""

    change: str
    top_slug: str | None
    top_name: str | None
    num_gpus: int | None
    can_run: int = Field(description="catalog GPUs that run the changed job")
    purchase_usd: float | None = Field(
        None, description="the top pick's purchase price, all GPUs, US dollars"
    )
    hourly_usd: float | None = Field(
        None, description="the top pick's price per hour, all GPUs, US dollars"
    )
    rent_gpus_paid: int | None = Field(
        None,
        description="GPUs hourly_usd pays for, where the top pick rents a whole instance with "
        "more GPUs than num_gpus",
    )
    time_to_finish_h: float | None = Field(
        None, description="the top pick's hours to finish the job, where it has a length"
    )


class EmptyAnswerOut(BaseModel):
    """An answer without a row, explained."""

    message: str
    reasons: dict[str, int] = Field(description="excluded GPUs by exclusion code")
    relax: list[str] = Field(description="changes that let some GPU run the job, most first")
    nearest: list[NearestOut] = []


class DeadlineOut(BaseModel):
    """Whether anything finishes the job within constraints.max_hours, and what would."""

    max_hours: float = Field(description="the deadline asked, hours (constraints.max_hours)")
    met: bool
    message: str
    left_out: int = Field(description="cards left out only because they take too long")
    may_miss: int = Field(
        0,
        description="ranked configurations (of counts.ranked, not only the rows shown: the "
        "same whatever `limit`) within the deadline on their estimate that miss it at the slow "
        "end of their range (time to finish ÷ uncertainty.factor_low); each such row shown says "
        "so in its warnings",
    )
    fastest_hours: float | None = Field(
        None,
        description="hours the fastest configuration within the other limits takes, deadline "
        "lifted",
    )
    fastest: str | None = Field(None, description="that configuration, in words")
    rule: str = Field(
        "",
        description="how the deadline keeps and orders rows, in words: kept where the "
        "estimate finishes in time, ordered by the objective, each row's slow end said "
        "(may_miss_deadline), and the first row shown that meets it even at its slow end",
    )
    safe_rank: int | None = Field(
        None,
        description="rank of the first row shown that finishes within the deadline even at "
        "the slow end of its range; null where none does or nothing meets the deadline",
    )
    would: list[str] = Field(
        default_factory=list,
        description="changes that would meet the deadline: more GPUs, a faster card, a shorter job",
    )


class WhatIfOut(BaseModel):
    """The same request with one thing changed, and what it does to the answer."""

    change: str
    top_slug: str | None
    top_name: str | None
    num_gpus: int | None
    throughput: float | None
    unit: str | None
    required_gb: float = Field(
        description="memory needed on one GPU, before sharding, in 10^9 bytes"
    )
    can_run: int = Field(description="how many catalog GPUs can run the changed job")
    same_top: bool
    purchase_usd: float | None = Field(
        None, description="the top pick's purchase price, all GPUs, US dollars"
    )
    hourly_usd: float | None = Field(
        None, description="the top pick's price per hour, all GPUs, US dollars"
    )
    rent_gpus_paid: int | None = Field(
        None,
        description="GPUs hourly_usd pays for, where the top pick rents a whole instance with "
        "more GPUs than num_gpus",
    )
    time_to_finish_h: float | None = Field(
        None, description="the top pick's hours to finish the job, where it has a length"
    )
    meets_latency_target: bool | None = Field(
        None,
        description="whether the changed answer's top pick meets workload.latency_target_ms "
        "(null: no target)",
    )
    quality: str | None = Field(
        None,
        description="the known quality cost of the weight or KV format the change switches "
        "to, with its source, as the changed answer's top row words it (null: the change "
        "switches to no such format)",
    )


class EstimateResponse(BaseModel):
    workload: ResolvedWorkload
    gpu: RankedGpu
    result: Recommendation | None
    excluded: Excluded | None = None
    warnings: list[str] = []
    advice: list[str] = Field(
        default_factory=list,
        description="as a recommendation's advice, for this card: the memory savers behind "
        "the estimate (those the engine or a fine-tuning recipe turned on), what they buy and "
        "what they cost",
    )


class WorkloadPresetOut(BaseModel):
    id: str
    name: str
    description: str
    model: ModelOut
    defaults: dict[str, Any]
    sources: list[str]
    references: dict[str, dict[str, Any]] = {}
    notes: str | None = None


class WorkloadList(BaseModel):
    workloads: list[WorkloadPresetOut]
    count: int
