"""Words for people: the labels of choice values shown in the forms and pages.

The labels live in the vocabulary (app/vocab.py); this maps each form field to its table,
with a few shorter wordings where a select box is narrow. A value without a label is shown
as itself with underscores and dashes as spaces, so a new value is never hidden.
"""

from __future__ import annotations

from app import vocab

CHOICES: dict[str, dict[str, str]] = {
    "task": {**vocab.TASK_LABELS, "serving": "Serving (many users)"},
    "family": vocab.FAMILY_LABELS,
    "precision": vocab.PRECISION_LABELS,
    "optimizer": vocab.OPTIMIZER_LABELS,
    "master_weights": vocab.MASTER_WEIGHTS_LABELS,
    "peft": vocab.PEFT_LABELS,
    "extra_gpus": vocab.EXTRA_GPUS_LABELS,
    "runtime": {
        **vocab.RUNTIME_LABELS,
        # what is priced: no mode set, no CUDA graphs (an LLM's decode replays them: the
        # answer's echo says so, question_pages._runtime_echo; vocab.RUNTIME_LABELS)
        "torch-compile": "torch.compile (default mode)",
        "transformers": "HF Transformers generate",
    },
    "quantization": vocab.QUANTIZATION_LABELS,
    "framework": vocab.FRAMEWORK_LABELS,
    "acquisition": vocab.ACQUISITION_LABELS,
    "objective": {**vocab.OBJECTIVE_LABELS, "best_value": "Best value (work per $)"},
    "vendors": vocab.VENDOR_LABELS,
    "segments": {**vocab.SEGMENT_LABELS, "consumer": "Consumer (GeForce, Radeon)"},
    "backend": vocab.BACKEND_LABELS,
    "purchase_basis": vocab.PURCHASE_BASIS_LABELS,
}
# The same words wherever a value appears outside a form.
CHOICES["vendor"] = CHOICES["vendors"]
CHOICES["segment"] = CHOICES["segments"]


# The question form's own words for a few choices, where someone looks for a name the list does
# not hold: a Mac user with Ollama or LM Studio looked for them among the runtimes (both run
# GGUF models on llama.cpp, LM Studio MLX ones too: schemas.LLAMA_CPP_APPS, which tells an
# API body naming them so).
# The answer echoes the runtime by CHOICES.
FORM_CHOICES: dict[str, dict[str, str]] = {
    "runtime": {
        "llama.cpp": "llama.cpp (Ollama, LM Studio)",
        "tei": "TEI (encoders)",
        "infinity": "infinity (encoders)",
        "sentence-transformers": "sentence-transformers (encoders)",
        "vllm-pooling": "vLLM pooling runner (encoders)",
    },
}


def choice_label(field: str, value: object) -> str:
    text = str(value)
    return CHOICES.get(field, {}).get(text) or text.replace("_", " ").replace("-", " ")


def precision_label(
    precision: str,
    task: str,
    family: str | None,
    runtime: str | None,
    master_weights: str | None = None,
) -> str:
    """A job's precision as it runs: "FP16 mixed precision" is training's word (fp32 master
    weights) and autocast's; an SDXL inference in FP16 is just FP16, and so is training with
    ``master_weights`` 'none' (pure 16-bit: no fp32 copy to mix with)."""
    label = choice_label("precision", precision)
    mixed = master_weights != "none" and (
        task in vocab.TRAINING_TASKS
        or (family in vocab.AUTOCAST_FAMILIES and runtime in vocab.AUTOCAST_RUNTIMES)
    )
    return label if mixed else label.removesuffix(" mixed precision")


def form_choice_label(field: str, value: object) -> str:
    """A choice as the question form lists it (FORM_CHOICES, else choice_label)."""
    return FORM_CHOICES.get(field, {}).get(str(value)) or choice_label(field, value)


def vendor(value: object) -> str:
    return choice_label("vendors", value)


# Brand words a narrow place may drop from a GPU name ("NVIDIA GeForce RTX 4090" -> "RTX
# 4090"): crowded chart labels, a phone-wide select. The full name stays beside it.
BRAND_WORDS = frozenset({"NVIDIA", "GeForce", "AMD", "Radeon", "Instinct", "Intel", "Apple"})


def short_name(name: str) -> str:
    return " ".join(w for w in name.split(" ") if w not in BRAND_WORDS)
