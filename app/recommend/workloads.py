"""Workload presets and the request → workload resolution (preset defaults applied,
contradictions rejected naming the field)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple, get_args

from app.domain import serving as serving_model
from app.domain.activations import gated_mlp
from app.domain.efficiency import EfficiencyTable
from app.domain.formats import runtime_bits
from app.domain.hf_config import HfConfigError, parse_hf_config
from app.domain.megatron import MegatronLayout, layout_error
from app.domain.operators import attention_linears, rescaled_table
from app.domain.seq2seq import SPEECH_WINDOW_S
from app.domain.serving_encoder import DEFAULT_RUNTIME as DEFAULT_ENCODER_RUNTIME
from app.domain.workload import (
    DEFAULT_LORA_RANK,
    ModelSpec,
    ServingSpec,
    WorkloadSpec,
    adapted_layers,
    adapted_share,
    job_lora_params,
    lora_params,
    pipeline_frozen_params,
)
from app.errors import InvalidInput, NotFound
from app.recommend import quality
from app.recommend import schemas as s
from app.recommend.presets import (
    DATA_DIR,
    LongContext,
    Preset,
    default_batch,
    default_dataset,
    load_presets,
)
from app.shipped.rules import load_efficiency
from app.vocab import (
    ADAPTER_ONLY_RUNTIMES,
    CONV_FAMILIES,
    ENCODER_SERVING_PRECISIONS,
    ENCODER_SERVING_RUNTIMES,
    FOUR_BIT_PRECISIONS,
    GENERATING_FAMILIES,
    GGUF_FORMATS,
    GRAPH_FRAMEWORK_RUNTIMES,
    INFERENCE_TASKS,
    LANGUAGE_MODEL_FAMILIES,
    LLAMACPP_FORMATS,
    LLAMACPP_VULKAN_RUNTIME,
    LLM_RUNTIMES,
    MLX_FORMATS,
    MODELLED_PRECISIONS,
    MODELLED_TASKS,
    QLORA_BASES,
    QUANTIZATION_PRECISION,
    RUNTIME_FRAMEWORK,
    RUNTIMES,
    SPEECH_REFUSED_RUNTIMES,
    TRAINING_ONLY_RUNTIMES,
    TRAINING_RUNTIMES,
    TRAINING_TASKS,
    TRANSFORMER_ONLY_RUNTIMES,
    TRANSFORMER_RUNTIME_FAMILIES,
    UNQUANTISED_PRECISIONS,
    framework_name,
)

# ---------------------------------------------------------------- presets


def _model_out(m: ModelSpec) -> s.ModelOut:
    # field by field from the model spec: ModelOut mirrors ModelSpec (tests/test_field_lists.py)
    # plus the KV cache per token it implies
    kv = (m.kv_values(1.0) or 0.0) * 2.0 if m.family == "decoder" else 0.0
    spec = {name: getattr(m, name) for name in s.ModelOut.model_fields if hasattr(m, name)}
    return s.ModelOut(**spec, kv_bytes_per_token_16bit=kv or None)


def _preset_out(p: Preset) -> s.WorkloadPresetOut:
    return s.WorkloadPresetOut(
        id=p.id,
        name=p.name,
        description=p.description,
        model=_model_out(p.model),
        defaults=dict(p.defaults),
        sources=list(p.sources),
        references=dict(p.source_refs),
        notes=p.notes,
    )


def list_workloads(data_dir: Path = DATA_DIR) -> s.WorkloadList:
    items = [_preset_out(p) for p in load_presets(data_dir).values()]
    return s.WorkloadList(workloads=items, count=len(items))


def get_workload(workload_id: str, data_dir: Path = DATA_DIR) -> s.WorkloadPresetOut:
    # in any case, as workload.preset reads it, and a miss with the ids nearest it
    presets = load_presets(data_dir)
    preset = presets.get(workload_id.strip().lower())
    if preset is None:
        hint = s.did_you_mean(workload_id, presets)
        raise NotFound(f"no workload preset '{workload_id}'{hint}", field="workload_id")
    return _preset_out(preset)


# ---------------------------------------------------------------- request → workload


# The fields a preset's shipped operator table (data/operators/) was generated for.
_TABLE_SHAPE = ("family", "input_size", "layers", "hidden_size")


def _merge_model(w: s.WorkloadIn, preset: Preset | None) -> ModelSpec:
    if preset is not None and w.model is None and preset.model.family and preset.model.params:
        # nothing of the model given: the preset's own (what its fields rebuild, equal to it;
        # tests/recommend/test_r28sp_speed.py holds every preset to that), not a copy per request
        return preset.model
    base: dict[str, Any] = {}
    if preset is not None:
        m = preset.model
        base = {f.name: getattr(m, f.name) for f in fields(m)}
    if w.model is not None and w.model.hf_config is not None:
        base.update(model_fields_from_hf_config(w.model.hf_config))
    given = w.model.model_dump(exclude={"hf_config"}) if w.model is not None else {}
    base.update({k: v for k, v in given.items() if v is not None})
    factor = _resize(base, preset)
    if factor is not None:
        assert preset is not None
        base.update(_resized(preset.model, factor, given))
    elif preset is not None and any(base.get(k) != getattr(preset.model, k) for k in _TABLE_SHAPE):
        # the preset's operator tables are for its own architecture
        base["operators"] = base["decoder_operators"] = None
    if preset is not None and given.get("gflops_per_sample") is None:
        base.update(_restepped(preset.model, base))
    if not base.get("family"):
        raise InvalidInput("give a preset or model.family", field="workload.model.family")
    if not base.get("params"):
        raise InvalidInput("give a preset or model.params", field="workload.model.params")
    return ModelSpec(**base)


def _resize(base: dict[str, Any], preset: Preset | None) -> float | None:
    """The factor a CNN or diffusion preset's image side was changed by, where nothing else of
    its architecture was (its traced tables then hold at the new size: rescaled_table); None
    otherwise."""
    if preset is None or preset.model.family not in ("cnn", "diffusion"):
        return None
    own, asked = preset.model.input_size, base.get("input_size")
    if preset.model.operators is None or not own or not asked or asked == own:
        return None
    if any(base.get(k) != getattr(preset.model, k) for k in _TABLE_SHAPE if k != "input_size"):
        return None
    return float(asked) / float(own)


def _restepped(m: ModelSpec, base: dict[str, Any]) -> dict[str, Any]:
    """A diffusion preset asked at another number of UNet passes (denoising steps × its
    guidance): its per-image FLOPs are the passes' plus one VAE decode, so they follow the
    passes. Kept whole, the extra passes had come out of the VAE's share (40 steps priced
    slower than 50)."""
    table = base.get("operators")
    old, new = m.passes_per_sample, base.get("passes_per_sample")
    if m.family != "diffusion" or table is None or not old or not new or new == old:
        return {}
    unet = table.gflops_forward or table.gflops
    return {"gflops_per_sample": float(base["gflops_per_sample"]) + (new - old) * unet}


def _resized(m: ModelSpec, factor: float, given: dict[str, Any]) -> dict[str, Any]:
    """A preset's tables at ``factor`` × its image side, and the per-sample FLOPs and
    activations the request did not give, grown with them: a diffusion sample's FLOPs are its
    UNet passes plus one VAE decode, each at its own table's growth (self-attention grows
    faster than the pixels); activations with the pixels."""
    assert m.operators is not None
    unet = rescaled_table(m.operators, factor)
    out: dict[str, Any] = {"operators": unet}
    dec = m.decoder_operators
    if dec is not None:
        out["decoder_operators"] = rescaled_table(dec, factor)
    if given.get("gflops_per_sample") is None and m.gflops_per_sample is not None:
        if m.family == "diffusion":
            passes = float(max(1, m.passes_per_sample or 1))
            was, now = m.operators.gflops_forward or 0.0, unet.gflops_forward or 0.0
            rest = m.gflops_per_sample - passes * was  # the VAE decode
            grew = out["decoder_operators"].gflops / dec.gflops if dec is not None else 1.0
            out["gflops_per_sample"] = passes * now + rest * grew
        else:
            out["gflops_per_sample"] = m.gflops_per_sample * factor * factor
    if given.get("activation_mb_per_sample") is None and m.activation_mb_per_sample is not None:
        out["activation_mb_per_sample"] = m.activation_mb_per_sample * factor * factor
    return out


def model_fields_from_hf_config(raw: dict[str, Any]) -> dict[str, Any]:
    """ModelSpec fields derived from a config.json; a bad one is a 422 naming its key."""
    try:
        hf = parse_hf_config(raw)
    except HfConfigError as exc:
        raise InvalidInput(
            f"config.json: {exc.message}", field=f"workload.model.hf_config.{exc.field}"
        ) from exc
    return {
        "family": hf.family,
        "params": hf.params,
        "active_params": hf.active_params,
        "layers": hf.layers,
        "hidden_size": hf.hidden_size,
        "num_heads": hf.num_heads,
        "num_kv_heads": hf.num_kv_heads,
        # latent attention's heads are its five shapes (_latent_fields), not one head_dim
        "explicit_head_dim": None if hf.attention == "mla" else hf.head_dim,
        "intermediate_size": hf.intermediate_size,
        "vocab_size": hf.vocab_size,
        "max_context": hf.max_context,
        "experts": hf.experts,
        "active_experts": hf.active_experts,
        "kv_elements_per_token": hf.kv_elements_per_token,
        "kv_window_elements_per_token": hf.kv_window_elements_per_token,
        "sliding_window": hf.sliding_window,
        "tied_embeddings": hf.tied_embeddings,
        "gated_mlp": hf.gated_mlp,
        "attention": "mla" if hf.attention == "mla" else None,
        **_latent_fields(hf.latent),
        "shared_experts": (hf.shared_experts or 0) if hf.experts else None,
        "decoder_layers": hf.decoder_layers,
        "input_size": hf.input_size,
    }


_LATENT_FIELDS = (
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
)


def _latent_fields(latent: tuple[int, ...] | None) -> dict[str, int | None]:
    """MLA's ranks and head widths as ModelSpec fields (a q_lora_rank of 0: no query
    compression); every one None for other attention, so a preset's do not outlive a pasted
    config.json of another architecture."""
    if latent is None:
        return dict.fromkeys(_LATENT_FIELDS)
    return {k: (v or None) for k, v in zip(_LATENT_FIELDS, latent, strict=True)}


def _check_model(m: ModelSpec, preset: str | None = None) -> None:
    """``preset``: the name of the preset the model comes from, if any (what a missing figure
    is blamed on)."""
    if m.active_params is not None and m.active_params > m.params:
        raise InvalidInput(
            "active_params cannot exceed params", field="workload.model.active_params"
        )
    if m.num_heads and m.num_kv_heads and m.num_kv_heads > m.num_heads:
        raise InvalidInput(
            "num_kv_heads cannot exceed num_heads", field="workload.model.num_kv_heads"
        )
    if m.hidden_size and m.num_heads and m.hidden_size < m.num_heads:
        raise InvalidInput("hidden_size must be ≥ num_heads", field="workload.model.hidden_size")
    _check_heads(m)
    if m.is_transformer and not m.has_shape:
        raise InvalidInput(
            f"{m.family} models need layers and hidden_size", field="workload.model.layers"
        )
    if m.family == "vit" and not m.has_shape and m.gflops_per_sample is None:
        raise InvalidInput(
            "vit models need layers and hidden_size, or gflops_per_sample",
            field="workload.model.gflops_per_sample",
        )
    if m.family in ("cnn", "diffusion", "mlp") and m.gflops_per_sample is None:
        need = f"{m.family} models need gflops_per_sample (forward GFLOPs per sample, 2 × MACs)"
        raise InvalidInput(
            f"{need}; the {preset} preset has no sourced figure: give "
            "workload.model.gflops_per_sample"
            if preset is not None
            else f"{need}: give workload.model.gflops_per_sample",
            field="workload.model.gflops_per_sample",
        )
    # 2 bytes per parameter must not exceed what 64 of the largest GPUs could ever hold
    if m.params * 0.5 > 64 * 1024e9:
        raise InvalidInput("params is beyond any GPU cluster size", field="workload.model.params")


def _check_heads(m: ModelSpec) -> None:
    """Heads that split as attention splits them. A head is hidden ÷ heads wide unless
    config.json names its own head_dim (Transformers' Llama: ``head_dim = getattr(config,
    "head_dim", hidden_size // num_attention_heads)``), and grouped-query attention shares
    each KV head among heads ÷ kv_heads query heads (``repeat_kv`` takes an integer): 33 heads
    over 4,096 had been priced at 124.1-wide heads, without a word."""
    heads, kv = m.num_heads, m.num_kv_heads
    if heads and m.hidden_size and not m.explicit_head_dim and m.hidden_size % heads:
        raise InvalidInput(
            f"hidden_size {m.hidden_size:,} is not a multiple of num_heads {heads:,} (heads "
            f"{m.hidden_size / heads:.1f} wide): give model.explicit_head_dim, config.json's "
            "head_dim, where the model sets its own",
            field="workload.model.num_heads",
        )
    if heads and kv and heads % kv:
        raise InvalidInput(
            f"num_heads {heads:,} is not a multiple of num_kv_heads {kv:,}: grouped-query "
            "attention shares each KV head among a whole number of query heads",
            field="workload.model.num_kv_heads",
        )


def recipe_checkpointing(task: str, peft: str, family: str) -> bool:
    """Fine-tuning recipes turn activation checkpointing on: the QLoRA paper's scripts, PEFT's
    `prepare_model_for_kbit_training` (use_gradient_checkpointing=True by default), TRL's
    SFTConfig examples and Axolotl/Unsloth configs for LLMs. Encoder fine-tunes (BERT on SQuAD)
    are small enough that their recipes leave it off. The form's blank "Activation
    checkpointing" says the same (app/web, and static/js/app.js's copy of this rule). Diffusion
    fine-tunes leave it off, as diffusers' train_text_to_image_lora_sdxl.py and
    train_dreambooth_lora_sdxl.py do unless --gradient_checkpointing is given; the engine's
    saver turns it on, listed and said, where a card needs it."""
    return (
        task == "fine-tuning" and family != "diffusion" and (peft != "none" or family == "decoder")
    )


def blank_peft(task: str, preset_peft: str | None) -> str:
    """The adapters a request that names none gets (``_peft``, for a task that trains)."""
    return "none" if task == "training" else str(preset_peft or "none")


def _recipe_checkpointing(task: str, peft: str, model: ModelSpec) -> bool:
    return recipe_checkpointing(task, peft, model.family)


def _preset(w: s.WorkloadIn, data_dir: Path) -> Preset | None:
    if w.preset is None:
        return None
    preset = load_presets(data_dir).get(w.preset)
    if preset is None:
        hint = s.did_you_mean(w.preset, load_presets(data_dir))
        raise InvalidInput(f"unknown workload preset '{w.preset}'{hint}", field="workload.preset")
    return preset


def _task(w: s.WorkloadIn, d: dict[str, Any], warnings: list[str]) -> str:
    task = w.task or d.get("task")
    if w.task is None and w.serving is not None and task != "serving":
        # a serving block is a serving question: with a chat preset's task (inference) it had
        # been ignored, and a new user's 100-user load got a one-batch inference answer
        warnings.append("task not given: a serving block asks for task 'serving'")
        task = "serving"
    if task is None:
        raise InvalidInput("task is required without a preset", field="workload.task")
    if task not in MODELLED_TASKS:
        # in the vocabulary, not yet in the engine: say so rather than estimate it wrongly
        raise InvalidInput(f"task '{task}' is not modelled yet", field="workload.task")
    return str(task)


def _check_inference_fields(w: s.WorkloadIn) -> None:
    """Training-only fields on an inference job are contradictions, not defaults."""
    if w.optimizer is not None:
        raise InvalidInput("an optimizer makes no sense for inference", field="workload.optimizer")
    if w.peft not in (None, "none"):
        raise InvalidInput("LoRA/QLoRA are fine-tuning methods", field="workload.peft")
    if w.gradient_checkpointing:
        raise InvalidInput(
            "gradient checkpointing only applies to training",
            field="workload.gradient_checkpointing",
        )
    if w.cache_encodings:
        raise InvalidInput(
            "caching text encodings and latents only applies to training",
            field="workload.cache_encodings",
        )
    _refuse_state_fields(w, "says how a training job holds its state; an inference job has none")


# The training-state fields and the value each takes when the trainer does nothing special:
# an inference job may state the default (it says nothing), not another value.
STATE_FIELD_DEFAULTS: dict[str, object] = {
    "master_weights": "fp32",
    "optimizer_in_backward": False,
    "paged_optimizer": False,
    "loss_chunks": 1,
}


def _refuse_state_fields(w: s.WorkloadIn, why: str) -> None:
    """A 422 naming the first training-state field set to other than its default."""
    for name, default in STATE_FIELD_DEFAULTS.items():
        if getattr(w, name) not in (None, default):
            raise InvalidInput(f"{name} {why}", field=f"workload.{name}")


def _state_fields(
    w: s.WorkloadIn,
    task: str,
    model: ModelSpec,
    precision: str,
    peft: str,
    optimizer: str,
    runtime: str,
) -> dict[str, Any]:
    """How the trainer holds its state (WorkloadSpec.fp32_master, optimizer_in_backward,
    loss_chunks, paged_optimizer); blank fields keep today's answer."""
    if task not in TRAINING_TASKS:
        return {}
    if runtime == "megatron":
        # Megatron's memory plan (workload._megatron_memory) holds its own distributed
        # optimizer's state and prices none of these; echoing one back unpriced would be a
        # silent contradiction
        _refuse_state_fields(
            w,
            "is a single-trainer setting (torchtune, Hugging Face); runtime 'megatron' keeps "
            "its distributed optimizer's own state: leave it out",
        )
        return {}
    out: dict[str, Any] = {}
    if w.master_weights == "none":
        if precision not in ("bf16", "fp16"):
            raise InvalidInput(
                f"master_weights 'none' is pure 16-bit training: precision bf16 or fp16, not "
                f"{precision} (an fp32 job's weights are its own fp32 copy)",
                field="workload.master_weights",
            )
        out["fp32_master"] = False
    if w.optimizer_in_backward:
        if peft != "none":
            raise InvalidInput(
                "optimizer_in_backward frees each weight's gradient in backward: a full "
                "fine-tune's memory term (torchtune's full_finetune_single_device); LoRA / QLoRA "
                "hold only the adapters' small gradients",
                field="workload.optimizer_in_backward",
            )
        out["optimizer_in_backward"] = True
    if w.paged_optimizer:
        if optimizer == "sgd":
            raise InvalidInput(
                "paged_optimizer is bitsandbytes' paged AdamW (32- or 8-bit); it has no paged "
                "SGD: use optimizer adamw or adam8bit",
                field="workload.paged_optimizer",
            )
        out["paged_optimizer"] = True
    if w.loss_chunks is not None:
        if model.family != "decoder" or not model.vocab_size:
            raise InvalidInput(
                "loss_chunks splits a language model's cross-entropy over its vocabulary "
                f"logits; a model of family '{model.family}' computes none",
                field="workload.loss_chunks",
            )
        out["loss_chunks"] = int(w.loss_chunks)
    return out


def _cache_encodings(w: s.WorkloadIn, task: str, model: ModelSpec) -> bool:
    """True where the request asks for cached encodings (blank leaves it to the planner,
    service._savers_allowed); only a diffusion pipeline has frozen encoders to cache."""
    if not w.cache_encodings or task not in TRAINING_TASKS:
        return False
    if not pipeline_frozen_params(model):
        raise InvalidInput(
            "cache_encodings applies to fine-tuning a diffusion pipeline (SD 1.5, SDXL, "
            "FLUX.1), whose text encoders and VAE it frees",
            field="workload.cache_encodings",
        )
    return True


def _extra_gpus(w: s.WorkloadIn, task: str, model: ModelSpec, warnings: list[str]) -> None:
    """extra_gpus is a one-job inference choice: training and fine-tuning spread their extra
    GPUs as data parallel already, serving plans its replicas itself."""
    if w.extra_gpus is None:
        return
    if task != "inference":
        raise InvalidInput(
            f"extra_gpus applies to task 'inference' only, not '{task}'"
            + (" (serving plans its own replicas)" if task == "serving" else ""),
            field="workload.extra_gpus",
        )
    if w.extra_gpus == "copies" and model.family != "decoder":
        warnings.append(
            "extra_gpus 'copies' changes nothing here: inference of a model other than a "
            "decoder LLM already runs each extra GPU as a copy on its share of the batch (a "
            "model one GPU cannot hold at batch 1 is refused, not split over several)"
        )


def _peft(w: s.WorkloadIn, d: dict[str, Any], task: str, inference: bool) -> str:
    # a preset's adapters are its fine-tuning recipe (Mistral 7B's QLoRA): asked to train, the
    # model trains every weight; only adapters the request names are refused there
    peft = "none" if inference else str(w.peft or blank_peft(task, d.get("peft")))
    if task == "training" and peft != "none":
        raise InvalidInput(
            "LoRA/QLoRA adapt a pretrained model: use task 'fine-tuning'", field="workload.peft"
        )
    return peft


def _one_pass_per_sample(model: ModelSpec, warnings: list[str]) -> ModelSpec:
    """A diffusion training sample is one UNet pass at a random timestep, not a whole
    denoising run: per-image figures do not apply."""
    passes = model.passes_per_sample or 1
    if passes <= 1 or not model.gflops_per_sample:
        return model
    model = dataclasses.replace(
        model, gflops_per_sample=model.gflops_per_sample / passes, passes_per_sample=1
    )
    warnings.append(
        f"training uses one network pass per sample: {model.gflops_per_sample:,.0f} "
        f"forward GFLOPs (the preset's figure covers {passes} passes for one generated image)"
    )
    return model


def _precision(
    w: s.WorkloadIn, d: dict[str, Any], task: str, peft: str, warnings: list[str]
) -> str:
    published = _published_precision(w) if task in ("inference", "serving") else None
    given = d.get("precision")
    if (
        w.precision is None
        and task in TRAINING_TASKS
        and d.get("task") in INFERENCE_TASKS
        and given not in (None, *UNQUANTISED_PRECISIONS)
    ):
        # An inference preset's fp8 is the checkpoint it serves (Meta's FP8 Llama 3.1 405B,
        # DeepSeek's FP8 release); fine-tuning recipes start from 16-bit weights, converted
        # with DeepSeek-V3's own inference/fp8_cast_bf16.py where only FP8 is published
        # (github.com/deepseek-ai/DeepSeek-V3 README, section 6, "How to Run Locally").
        warnings.append(
            f"the preset's {given} is its published inference checkpoint; {task} assumed in "
            f"bf16 (set precision {given} for {given} mixed-precision training)"
        )
        given = "bf16"
    precision = str(w.precision or given or published or "bf16")
    if precision == "fp4" and task != "serving":
        raise InvalidInput(
            "fp4 weights (NVFP4/MXFP4) are modelled for task 'serving' only",
            field="workload.precision",
        )
    if precision not in MODELLED_PRECISIONS and task != "serving":
        raise InvalidInput(
            f"precision '{precision}' is not modelled yet", field="workload.precision"
        )
    if task in TRAINING_TASKS and peft == "none" and precision in ("int8", "int4"):
        raise InvalidInput(
            f"full training in {precision} is not supported; use bf16/fp16, or peft 'qlora'",
            field="workload.precision",
        )
    if peft == "lora" and precision == "int4":
        raise InvalidInput("LoRA on a 4-bit base is QLoRA: set peft 'qlora'", field="workload.peft")
    if peft == "qlora" and w.quantization == "gptq" and precision != "fp16":
        # Qwen's Q-LoRA recipe on its GPTQ Int4 checkpoints: "Remember to use --fp16 instead of
        # --bf16 due to autogptq" (tests/data/finetune_throughput.yaml, the recipe the engine's
        # GPTQ-base fine-tuning rows measured)
        warnings.append(
            f"a GPTQ base computes in fp16 (AutoGPTQ's kernels); precision {precision} → fp16"
        )
        return "fp16"
    if peft == "qlora" and precision not in ("bf16", "fp16"):
        warnings.append(f"QLoRA computes in bf16 over a 4-bit base; precision {precision} → bf16")
        precision = "bf16"
    return precision


def _long_context_words(long: LongContext | None, context: int) -> list[str]:
    """A job past a preset's native context runs under its rope scaling (Qwen3: YaRN to
    131,072), which only serving's commands turn on: said, with the publisher's caveat."""
    if long is None or context <= long.native:
        return []
    return [
        f"{context:,} tokens is past the model's native context of {long.native:,}: it runs "
        f"with {long.rope_type.upper()} rope scaling set in its config.json (rope_scaling "
        f"factor {long.factor:g} over {long.original:,} positions), which the publisher says "
        "may lower quality on short texts"
    ]


def _lengths(
    w: s.WorkloadIn, d: dict[str, Any], model: ModelSpec, inference: bool, warnings: list[str]
) -> tuple[int, int]:
    """Sequence length and output tokens; a decoder's job past the model's context is refused,
    naming the field."""
    transformer = model.is_transformer
    seq_default = min(model.max_context or 2048, 2048)
    seq_len = int(w.seq_len or d.get("seq_len") or (seq_default if transformer else 1))
    out_tokens = int(w.output_tokens or d.get("output_tokens") or 128)
    if transformer and model.max_context and model.family == "decoder":
        room = model.max_context - out_tokens
        if inference and w.seq_len is None and seq_len > room > 0:
            # the default prompt is the preset's training context (GPT-2's 1,024): asked for
            # inference, it leaves the output no room, so the prompt takes what is left (said
            # where it is the job's prompt: a serving job's lengths are its serving block's)
            if w.serving is None:
                warnings.append(
                    f"seq_len not given: the prompt is taken as {room:,} tokens, so that it "
                    f"and the {out_tokens:,} output tokens fit the model's context of "
                    f"{model.max_context:,}"
                )
            seq_len = room
        ctx = seq_len + (out_tokens if inference else 0)
        if inference and ctx > model.max_context:
            # a trained model attends no further than its context: refused, as serving does
            raise InvalidInput(
                f"prompt + output = {ctx:,} tokens exceeds the model's context of "
                f"{model.max_context:,}",
                # the prompt is named only where it was given and fills the context itself
                field="workload.seq_len"
                if w.seq_len is not None and seq_len >= model.max_context
                else "workload.output_tokens",
            )
        if ctx > model.max_context:
            # Training past the context, as inference: refused, naming the context. Estimated
            # "anyway", such a job had answered empty with nothing to try (Llama 3.1 8B at
            # 262,144). A context extension (RoPE scaling, a new model) states its own
            # model.max_context, which this check then reads.
            raise InvalidInput(
                f"seq_len {seq_len:,} exceeds the model's context of {model.max_context:,} "
                "tokens: train at most that, or set model.max_context for a context extension",
                field="workload.seq_len",
            )
    if transformer and model.family == "encoder-decoder":
        _seq2seq_lengths(w, model, inference, seq_len, out_tokens, warnings)
    return seq_len, out_tokens


def _beams(w: s.WorkloadIn, task: str, model: ModelSpec) -> int:
    """The beam width: an encoder-decoder's inference only (seq2seq prices each step's
    batch × beams sequences and the caches' reordering), else a 422 naming the field."""
    if w.beams is None:
        return 1
    if task != "inference" or model.family != "encoder-decoder":
        raise InvalidInput(
            "beams applies to an encoder-decoder's inference (Whisper, T5); a decoder LLM's "
            "serving and inference are priced with sampling, one sequence a request",
            field="workload.beams",
        )
    return int(w.beams)


def _seq2seq_lengths(
    w: s.WorkloadIn,
    model: ModelSpec,
    inference: bool,
    seq_len: int,
    out_tokens: int,
    warnings: list[str],
) -> None:
    """An encoder-decoder's limits: its decoder attends no further than its context (Whisper's
    max_target_positions, 448), and a speech model's encoder takes one window of audio (Whisper:
    30 s, max_source_positions 1,500); a stated seq_len has no say in a speech model's
    inference (its encoder runs over the audio, its decoder over output_tokens)."""
    ctx = model.max_context
    if ctx and inference and out_tokens > ctx:
        raise InvalidInput(
            f"output_tokens {out_tokens:,} exceeds the decoder's context of {ctx:,} tokens "
            "(Whisper: max_target_positions 448)",
            field="workload.output_tokens",
        )
    if ctx and not inference and seq_len > ctx:
        raise InvalidInput(
            f"seq_len {seq_len:,} (the target tokens) exceeds the decoder's context of {ctx:,}",
            field="workload.seq_len",
        )
    audio = model.input_size
    if audio and audio > SPEECH_WINDOW_S:
        raise InvalidInput(
            f"input_size {audio:g} s: a Whisper encoder takes one {SPEECH_WINDOW_S:g}-second "
            "window (max_source_positions 1,500); longer audio runs as several windows, each "
            "a sample (dataset_samples)",
            field="workload.model.input_size",
        )
    if audio and audio < SPEECH_WINDOW_S:
        warnings.append(
            f"input_size {audio:g} s: Whisper pads every input to {SPEECH_WINDOW_S:g} seconds, "
            f"so its encoder runs over the whole window; priced over {audio:g} s, as a model "
            "trained on shorter windows would run"
        )
    if audio and inference and w.seq_len is not None:
        warnings.append(
            "seq_len does not apply to a speech encoder-decoder's inference: its encoder runs "
            "over model.input_size seconds (50 positions a second), its decoder over "
            "output_tokens; ignored"
        )


def _inference_only(w: s.WorkloadIn) -> list[str]:
    """The inference fields a training question set, said to be ignored rather than dropped."""
    out = []
    if w.latency_target_ms is not None:
        out.append("latency_target_ms only applies to inference; ignored")
    if w.output_tokens is not None:
        # a training sample's tokens are its seq_len: 512 asked on a fine-tune had been
        # dropped without a word
        out.append(
            "output_tokens only applies to inference (training samples are seq_len tokens); ignored"
        )
    return out


def _no_tokens_out(w: s.WorkloadIn, task: str, family: str) -> list[str]:
    """output_tokens asked of a model that generates none, said as seq_len on a CNN is: a
    ResNet-50's, a ViT's, SDXL's or BERT's inference had dropped 500 output tokens without a
    word (the rate unchanged). Training says its own (``_inference_only``), serving reads its
    serving block's."""
    if task != "inference" or w.output_tokens is None or family in GENERATING_FAMILIES:
        return []
    return [
        f"output_tokens applies to a model that generates tokens (a decoder LLM, or an "
        f"encoder-decoder such as Whisper or T5); a model of family '{family}' returns its "
        "output from its forward passes; ignored"
    ]


def _seq_len_ignored(family: str) -> str:
    """Why a stated seq_len changes nothing for a model that is not a language transformer,
    warned as latency_target_ms on training is (a ViT's 4096 had been dropped without a word:
    its tokens are its image's patches)."""
    if family in CONV_FAMILIES:
        # a convolution network's input is its image, not a sequence
        why = "a CNN or diffusion model (its input is model.input_size)"
    elif family == "vit":
        why = (
            "a vision transformer (its tokens are the image's patches, set by "
            "model.input_size: 197 at 224 pixels in 16-pixel patches)"
        )
    else:
        why = f"a model of family '{family}' (one input per sample)"
    return f"seq_len does not apply to {why}; ignored"


def _gradient_checkpointing(
    w: s.WorkloadIn, d: dict[str, Any], task: str, peft: str, model: ModelSpec, runtime: str
) -> bool:
    if w.gradient_checkpointing is not None:
        return bool(w.gradient_checkpointing)
    if runtime in ADAPTER_ONLY_RUNTIMES:
        # mlx_lm.lora's --grad-checkpoint is off unless given (its CONFIG_DEFAULTS); where a
        # card needs it the engine's saver turns it on and says so
        return False
    inference = task not in TRAINING_TASKS
    # the preset's checkpointing belongs to its own task's recipe, as its adapters do
    # (blank_peft): GPT-2 XL's fine-tuning recipe turned full recomputation on for a
    # pretraining run that fits without it, ~a third more compute on every row, and the
    # banner said "as fine-tuning recipes run it"; a card that needs it still gets it, as the
    # engine's saver, said on its row
    own = d.get("task")
    carried = own is None or own == task
    return _recipe_checkpointing(task, peft, model) or bool(
        (d.get("gradient_checkpointing") or False) and not inference and carried
    )


def resolve_workload(w: s.WorkloadIn, data_dir: Path = DATA_DIR) -> tuple[WorkloadSpec, list[str]]:
    """Apply preset defaults and reject contradictions, naming the field. One resolver per
    concern (preset, task, training-only fields, PEFT, precision, lengths, runtime), each
    raising on its own fields, called in the order the fields are checked."""
    warnings: list[str] = []
    preset = _preset(w, data_dir)
    d = preset.defaults if preset is not None else {}
    model = _merge_model(w, preset)
    _check_model(model, preset.id if preset is not None else None)
    if (
        preset is not None
        and model.operators is not None
        and model.input_size != (own := preset.model.input_size)
    ):
        warnings.append(
            f"input_size {model.input_size:g}: the {preset.name} operator tables, traced at "
            f"{own:g}, are scaled to it (feature maps by the side's square, self-attention by "
            "its fourth power); no measurement at this size was checked"
        )
    task = _task(w, d, warnings)
    _extra_gpus(w, task, model, warnings)
    serving = _with_deploy_context(_serving_spec(w, model, task, warnings), model, preset)
    inference = task in INFERENCE_TASKS
    if inference:
        _check_inference_fields(w)
    peft = _peft(w, d, task, inference)
    if peft == "qlora" and model.family == "cnn":
        raise InvalidInput(
            "QLoRA loads a model's Linear layers in 4 bits (bitsandbytes); a CNN's convolutions "
            "are not quantised, so there is no QLoRA of it: use LoRA (peft lora) or no adapters",
            field="workload.peft",
        )
    if not inference:
        model = _one_pass_per_sample(model, warnings)
    released = d.get("released_format")
    w = _as_released(w, released, task, warnings)
    precision = _precision(w, d, task, peft, warnings)
    if model.family == "cnn" and precision in FOUR_BIT_PRECISIONS:
        # 4-bit weight formats (GPTQ, AWQ, NF4, NVFP4) quantise Linear layers; TensorRT and
        # PyTorch run a CNN's convolutions at 8 bits at the least
        raise InvalidInput(
            f"{precision} weights are a language model's Linear-layer format; no runtime "
            "modelled here runs a CNN's convolutions in 4 bits: use int8 (TensorRT) or fp16",
            field="workload.precision",
        )
    seq_len, out_tokens = _lengths(w, d, model, inference, warnings)
    if task != "serving" and w.preset is not None:
        long = load_presets(data_dir)[w.preset].long_context
        warnings += _long_context_words(long, seq_len + (out_tokens if inference else 0))
    if not inference:
        warnings += _inference_only(w)
    warnings += _no_tokens_out(w, task, model.family)
    if w.lora_rank is not None and peft == "none":
        # the adapters' rank, as latency_target_ms on training: said, not silently dropped
        warnings.append("lora_rank only applies to peft 'lora' or 'qlora'; ignored")
    elif w.lora_rank is not None:
        warnings += _full_rank(model, w.lora_rank)
    if peft in ("lora", "qlora") and not inference:
        warnings += _lora_targets(model, peft, w.lora_rank or DEFAULT_LORA_RANK, w.runtime)
    if w.seq_len is not None and not model.is_transformer:
        warnings.append(_seq_len_ignored(model.family))
    if w.channels_last and model.family not in CONV_FAMILIES:
        # said, as seq_len on a CNN is: a memory format has no say without convolutions
        warnings.append(
            f"channels_last applies to a convolutional model (a CNN or diffusion UNet), not a "
            f"model of family '{model.family}'; ignored"
        )
    optimizer = "adamw" if inference else (w.optimizer or d.get("optimizer") or "adamw")
    runtime, quantization, precision, bits = _runtime(w, task, model, precision, peft, data_dir)
    warnings += _llamacpp_weights_said(w, task, runtime, precision)
    job = _job_size(w, preset, task, model, seq_len, data_dir)
    said = _dataset_said(job, model, task, seq_len)
    if said is not None:
        warnings.append(said)
    warnings += _epochs_ignored(w, job)
    work = WorkloadSpec(
        task=task,
        model=model,
        precision=precision,
        batch_size=_batch_size(w, d, task, model, seq_len, warnings, data_dir),
        seq_len=seq_len,
        output_tokens=out_tokens,
        optimizer=optimizer,
        peft=peft,
        gradient_checkpointing=_gradient_checkpointing(w, d, task, peft, model, runtime),
        cached_encodings=_cache_encodings(w, task, model),
        **_state_fields(w, task, model, precision, peft, optimizer, runtime),
        dataset_samples=job.samples,
        epochs=job.epochs,
        dataset_basis=job.basis,
        latency_target_ms=w.latency_target_ms if task == "inference" else None,
        lora_rank=w.lora_rank or DEFAULT_LORA_RANK,
        lora_layers=_lora_layers(w, peft, runtime, model, warnings),
        allow_tf32_matmul=bool(w.allow_tf32_matmul),
        channels_last=bool(w.channels_last) and model.family in CONV_FAMILIES,
        preset=preset.id if preset is not None else None,
        runtime=runtime,
        runtime_given=w.runtime is not None,
        gpu_backend=_gpu_backend(w, runtime, task),
        quantization=quantization,
        weight_bits=bits,
        released_format=released,
        efficiency=load_efficiency(data_dir),
        serving=serving,
        megatron=_megatron_layout(w, runtime, model, seq_len),
        beams=_beams(w, task, model),
    )
    if serving is not None:
        work = dataclasses.replace(
            work, seq_len=serving.prompt_tokens, output_tokens=serving.output_tokens
        )
    warnings += _mlx_targets(work)
    return work, warnings


def _lora_layers(
    w: s.WorkloadIn, peft: str, runtime: str, model: ModelSpec, warnings: list[str]
) -> int:
    """The job's ``lora_layers``: the request's under an adapter-only runtime (mlx-lm's
    --num-layers), no more than the model's blocks (mlx_lm.lora refuses more: "Requested to
    train N layers but the model only has M layers"); 0 otherwise (the runtime's rule,
    workload.adapted_layers). Given where it has no say, it is said to be ignored."""
    if w.lora_layers is None:
        return 0
    if peft == "none" or runtime not in ADAPTER_ONLY_RUNTIMES:
        where = "peft 'lora' or 'qlora'" if peft == "none" else "runtime mlx (mlx-lm)"
        warnings.append(f"lora_layers only applies to {where}; ignored (PEFT adapts every block)")
        return 0
    if model.layers and w.lora_layers > model.layers:
        raise InvalidInput(
            f"lora_layers {w.lora_layers} is more than the model's {model.layers} blocks "
            "(mlx-lm refuses it); give at most that, the model's layer count to adapt them all",
            field="workload.lora_layers",
        )
    return int(w.lora_layers)


def _adapted_out(work: WorkloadSpec) -> int | None:
    """The blocks a LoRA job adapts where that is fewer than the model has, for the answer."""
    if work.peft == "none" or adapted_share(work) >= 1.0:
        return None
    return int(adapted_layers(work))


def _adapter_only(
    task: str, peft: str, quant: str, runtime: str, model: ModelSpec, table: EfficiencyTable
) -> float | None:
    """A runtime priced for adapter fine-tuning alone (mlx-lm's LoRA / QLoRA) runs nothing
    else here: a 422 naming the field that asked for it. Its QLoRA base's bits per weight where
    the runtime quantises the whole model in its own format (MLX's affine 4-bit:
    formats.runtime_bits), else None."""
    if runtime not in ADAPTER_ONLY_RUNTIMES:
        return None
    if task != "fine-tuning":
        raise InvalidInput(
            f"{runtime} trains here only as mlx-lm's LoRA / QLoRA fine-tuning (task "
            "'fine-tuning' with peft 'lora' or 'qlora'); mlx-lm has no pretraining script: "
            "train from scratch under runtime pytorch",
            field="workload.runtime",
        )
    if peft not in ("lora", "qlora"):
        raise InvalidInput(
            f"{runtime} fine-tuning is priced for LoRA and QLoRA (peft 'lora' or 'qlora'); "
            "mlx-lm's full fine-tuning (--fine-tune-type full, the last --num-layers blocks "
            "trained whole) and DoRA are not modelled: use peft 'lora' or runtime pytorch",
            field="workload.runtime",
        )
    if model.family != "decoder":
        raise InvalidInput(
            f"mlx-lm fine-tunes decoder language models, not a {model.family} model: use "
            "runtime pytorch",
            field="workload.runtime",
        )
    if quant != "none":
        raise InvalidInput(
            f"QLoRA under {runtime} is LoRA over MLX's own affine 4-bit model (mlx_lm.convert "
            f"-q), not {quant}: leave quantization out",
            field="workload.quantization",
        )
    if peft == "qlora" and table.runtime_value(runtime, "qlora_in_kernel"):
        return runtime_bits(runtime, "int4")
    return None


def _lora_targets(model: ModelSpec, peft: str, rank: int, runtime: str | None = None) -> list[str]:
    """The modules the adapters' memory and time assume (workload.lora_params, the block
    linears), said once at the top of the answer in the names PEFT's ``target_modules`` takes,
    which no row said. PEFT's LoraConfig targets q_proj and v_proj alone for Llama and Mixtral
    (peft/utils/constants.py, TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING), fewer
    adapters than counted; its "all-linear" adapts every expert of an MoE model too, which the
    engine does not count. DeepSeek's attention is HF's DeepseekV3Attention, whose projections
    are not q, k, v, o (modeling_deepseek_v3.py): the words had named modules it lacks. An
    adapter-only runtime's (mlx-lm's) are said by ``_mlx_targets``."""
    if not (model.is_transformer and model.has_shape) or runtime in ADAPTER_ONLY_RUNTIMES:
        return []
    what = f"{'QLoRA' if peft == 'qlora' else 'LoRA'} rank {rank}"
    count = f"{lora_params(model, rank) / 1e6:,.0f} M adapter parameters"
    if model.experts and model.experts > 1:
        names = ", ".join(_attention_modules(model))
        return [
            f"{what} on the attention projections ({names}; the experts carry none): {count}; "
            "give these as target_modules ('all-linear' would adapt every expert too, far "
            "more adapters than counted)"
        ]
    mlp = "gate, up, down" if gated_mlp(model) else "up, down"
    attn = ", ".join(_attention_modules(model)) if model.attention == "mla" else "q, k, v, o"
    return [
        f"{what} on all linear layers ({attn}, {mlp}): {count}; PEFT's default "
        "for Llama, q_proj and v_proj only, trains fewer and needs less memory"
    ]


def _mlx_targets(work: WorkloadSpec) -> list[str]:
    """The adapters an mlx_lm.lora job trains, said as ``_lora_targets`` says PEFT's: every
    linear of the last ``adapted_layers`` blocks (tuner/utils.linear_to_lora_layers)."""
    m = work.model
    lora = work.peft in ("lora", "qlora")
    if not (lora and work.runtime in ADAPTER_ONLY_RUNTIMES and m.is_transformer and m.has_shape):
        return []
    what = f"{'QLoRA' if work.peft == 'qlora' else 'LoRA'} rank {work.lora_rank}"
    k = adapted_layers(work)
    return [
        f"{what} on every linear layer of the last {k:g} of {m.layers} blocks, as mlx_lm.lora "
        f"adapts them (--num-layers {k:g}): {job_lora_params(work) / 1e6:,.1f} M adapter "
        "parameters; backward runs through those blocks alone"
    ]


def _attention_modules(model: ModelSpec) -> list[str]:
    """The attention's linear layers by their names in Hugging Face's modeling code."""
    if len(attention_linears(model)) == 5:  # MLA with a query latent (DeepseekV3Attention)
        return ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]
    if len(attention_linears(model)) == 4 and model.attention == "mla" and model.kv_lora_rank:
        return ["q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]  # DeepSeek-V2-Lite
    return ["q_proj", "k_proj", "v_proj", "o_proj"]


def _full_rank(model: ModelSpec, rank: int) -> list[str]:
    """Where ``rank`` reaches the narrowest width of a layer LoRA targets (the block
    linears, workload.lora_params): an adapter B·A of rank r ≥ min(in, out) is no longer low
    rank, and has more parameters than the layer it adapts (r·(in + out) > in·out); Llama 3 8B's
    k and v projections are 1,024 wide, so a rank of 4,096 had counted 10.7 B adapter
    parameters without a word."""
    if not (model.is_transformer and model.has_shape):
        return []
    h = int(model.hidden_size or 0)
    widths = [(h, "hidden size")]
    if model.attention == "mla" and model.kv_lora_rank:
        # MLA's narrowest layers are its latents (DeepSeek-V3: 512 and 1,536)
        widths.append((int(model.kv_lora_rank), "key-value latent (kv_lora_rank)"))
        widths.append((int(model.q_lora_rank or 0), "query latent (q_lora_rank)"))
    else:
        kv = int((model.kv_heads or 0) * (model.head_dim or 0))
        widths.append((kv, "k and v projections' width"))
        widths.append((int(model.q_width), "q and o projections' width"))
    if not (model.experts and model.experts > 1):  # an MoE model's experts are not adapted
        widths.append((int(model.intermediate_size or 4 * h), "MLP's width"))
    width, what = min((w, name) for w, name in widths if w > 0)
    if rank < width:
        return []
    return [
        f"lora_rank {rank:,} is at least the {what} ({width:,}): an adapter of rank ≥ "
        "min(in, out) of its layer is no longer low-rank and holds more parameters than the "
        "layer it adapts"
    ]


def _megatron_layout(
    w: s.WorkloadIn, runtime: str, model: ModelSpec, seq_len: int
) -> MegatronLayout | None:
    """The user's Megatron layout (runtime 'megatron' only; a virtual pipeline needs a
    pipeline), refused where Megatron-LM itself refuses it for this model and sequence
    (megatron.layout_error: heads, KV groups, layers per stage, 2 × CP chunks). Whether
    TP×PP×CP divides the GPU count is the service's check (it knows constraints.num_gpus) and
    the planner's (app/domain/evaluate.py plan)."""
    lay = w.megatron_layout
    if lay is None:
        return None
    if runtime != "megatron":
        raise InvalidInput(
            f"a Megatron layout applies to runtime 'megatron' only (this job runs {runtime})",
            field="workload.megatron_layout",
        )
    if lay.virtual_stages > 1 and lay.pipeline_parallel <= 1:
        raise InvalidInput(
            "virtual stages interleave a pipeline: set pipeline_parallel > 1 or virtual_stages 1",
            field="workload.megatron_layout.virtual_stages",
        )
    out = MegatronLayout(
        tp=lay.tensor_parallel,
        pp=lay.pipeline_parallel,
        vp=lay.virtual_stages,
        cp=lay.context_parallel,
        microbatches=lay.microbatches or 0,
        tp_comm_overlap=lay.tp_comm_overlap,
        overlap_dp=lay.overlap_grad_reduce,
    )
    bad = layout_error(model, seq_len, out)
    if bad is not None:
        raise InvalidInput(bad.reason, field=f"workload.megatron_layout.{bad.dim}")
    return out


def _llamacpp_weights_said(w: s.WorkloadIn, task: str, runtime: str, precision: str) -> list[str]:
    """llama.cpp asked with no weight format: the job is priced on the model's 16-bit weights
    (a BF16 GGUF), said as an assumed blank is, since a GGUF file names its own format. A
    Mac user asking what runs Llama 3 70B with llama.cpp (what Ollama runs) had read a bf16
    answer, one Mac at 2.9 tokens/s, with no word that the 4-bit file they run is priced
    otherwise but a row's tip."""
    if (
        task not in INFERENCE_TASKS
        or runtime not in ("llama.cpp", LLAMACPP_VULKAN_RUNTIME)
        or w.quantization is not None
        or w.precision is not None
        or precision not in UNQUANTISED_PRECISIONS
    ):
        return []
    return [
        f"weight format not given: llama.cpp priced on the model's {precision} weights (a "
        f"{precision.upper()} GGUF); a GGUF file names its own format: give yours as the "
        "weight format (quantization q4_k_m, q8_0, …) to price the file you run"
    ]


class _JobSize(NamedTuple):
    samples: float | None
    epochs: float
    basis: str | None
    default: bool = False  # the stated default for this kind of job (default_datasets)


def _batch_size(
    w: s.WorkloadIn,
    d: dict[str, Any],
    task: str,
    model: ModelSpec,
    seq_len: int,
    warnings: list[str],
    data_dir: Path,
) -> int:
    """The request's batch, else the preset's where it was made for this task, else (language
    models' training and fine-tuning) the stated default global batch, named in ``warnings`` so
    an assumed batch is never passed off as the user's; else the preset's, else 1."""
    if w.batch_size is not None:
        return int(w.batch_size)
    own = d.get("batch_size")
    default = default_batch(model.family, task, data_dir) if task in TRAINING_TASKS else None
    if (own is not None and d.get("task", task) == task) or default is None:
        batch = int(own or 1)
        if task == "inference" and (w.dataset_samples or 0) >= OFFLINE_SAMPLES * batch:
            warnings.append(_offline_batch_words(batch, float(w.dataset_samples or 0), w.runtime))
        made_for = d.get("task")
        if own is not None and task in TRAINING_TASKS and made_for not in (None, task):
            warnings.append(_borrowed_batch_words(batch, str(made_for), task))
        return batch
    sequences, tokens = default.sequences_for(model.params, seq_len)
    per_step = f" ({tokens:,.0f} tokens per step)" if tokens is not None else ""
    warnings.append(
        f"batch_size not given: assumed {sequences:,} "
        f"{'sequences' if model.family == 'decoder' else 'samples'} per optimizer step{per_step}, "
        f"{default.label}; run as micro-batches that fit (gradient accumulation). Set "
        "batch_size for your own"
    )
    return sequences


def _borrowed_batch_words(batch: int, made_for: str, task: str) -> str:
    """A training job that takes its preset's batch set for another task, said as an assumed
    batch is: Whisper large-v3 fine-tuned at its inference preset's batch of 1 (5.9 windows a
    second on an RTX 4090) had read as the user's batch, where Hugging Face's Whisper
    fine-tuning blog trains 16 a device."""
    return (
        f"batch_size not given: the preset's batch of {batch:,}, set for its {made_for}, is "
        f"assumed for this {task}; set batch_size for your own (run as micro-batches that fit, "
        "with gradient accumulation)"
    )


# Samples a stated dataset has, per sample of the assumed batch, from which an inference job is
# an offline pass over it: run batched, as every batch tool runs one, so an assumed batch of 1
# prices such a job hundreds of times slower than it runs (the batch-inference review: 10 M
# prompts at batch 1 read 802 days).
OFFLINE_SAMPLES = 1000


def _offline_batch_words(batch: int, samples: float, runtime: str | None) -> str:
    how = (
        "an LLM engine's offline generate schedules many prompts at once, as KV memory "
        "allows: vLLM up to max_num_seqs, 256 or 1,024 by device"
        if runtime in ("vllm", "sglang", "tensorrt-llm")
        else "a pipeline or engine takes its batch_size per process"
    )
    return (
        f"batch_size not given: assumed {batch} for {samples:,.0f} samples, which an offline "
        f"job runs batched ({how}); set batch_size to what one copy of the model runs at once"
    )


def _job_size(
    w: s.WorkloadIn,
    preset: Preset | None,
    task: str,
    model: ModelSpec,
    seq_len: int,
    data_dir: Path,
) -> _JobSize:
    """The dataset and epochs: the request's, else the preset's own, else (training only) the
    stated default for this kind of job (data/workloads.yaml default_datasets), each named in
    ``basis`` so the answer never passes an assumed size off as the user's. A preset's dataset
    and epochs are a training recipe's (ImageNet × 90): an inference question takes neither,
    so its own samples are one pass unless it says how many."""
    d = preset.defaults if preset is not None else {}
    if task not in TRAINING_TASKS:
        d = {k: v for k, v in d.items() if k not in ("dataset_samples", "epochs")}
    default = default_dataset(model.family, task, data_dir) if task in TRAINING_TASKS else None
    if d.get("task", task) != task and default is not None:
        # a preset's epochs are its own task's recipe: ViT-B/16's 10 fine-tuning epochs had
        # made training it from scratch (DeiT: 300) look thirty times shorter
        d = {**d, "epochs": default.epochs}
    if w.dataset_samples is not None:
        return _JobSize(w.dataset_samples, float(w.epochs or d.get("epochs") or 1), "yours")
    if d.get("dataset_samples") is not None:
        assert preset is not None
        epochs = float(w.epochs or d.get("epochs") or 1)
        basis = f"assumed: the {preset.name} preset's dataset"
        if d.get("task", task) != task and default is not None and not w.epochs:
            basis += f", {default.label}"
        return _JobSize(float(d["dataset_samples"]), epochs, basis)
    if default is None:
        return _JobSize(None, float(w.epochs or d.get("epochs") or 1), None)
    # whole samples: 1 M tokens at 2,048 a sample had been 488.28125 samples, a count the
    # dataset_samples field itself refuses as a fraction
    samples = math.ceil(default.samples_for(model.params, seq_len if model.is_transformer else 1))
    return _JobSize(
        float(samples), float(w.epochs or default.epochs), f"assumed: {default.label}", True
    )


def _epochs_ignored(w: s.WorkloadIn, job: _JobSize) -> list[str]:
    """Said, as latency_target_ms on training is: "epochs": 90 on an inference question
    without a dataset had been dropped without a word, the answer giving no time."""
    if w.epochs is None or job.samples is not None:
        return []
    return ["epochs counts passes over dataset_samples, which the question does not give; ignored"]


def _dataset_said(job: _JobSize, model: ModelSpec, task: str, seq_len: int) -> str | None:
    """What the time and cost to finish rest on, said at the top of the answer: the stated
    default dataset where the request and preset gave none (its basis had been only in the
    dataset_basis field), in the form of the assumed batch's line; and for a decoder's
    fine-tuning, that every sample counts as a full ``seq_len`` (packed, or padded to it):
    SFT sets average far shorter, so an unpacked run of them finishes sooner than said.
    Pretraining corpora are packed into full sequences, as counted."""
    if job.samples is None:
        return None
    packed = model.family == "decoder" and task == "fine-tuning"
    tokens = f" of {seq_len:,} tokens" if model.is_transformer and not packed else ""
    each = (
        f"every sample at {seq_len:,} tokens (packed, or padded to it): SFT samples "
        "average shorter, and an unpacked run of them finishes sooner"
    )
    if not job.default:
        return f"time and cost to finish count {each}" if packed else None
    epochs = f"{job.epochs:g} epoch" + "s" * (job.epochs != 1)
    return (
        f"dataset_samples not given: time and cost to finish assume "
        f"{(job.basis or '').removeprefix('assumed: ')}: {job.samples:,.0f} samples{tokens} × "
        f"{epochs}{', ' + each if packed else ''}; set dataset_samples for your own"
    )


# the formats llama.cpp's server is priced for: its serving row's GGUF int4_format, and the
# named formats it reads on the same 4-bit path (its int4_reads)
LLAMACPP_SERVING: tuple[str, ...] = tuple(quality.serving_formats("llama.cpp"))


def _as_released(
    w: s.WorkloadIn, released: str | None, task: str, warnings: list[str]
) -> s.WorkloadIn:
    """A model published in a quantised format (its preset's ``released_format``: gpt-oss's
    MXFP4) is served and run as released when the question names neither a precision nor a
    weight format (issue 23: keep the published weights): inference names the format, serving
    takes its precision as the published one the planner may keep (serving_step.serving_weights)
    and, under llama.cpp, names the format its server reads (int4_reads). Training starts from
    16-bit weights, as its recipes upcast them. A release in a plain
    precision (DeepSeek-V3's fp8) is the preset's own precision already: nothing to name.
    TensorFlow and JAX runtimes load no 4-bit format (service._check_graph_weights refuses one
    asked): the release is run as its 16-bit weights, and a warning says so, where
    ``runtime: tensorflow`` had priced gpt-oss in MXFP4."""
    if released is None or w.precision is not None or w.quantization is not None:
        return w
    if released not in QUANTIZATION_PRECISION:
        return w
    if w.runtime in GRAPH_FRAMEWORK_RUNTIMES:
        warnings.append(sixteen_bit_words(released, RUNTIME_FRAMEWORK[w.runtime], "bf16"))
        return w.model_copy(update={"precision": "bf16"})
    llama = w.runtime == "llama.cpp" and task in INFERENCE_TASKS
    if llama and released not in (LLAMACPP_FORMATS if task == "inference" else LLAMACPP_SERVING):
        runs = LLAMACPP_FORMATS if task == "inference" else LLAMACPP_SERVING
        raise InvalidInput(
            f"the model is released as {released}, and llama.cpp is modelled for "
            f"{' and '.join(', '.join(runs).rsplit(', ', 1))} here: name one in quantization "
            "(or precision bf16 for 16-bit weights)",
            field="workload.quantization",
        )
    if task == "inference" or llama:
        # llama.cpp serves the release's file as inference runs it: the named format on its
        # integer-dot 4-bit path (not fp4 on FP4 tensor cores, which its kernels do not use)
        return w.model_copy(update={"quantization": released})
    if task == "serving":
        return w.model_copy(update={"precision": QUANTIZATION_PRECISION[released]})
    return w


def sixteen_bit_words(fmt: str, framework: str, precision: str | None = None) -> str:
    """What a TensorFlow or JAX question says of a preset's 4-bit format it cannot load (the
    framework named: service._under_framework; its runtime named: ``_as_released``)."""
    also = f" ({precision})" if precision else ""
    return (
        f"the preset's {fmt} weights load in PyTorch runtimes and llama.cpp: under "
        f"{framework_name(framework)}, its 16-bit weights{also}"
    )


def _published_precision(w: s.WorkloadIn) -> str | None:
    """The precision a pasted config.json says the model's weights are published in: fp8 when
    its quantization_config names fp8 (DeepSeek-V3/R1), else None (16-bit)."""
    raw = w.model.hf_config if w.model is not None else None
    qc = raw.get("quantization_config") if isinstance(raw, dict) else None
    if isinstance(qc, dict) and qc.get("quant_method") == "fp8":
        return "fp8"
    return None


def _gpu_backend(w: s.WorkloadIn, runtime: str, task: str) -> str | None:
    """The backend a llama.cpp job is pinned to (its Vulkan build), else a 422: no other
    runtime is modelled on a backend the request names, and task 'serving' picks its backend
    per GPU (serving_step) where this pin is not read yet."""
    if w.gpu_backend is None:
        return None
    if runtime != "llama.cpp":
        raise InvalidInput(
            f"gpu_backend {w.gpu_backend} is llama.cpp's Vulkan build; runtime {runtime} "
            "runs on the GPU's own backend",
            field="workload.gpu_backend",
        )
    if task == "serving":
        named = w.vulkan_runtime_named
        raise InvalidInput(
            "llama.cpp's Vulkan build is priced for task 'inference'; serving plans run "
            "llama.cpp on the GPU's own backend (CUDA, HIP, Metal, SYCL): "
            + ("use runtime 'llama.cpp'" if named else "leave gpu_backend out"),
            field="workload.runtime" if named else "workload.gpu_backend",
        )
    return w.gpu_backend


def _runtime(
    w: s.WorkloadIn, task: str, model: ModelSpec, precision: str, peft: str, data_dir: Path
) -> tuple[str, str, str, float | None]:
    """Runtime, weight format, precision and bits per weight, with the defaults named in
    data/efficiency.yaml (training: eager PyTorch; LLM inference: Hugging Face generate;
    a GGUF format: llama.cpp)."""
    table = load_efficiency(data_dir)
    defaults = table.default_runtime
    quant: str = w.quantization or "none"
    if task == "serving" and model.family == "encoder":
        return _encoder_serving_runtime(w, precision), "none", precision, None
    refuse_encoder_runtime(w.runtime, task, model)
    if task == "serving":
        # a named format pins its precision, as in inference: the job's own (its compute on a
        # card without 16-bit tensor math: llama.cpp's int8 MMQ for GGUF Q4 on a Pascal card,
        # not a bf16 job's fp32 fallback) is the one asking precision int4 gives
        asked = quality.serving_formats(w.runtime).get(quant, precision)
        served = _serving_runtime(w)
        spec = table.serving.get(served)
        if spec is not None and quant in spec.int4_reads:
            # a named format the runtime reads on its own 4-bit path (llama.cpp, MLX on MXFP4):
            # its bits per quantised weight reach the server's weights
            # (serving_step.runtime_profile), as inference's do
            return served, quant, asked, table.bits_per_weight.get(quant)
        return served, "none", asked, None
    inference = task == "inference"
    if quant != "none" and not inference and not (peft == "qlora" and quant in QLORA_BASES):
        raise InvalidInput(
            "a quantised weight format applies to inference (a QLoRA base is nf4, or gptq as "
            "AutoGPTQ loads it)",
            field="workload.quantization",
        )
    if quant != "none" and inference:
        want = QUANTIZATION_PRECISION[quant]
        if w.precision is not None and w.precision != want:
            raise InvalidInput(
                f"{quant} stores weights as {want}; precision {w.precision} contradicts it",
                field="workload.quantization",
            )
        precision = want
    runtime = w.runtime if w.runtime is not None else _default_runtime(defaults, task, quant, model)
    if not inference and runtime not in TRAINING_RUNTIMES:
        # not "an inference runtime": MLX and llama.cpp fine-tune too (mlx-lm's LoRA), it is
        # this engine that prices their training nowhere
        raise InvalidInput(
            f"training under {runtime} is not modelled here; training is priced under "
            + ", ".join(TRAINING_RUNTIMES),
            field="workload.runtime",
        )
    if inference and runtime in TRAINING_ONLY_RUNTIMES:
        raise InvalidInput(
            f"{runtime} is priced as a training runtime only; inference runs on "
            + ", ".join(r for r in RUNTIMES if r not in TRAINING_ONLY_RUNTIMES),
            field="workload.runtime",
        )
    _check_runtime_family(runtime, quant, model)
    own = None if inference else _adapter_only(task, peft, quant, runtime, model, table)
    if own is not None:
        return runtime, quant, precision, own
    if inference:
        refuse_gguf_elsewhere(quant, runtime, task)
        refuse_mlx_elsewhere(quant, runtime, task)
        quant, precision = _runtime_weights(table, runtime, quant, precision)
    bits = table.bits_per_weight.get(quant) if quant != "none" else None
    return runtime, quant, precision, bits


def _default_runtime(defaults: dict[str, str], task: str, quant: str, model: ModelSpec) -> str:
    """The runtime a job that names none runs on (data/efficiency.yaml default_runtime): a
    GGUF file on llama.cpp, MLX's own format on MLX (it runs nowhere else), else the task's."""
    if task != "inference":
        return defaults.get(task, "pytorch")
    if quant in GGUF_FORMATS:
        return defaults.get("gguf", "llama.cpp")
    if quant in MLX_FORMATS:
        return "mlx"
    if model.family == "decoder":
        return defaults.get("llm-inference", "transformers")
    return defaults.get("inference", "pytorch")


def _check_runtime_family(runtime: str, quant: str, model: ModelSpec) -> None:
    """The runtime and weight format run this kind of model, else a 422 naming the field."""
    if runtime in TRANSFORMER_ONLY_RUNTIMES and model.family not in TRANSFORMER_RUNTIME_FAMILIES:
        raise InvalidInput(
            f"{runtime} trains transformers ({', '.join(TRANSFORMER_RUNTIME_FAMILIES)}),"
            f" not a {model.family} model",
            field="workload.runtime",
        )
    if model.family not in LANGUAGE_MODEL_FAMILIES and (quant != "none" or runtime in LLM_RUNTIMES):
        named = "quantization" if quant != "none" else "runtime"
        what = f"weight format {quant}" if quant != "none" else runtime
        raise InvalidInput(
            f"{what} is for language models ({', '.join(LANGUAGE_MODEL_FAMILIES)}),"
            f" not a {model.family} model",
            field=f"workload.{named}",
        )
    refused = SPEECH_REFUSED_RUNTIMES.get(runtime)
    if refused and model.family == "encoder-decoder" and model.input_size:
        raise InvalidInput(refused, field="workload.runtime")


def _runtime_weights(
    table: EfficiencyTable, runtime: str, quant: str, precision: str
) -> tuple[str, str]:
    """(weight format, precision) of an inference job on ``runtime``. A named format the
    runtime reads on its own 4-bit path (data/efficiency.yaml int4_reads) runs at int4:
    llama.cpp's MXFP4 blocks through the integer-dot kernels of its Q4 types (vecdotq.cuh
    vec_dot_mxfp4_q8_1; the int4 datapath its gpt-oss tuning rows are priced on,
    tests/data/llamacpp_moe_decode.yaml), MLX's through its quantized matmul (mode mxfp4); 4.25
    bits per quantised weight, the embeddings and output in 16-bit."""
    spec = table.serving.get(runtime)
    if spec is not None and quant in spec.int4_reads:
        precision = "int4"
    if runtime == "llama.cpp":
        return _llamacpp_weights(quant, precision)
    return quant, precision


def _llamacpp_weights(quant: str, precision: str) -> tuple[str, str]:
    """(weight format, precision) of a llama.cpp inference job: the formats it is modelled for
    (LLAMACPP_FORMATS; it loads more GGUF types, but these are the ones its tuning rows measured
    and whose bits per weight are sourced), int4 without a format being GGUF Q4_0."""
    if quant not in (*LLAMACPP_FORMATS, "none"):
        raise InvalidInput(
            f"llama.cpp is modelled for the GGUF formats q4_0, q4_k_m and q8_0 and for mxfp4, "
            f"not {quant}: name one of them in quantization",
            field="workload.quantization",
        )
    if quant == "none" and precision == "int4":
        return "q4_0", precision
    return quant, precision


_SERVING_RUNTIMES: tuple[str, ...] = get_args(s.ServingRuntime)


def refuse_gguf_elsewhere(quant: str | None, runtime: str | None, task: str) -> None:
    """A 422 on workload.quantization where a GGUF format (llama.cpp's files) is named on
    another runtime (None: serving's default, vLLM), for inference and serving alike: only
    llama.cpp runs one at its bits here. Transformers loads a GGUF file by dequantising it at
    load, to fp32 unless torch_dtype names another dtype (huggingface/transformers
    docs/source/en/gguf.md, v4.49.0: "When loading a model, we first dequantize it to fp32"),
    so pricing its weights at 4 bits, as inference had (6.3 GB a GPU for Llama 3 70B on 8
    cards where the dequantised model needs ~35 in 16-bit), said a run no one gets."""
    if quant not in GGUF_FORMATS or runtime == "llama.cpp":
        return
    runs = LLAMACPP_FORMATS if task == "inference" else LLAMACPP_SERVING
    fix = (
        f"{quant} is llama.cpp's: set runtime llama.cpp"
        if quant in runs
        else f"{quant} is a GGUF format, which llama.cpp {task} is not modelled for here"
    )
    if runtime == "transformers":
        why = (
            "Transformers loads a GGUF file by dequantising it (to fp32 unless torch_dtype "
            "names another dtype), so its weights do not run at the format's bits; for that "
            "run ask precision bf16 with no weight format"
        )
    elif runtime is None:
        why = "the runtimes the serving planner picks are not modelled running GGUF files"
    elif runtime == "mlx":
        why = (
            "mlx is not modelled running GGUF files; MLX's own 4-bit (what mlx_lm.convert -q "
            "writes, mlx-community's 4-bit models) is quantization mlx_4bit"
        )
    else:
        why = f"{runtime} is not modelled running GGUF files"
    on = f" on {runtime}" if runtime else ""
    raise InvalidInput(f"{task}{on}: {fix}; {why}", field="workload.quantization")


def refuse_mlx_elsewhere(quant: str | None, runtime: str | None, task: str) -> None:
    """A 422 on workload.quantization where MLX's own format (mlx_4bit: what mlx_lm.convert -q
    writes, an affine 4-bit with a 16-bit scale and bias per 64 weights) is named on another
    runtime (None: serving's default, vLLM): only MLX loads its quantised safetensors, as only
    llama.cpp runs a GGUF file here."""
    if quant not in MLX_FORMATS or runtime == "mlx":
        return
    on = f" on {runtime}" if runtime else " on the default runtime (vLLM)"
    raise InvalidInput(
        f"{task}{on}: {quant} is MLX's own 4-bit format (mlx_lm.convert -q), which only MLX "
        "runs: set runtime mlx, or name this runtime's own 4-bit format",
        field="workload.quantization",
    )


def _serving_runtime(w: s.WorkloadIn) -> str:
    """Task 'serving' runs on its own runtimes (data/efficiency.yaml serving_runtimes) and picks its
    weight formats itself. Blank: vLLM here; the serving planner then picks per GPU backend
    (``WorkloadSpec.runtime_given`` is False)."""
    formats = quality.serving_formats(w.runtime)
    if w.quantization not in (None, "none", *formats):
        refuse_gguf_elsewhere(w.quantization, w.runtime, "serving")
        refuse_mlx_elsewhere(w.quantization, w.runtime, "serving")
        on = f" on {w.runtime}" if w.runtime else ""
        raise InvalidInput(
            f"serving{on} runs {', '.join(formats)} (or unquantised weights), "
            f"not {w.quantization}; give precision to pin another",
            field="workload.quantization",
        )
    fmt = formats.get(w.quantization or "none")
    if fmt is not None and w.precision is not None and w.precision != fmt:
        raise InvalidInput(
            f"{w.quantization} stores weights as {fmt}; precision {w.precision} contradicts it",
            field="workload.quantization",
        )
    if w.runtime is None:
        return "vllm"
    if w.runtime not in _SERVING_RUNTIMES:
        raise InvalidInput(
            f"{w.runtime} is not a serving runtime; serving runs on "
            + ", ".join(_SERVING_RUNTIMES),
            field="workload.runtime",
        )
    return w.runtime


def _with_deploy_context(
    serving: ServingSpec | None, model: ModelSpec, preset: Preset | None
) -> ServingSpec | None:
    """A decoder's serving load with the context the deploy command gives each request
    (deploy.context_for reads the same rule): llama-server allocates every slot's KV cache at
    it when it starts, so the plan's memory reads it too."""
    if serving is None or not serving.output_tokens:
        return serving
    long = preset.long_context if preset is not None else None
    spread = (serving.prompt_tokens_spread or 0) + (serving.output_tokens_spread or 0)
    context = serving_model.deploy_context(
        serving.prompt_tokens,
        serving.output_tokens,
        spread,
        model.max_context,
        long.native if long is not None else None,
    )
    return dataclasses.replace(serving, context_tokens=context)


def _serving_spec(
    w: s.WorkloadIn, model: ModelSpec, task: str, warnings: list[str]
) -> ServingSpec | None:
    if task != "serving":
        if w.serving is not None:
            warnings.append("the serving block only applies to task 'serving'; ignored")
        return None
    if model.family == "encoder":
        # an embedding model or reranker behind a dynamic batcher (app/domain/serving_encoder)
        return _encoder_serving_spec(w, model, warnings)
    if model.family != "decoder":
        # a serving block with no task made this a serving question (_task): the block is
        # what the user sent, so the error names it
        raise InvalidInput(
            "serving is modelled for decoder LLMs (family 'decoder') and encoders (family "
            "'encoder': embedding models, rerankers)",
            field="workload.task" if w.task is not None else "workload.serving",
        )
    if model.kv_values(1.0) is None:
        raise InvalidInput(
            "serving needs the model's layers, hidden_size and heads (or a config.json)",
            field="workload.model.layers",
        )
    sv = _serving_load(w)
    given = sv.model_fields_set
    room = (model.max_context or 0) - sv.output_tokens
    if "prompt_tokens" not in given and sv.prompt_tokens > room > 0:
        # the default 1,000-token prompt and 300 outputs overrun a short context (GPT-2's
        # 1,024): the prompt takes what the output leaves, as inference's default does
        warnings.append(
            f"serving.prompt_tokens not given: taken as {room:,} tokens, so that it and the "
            f"{sv.output_tokens:,} output tokens fit the model's context of "
            f"{model.max_context:,}"
        )
        sv = sv.model_copy(update={"prompt_tokens": room})
    ctx = sv.prompt_tokens + sv.output_tokens
    # a longer context is the model's own (a rope-scaling extension): the request can say so
    longer = (
        "or set model.max_context where the model is served with a longer one (a rope-scaling "
        "extension such as YaRN)"
    )
    if model.max_context and ctx > model.max_context:
        raise InvalidInput(
            f"prompt + output = {ctx:,} tokens exceeds the model's context of "
            f"{model.max_context:,}: shorten them, {longer}",
            field="workload.serving.prompt_tokens"
            if "prompt_tokens" in given
            else "workload.serving.output_tokens",
        )
    spread = (sv.prompt_tokens_spread or 0) + (sv.output_tokens_spread or 0)
    if model.max_context and spread and ctx + spread > model.max_context:
        # the plan reserves each request's KV cache for mean + spread (serving_step.load_of)
        # and the serve command's --max-model-len is that longest request: beyond the context
        # neither exists (the runtime refuses such a prompt)
        raise InvalidInput(
            f"mean + spread = {ctx + spread:,} tokens (prompt, output and their spreads) "
            f"exceeds the model's context of {model.max_context:,}: give a spread within "
            f"{model.max_context - ctx:,} tokens, {longer}",
            field="workload.serving.prompt_tokens_spread"
            if sv.prompt_tokens_spread
            else "workload.serving.output_tokens_spread",
        )
    # no target would let anything that eventually answers "meet" the load: blanks get MLPerf's
    targets = serving_model.with_defaults(
        serving_model.ServingTargets(sv.ttft_ms_target, sv.itl_ms_target, sv.target_percentile)
    )
    return ServingSpec(
        prompt_tokens=sv.prompt_tokens,
        output_tokens=sv.output_tokens,
        concurrent_requests=sv.concurrent_requests,
        requests_per_s=sv.requests_per_s,
        prompt_tokens_spread=sv.prompt_tokens_spread,
        output_tokens_spread=sv.output_tokens_spread,
        ttft_ms_target=targets.ttft_ms,
        itl_ms_target=targets.itl_ms,
        target_percentile=sv.target_percentile,
        kv_cache_precision=sv.kv_cache_precision,
        ttft_target_default=targets.ttft_default,
        itl_target_default=targets.itl_default,
    )


def _generates(work: WorkloadSpec) -> bool:
    """Whether the estimate prices ``output_tokens`` generated tokens: LLM inference, and an
    encoder-decoder's inference (its decoder steps, app.domain.seq2seq)."""
    return work.is_llm_inference or (
        work.task == "inference" and work.model.family == "encoder-decoder"
    )


def resolved_out(work: WorkloadSpec) -> s.ResolvedWorkload:
    m = work.model
    inference = work.task in ("inference", "serving")
    return s.ResolvedWorkload(
        preset=work.preset,
        task=work.task,
        model=_model_out(m),
        precision=work.precision,
        batch_size=work.batch_size,
        seq_len=work.seq_len if m.is_transformer else None,
        output_tokens=work.output_tokens if _generates(work) else None,
        optimizer=None if inference else work.optimizer,
        peft=work.peft,
        lora_rank=work.lora_rank if work.peft != "none" else None,
        lora_layers=_adapted_out(work),
        gradient_checkpointing=work.gradient_checkpointing,
        dataset_samples=work.dataset_samples,
        epochs=work.epochs if work.dataset_samples is not None else None,
        dataset_basis=work.dataset_basis if work.dataset_samples is not None else None,
        latency_target_ms=work.latency_target_ms,
        allow_tf32_matmul=work.allow_tf32_matmul,
        runtime=work.runtime,
        gpu_backend=work.gpu_backend,
        quantization=work.quantization,
        weight_bits=work.weight_bits,
        serving=_serving_out(work.serving),
        beams=work.beams,
        master_weights=None if work.fp32_master else "none",
        optimizer_in_backward=work.optimizer_in_backward or None,
        paged_optimizer=work.paged_optimizer or None,
        loss_chunks=work.loss_chunks if work.loss_chunks > 1 else None,
    )


def _serving_out(sv: ServingSpec | None) -> s.ServingResolvedOut | None:
    if sv is None:
        return None
    return s.ServingResolvedOut(
        concurrent_requests=sv.concurrent_requests,
        requests_per_s=sv.requests_per_s,
        prompt_tokens=sv.prompt_tokens,
        output_tokens=sv.output_tokens,
        prompt_tokens_spread=sv.prompt_tokens_spread,
        output_tokens_spread=sv.output_tokens_spread,
        ttft_ms_target=sv.ttft_ms_target,
        itl_ms_target=sv.itl_ms_target,
        target_percentile=sv.target_percentile,
        kv_cache_precision=sv.kv_cache_precision,
        ttft_ms_target_basis=_basis(sv.ttft_target_default),
        itl_ms_target_basis=_basis(sv.itl_target_default),
    )


def _basis(default: bool) -> str:
    return f"default ({serving_model.DEFAULT_TARGETS_SOURCE})" if default else "yours"


# decoder serving runtimes that also serve an encoder, and the embedding server that is: vLLM's
# pooling runner is vLLM itself started on an embedding model (``--runner pooling``)
_ENCODER_RUNTIME_OF: dict[str, str] = {"vllm": "vllm-pooling"}


def refuse_encoder_runtime(runtime: str | None, task: str, model: ModelSpec) -> None:
    """A 422 on workload.runtime where an embedding server (ENCODER_SERVING_RUNTIMES) is named
    for anything but an encoder's serving: they run one forward pass a request, not a
    decoder's generation nor a training or batch job."""
    if runtime not in ENCODER_SERVING_RUNTIMES:
        return
    what = f"a {model.family} model" if task == "serving" else f"task '{task}'"
    raise InvalidInput(
        f"{runtime} is an embedding server, modelled for task 'serving' of an encoder "
        f"(family 'encoder': an embedding model, a reranker), not {what}; "
        + (
            "serving a decoder runs on " + ", ".join(_SERVING_RUNTIMES)
            if task == "serving"
            else "leave runtime blank for the task's default"
        ),
        field="workload.runtime",
    )


def _encoder_serving_runtime(w: s.WorkloadIn, precision: str) -> str:
    """The embedding server an encoder's serving runs on: the one asked (vLLM read as its
    pooling runner), TEI when blank; a decoder's server, a weight format or a precision the
    servers do not run is a 422 naming its field."""
    if w.quantization not in (None, "none"):
        raise InvalidInput(
            "an encoder's serving runs unquantised weights "
            f"({', '.join(ENCODER_SERVING_PRECISIONS)}), not {w.quantization}",
            field="workload.quantization",
        )
    if precision not in ENCODER_SERVING_PRECISIONS:
        raise InvalidInput(
            f"an encoder's serving runs at {', '.join(ENCODER_SERVING_PRECISIONS)} (the embedding "
            f"servers' dtypes), not {precision}",
            field="workload.precision",
        )
    runtime = w.runtime or DEFAULT_ENCODER_RUNTIME
    runtime = _ENCODER_RUNTIME_OF.get(runtime, runtime)
    if runtime not in ENCODER_SERVING_RUNTIMES:
        raise InvalidInput(
            f"{runtime} serves decoder LLMs; an encoder (embedding model, reranker) is served on "
            + ", ".join(ENCODER_SERVING_RUNTIMES)
            + " (vllm is read as vllm-pooling)",
            field="workload.runtime",
        )
    return runtime


def _serving_load(w: s.WorkloadIn) -> s.ServingIn:
    """The serving block, with its load given one way (a decoder's and an encoder's alike)."""
    sv = w.serving or s.ServingIn()
    if sv.concurrent_requests is None and sv.requests_per_s is None:
        raise InvalidInput(
            "give the load: concurrent_requests or requests_per_s",
            field="workload.serving.concurrent_requests",
        )
    if sv.concurrent_requests is not None and sv.requests_per_s is not None:
        raise InvalidInput(
            "give concurrent_requests or requests_per_s, not both",
            field="workload.serving.requests_per_s",
        )
    return sv


def _encoder_serving_spec(w: s.WorkloadIn, model: ModelSpec, warnings: list[str]) -> ServingSpec:
    """An encoder's load and target in the serving block's fields, each meaning what it means
    for a decoder (serving_encoder.load_of): the prompt is the sequence embedded, its spread
    the longest a padded batch runs at, ttft_ms_target the request's latency (one forward pass:
    its first answer is its whole answer). Output tokens and inter-token latency have no part:
    said where given. No latency given: none is held (MLPerf's 2 s first token is a chat
    model's), the plan carries the load."""
    if not model.has_shape:
        raise InvalidInput(
            "serving needs the model's layers, hidden_size and heads (or a config.json)",
            field="workload.model.layers",
        )
    sv = _serving_load(w)
    given = sv.model_fields_set
    ignored = [
        f for f in ("output_tokens", "output_tokens_spread", "itl_ms_target", "kv_cache_precision")
        if f in given and getattr(sv, f) is not None
    ]  # fmt: skip
    if ignored:
        warnings.append(
            f"serving.{', serving.'.join(ignored)}: an encoder returns its embedding (or score) "
            "from one forward pass, with no generated tokens nor KV cache; ignored"
        )
    prompt = sv.prompt_tokens
    ctx = model.max_context
    if "prompt_tokens" not in given and ctx and prompt > ctx:
        warnings.append(
            f"serving.prompt_tokens not given: taken as the model's context, {ctx:,} tokens"
        )
        prompt = ctx
    spread = sv.prompt_tokens_spread or 0
    if ctx and prompt + spread > ctx:
        raise InvalidInput(
            f"prompt + spread = {prompt + spread:,} tokens exceeds the encoder's context of "
            f"{ctx:,} (the servers truncate or refuse longer inputs): embed chunks within it",
            field="workload.serving.prompt_tokens_spread"
            if spread and prompt <= ctx
            else "workload.serving.prompt_tokens",
        )
    return ServingSpec(
        prompt_tokens=prompt,
        output_tokens=0,
        concurrent_requests=sv.concurrent_requests,
        requests_per_s=sv.requests_per_s,
        prompt_tokens_spread=sv.prompt_tokens_spread,
        ttft_ms_target=sv.ttft_ms_target,
        itl_ms_target=None,
        target_percentile=sv.target_percentile,
    )
