"""Words for people: the labels of choice values shown in the forms and pages.

The labels live in the vocabulary (app/vocab.py); this maps each form field to its table,
with a few shorter wordings where a select box is narrow. A value without a label is shown
as itself with underscores and dashes as spaces, so a new value is never hidden.
"""

from __future__ import annotations

from app import vocab

CHOICES: dict[str, dict[str, str]] = {
    "task": vocab.TASK_LABELS,
    "family": vocab.FAMILY_LABELS,
    "precision": vocab.PRECISION_LABELS,
    "optimizer": vocab.OPTIMIZER_LABELS,
    "peft": vocab.PEFT_LABELS,
    "runtime": vocab.RUNTIME_LABELS,
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


def choice_label(field: str, value: object) -> str:
    text = str(value)
    return CHOICES.get(field, {}).get(text) or text.replace("_", " ").replace("-", " ")


def vendor(value: object) -> str:
    return choice_label("vendors", value)
