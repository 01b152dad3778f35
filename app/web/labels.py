"""Words for people: the labels of choice values shown in the forms and pages.

A value without an entry here is shown as itself with underscores and dashes as spaces,
so a new value in the vocabulary is never hidden, only less pretty.
"""

from __future__ import annotations

CHOICES: dict[str, dict[str, str]] = {
    "task": {
        "training": "Training from scratch",
        "fine-tuning": "Fine-tuning",
        "inference": "Inference (batch jobs)",
        "serving": "Serving (many users)",
    },
    "family": {
        "decoder": "Decoder LLM (GPT, Llama)",
        "encoder": "Encoder (BERT)",
        "encoder-decoder": "Encoder–decoder (T5, Whisper)",
        "vit": "Vision transformer",
        "cnn": "Convolutional network",
        "diffusion": "Diffusion (UNet)",
        "mlp": "MLP / other",
    },
    "precision": {
        "fp32": "FP32",
        "tf32": "TF32",
        "bf16": "BF16 mixed precision",
        "fp16": "FP16 mixed precision",
        "fp8": "FP8",
        "int8": "INT8 (quantised)",
        "int4": "INT4 (quantised)",
        "fp4": "FP4 (quantised)",
    },
    "optimizer": {"adamw": "AdamW", "adam8bit": "8-bit Adam", "sgd": "SGD with momentum"},
    "peft": {"none": "None (all weights)", "lora": "LoRA", "qlora": "QLoRA (4-bit base)"},
    "framework": {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"},
    "acquisition": {"either": "Buy or rent", "buy": "Buy", "rent": "Rent (cloud)"},
    "vendors": {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"},
    "segments": {
        "datacenter": "Datacenter",
        "workstation": "Workstation",
        "consumer": "Consumer (GeForce, Radeon)",
        "laptop": "Laptop",
        "soc": "Unified memory (Apple)",
    },
    "objective": {
        "balanced": "Balanced",
        "fastest": "Fastest",
        "best_value": "Best value (work per $)",
        "cheapest": "Cheapest to finish",
    },
}
# The same words wherever a value appears outside a form.
CHOICES["vendor"] = CHOICES["vendors"]
CHOICES["segment"] = CHOICES["segments"]


def choice_label(field: str, value: object) -> str:
    text = str(value)
    return CHOICES.get(field, {}).get(text) or text.replace("_", " ").replace("-", " ")


VENDOR_NAMES = CHOICES["vendors"]


def vendor(value: object) -> str:
    return choice_label("vendors", value)
