"""The question form and the catalog filter form: parse, validate, map to service inputs.

The question form is a GET form, so its query string is the shareable link. Every field
is optional: a blank field means "the preset's value" (or the engine's default for a
custom workload). Parsing never raises; it collects one message per field so the page can
re-show the form with the user's values and a message beside each wrong field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["choice", "int", "float", "size", "multi", "flag"]


@dataclass(frozen=True)
class FieldDef:
    name: str  # the query parameter
    path: tuple[str, ...]  # where it goes in the RecommendationRequest
    kind: Kind
    label: str
    help: str
    group: str
    choices: tuple[tuple[str, str], ...] = ()  # (value, label)
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    placeholder: str = ""
    advanced: bool = False


W = ("workload",)
M = ("workload", "model")
C = ("constraints",)

TASKS = (
    ("training", "Training from scratch"),
    ("fine-tuning", "Fine-tuning"),
    ("inference", "Inference / serving"),
)
FAMILIES = (
    ("decoder", "Decoder LLM (GPT, Llama)"),
    ("encoder", "Encoder (BERT)"),
    ("encoder-decoder", "Encoder–decoder (T5, Whisper)"),
    ("vit", "Vision transformer"),
    ("cnn", "Convolutional network"),
    ("diffusion", "Diffusion (UNet)"),
    ("mlp", "MLP / other"),
)
PRECISIONS = (
    ("bf16", "BF16 mixed precision"),
    ("fp16", "FP16 mixed precision"),
    ("fp32", "FP32"),
    ("tf32", "TF32"),
    ("fp8", "FP8"),
    ("int8", "INT8 (quantised)"),
    ("int4", "INT4 (quantised)"),
)
OPTIMIZERS = (
    ("adamw", "AdamW"),
    ("adam8bit", "8-bit Adam"),
    ("sgd", "SGD with momentum"),
)
PEFTS = (("none", "None (all weights trained)"), ("lora", "LoRA"), ("qlora", "QLoRA (4-bit base)"))
FLAGS = (("on", "On"), ("off", "Off"))
FRAMEWORKS = (("pytorch", "PyTorch"), ("tensorflow", "TensorFlow"), ("jax", "JAX"))
ACQUISITIONS = (("either", "Buy or rent"), ("buy", "Buy"), ("rent", "Rent (cloud)"))
VENDORS = (("nvidia", "NVIDIA"), ("amd", "AMD"), ("intel", "Intel"), ("apple", "Apple"))
SEGMENTS = (
    ("datacenter", "Datacenter"),
    ("workstation", "Workstation"),
    ("consumer", "Consumer"),
    ("laptop", "Laptop"),
    ("soc", "SoC / unified memory"),
)
OBJECTIVES = (
    ("balanced", "Balanced"),
    ("fastest", "Fastest"),
    ("best_value", "Best value (throughput per dollar)"),
    ("cheapest", "Cheapest to finish"),
)

QUESTION_FIELDS: tuple[FieldDef, ...] = (
    # --- the workload
    FieldDef(
        "task",
        (*W, "task"),
        "choice",
        "Task",
        "What the GPU will do with the model.",
        "workload",
        TASKS,
    ),
    FieldDef(
        "family",
        (*M, "family"),
        "choice",
        "Model family",
        "The architecture type; decides the memory and FLOP formulas.",
        "model",
        FAMILIES,
    ),
    FieldDef(
        "params",
        (*M, "params"),
        "size",
        "Parameters",
        "Model size: 7B, 350M, 1.2e9 or a plain number.",
        "model",
        minimum=1e3,
        maximum=1e13,
        placeholder="e.g. 7B",
    ),
    FieldDef(
        "precision",
        (*W, "precision"),
        "choice",
        "Precision",
        "Number format of weights and compute.",
        "workload",
        PRECISIONS,
    ),
    FieldDef(
        "batch_size",
        (*W, "batch_size"),
        "int",
        "Batch size",
        "Samples (or sequences) processed per step, per job.",
        "workload",
        minimum=1,
        maximum=1_000_000,
    ),
    FieldDef(
        "seq_len",
        (*W, "seq_len"),
        "int",
        "Sequence length",
        "Tokens per sample (context length for inference).",
        "workload",
        minimum=1,
        maximum=10_000_000,
    ),
    FieldDef(
        "dataset_samples",
        (*W, "dataset_samples"),
        "size",
        "Dataset size",
        "Training samples per epoch (e.g. 1.28M); leave blank for inference.",
        "workload",
        minimum=1,
        maximum=1e13,
    ),
    FieldDef(
        "epochs",
        (*W, "epochs"),
        "float",
        "Epochs",
        "Passes over the dataset.",
        "workload",
        minimum=0,
        maximum=100_000,
        exclusive_min=True,
    ),
    FieldDef(
        "output_tokens",
        (*W, "output_tokens"),
        "int",
        "Output tokens",
        "Tokens generated per request (LLM inference).",
        "workload",
        minimum=1,
        maximum=10_000_000,
        advanced=True,
    ),
    FieldDef(
        "latency_target_ms",
        (*W, "latency_target_ms"),
        "float",
        "Latency target (ms)",
        "Inference only: the slowest acceptable time per request.",
        "workload",
        minimum=0,
        maximum=1e7,
        exclusive_min=True,
        advanced=True,
    ),
    FieldDef(
        "optimizer",
        (*W, "optimizer"),
        "choice",
        "Optimizer",
        "Decides the optimizer-state memory per trainable parameter.",
        "workload",
        OPTIMIZERS,
        advanced=True,
    ),
    FieldDef(
        "peft",
        (*W, "peft"),
        "choice",
        "Parameter-efficient fine-tuning",
        "LoRA / QLoRA train small adapters and freeze the base model.",
        "workload",
        PEFTS,
        advanced=True,
    ),
    FieldDef(
        "lora_rank",
        (*W, "lora_rank"),
        "int",
        "LoRA rank",
        "Adapter rank for LoRA / QLoRA (16 when blank).",
        "workload",
        minimum=1,
        maximum=4096,
        advanced=True,
    ),
    FieldDef(
        "gradient_checkpointing",
        (*W, "gradient_checkpointing"),
        "flag",
        "Activation checkpointing",
        "Recompute activations: less memory, ~30 % more compute.",
        "workload",
        FLAGS,
        advanced=True,
    ),
    # --- model shape (advanced; presets fill these)
    FieldDef(
        "layers",
        (*M, "layers"),
        "int",
        "Layers",
        "Transformer blocks (or network depth).",
        "shape",
        minimum=1,
        maximum=10_000,
        advanced=True,
    ),
    FieldDef(
        "hidden_size",
        (*M, "hidden_size"),
        "int",
        "Hidden size",
        "Model width (d_model).",
        "shape",
        minimum=1,
        maximum=1_000_000,
        advanced=True,
    ),
    FieldDef(
        "num_heads",
        (*M, "num_heads"),
        "int",
        "Attention heads",
        "Query heads per layer.",
        "shape",
        minimum=1,
        maximum=10_000,
        advanced=True,
    ),
    FieldDef(
        "num_kv_heads",
        (*M, "num_kv_heads"),
        "int",
        "KV heads",
        "Key/value heads (fewer than attention heads with grouped-query attention).",
        "shape",
        minimum=1,
        maximum=10_000,
        advanced=True,
    ),
    FieldDef(
        "vocab_size",
        (*M, "vocab_size"),
        "int",
        "Vocabulary size",
        "Tokens in the vocabulary (embedding and output layer).",
        "shape",
        minimum=1,
        maximum=10_000_000,
        advanced=True,
    ),
    FieldDef(
        "gflops_per_sample",
        (*M, "gflops_per_sample"),
        "float",
        "Forward GFLOPs / sample",
        "For CNNs and diffusion models: forward-pass cost of one sample.",
        "shape",
        minimum=0,
        maximum=1e9,
        exclusive_min=True,
        advanced=True,
    ),
    FieldDef(
        "input_size",
        (*M, "input_size"),
        "float",
        "Input size (px)",
        "Image side length for vision models.",
        "shape",
        minimum=1,
        maximum=100_000,
        advanced=True,
    ),
    # --- where it runs
    FieldDef(
        "framework",
        (*C, "framework"),
        "choice",
        "Framework",
        "GPUs without a supported build of this framework are excluded.",
        "budget",
        FRAMEWORKS,
    ),
    FieldDef(
        "acquisition",
        (*C, "acquisition"),
        "choice",
        "Buy or rent",
        "Whether costs use purchase prices, cloud prices or both.",
        "budget",
        ACQUISITIONS,
    ),
    FieldDef(
        "max_purchase_usd",
        (*C, "max_purchase_usd"),
        "float",
        "Max purchase (USD)",
        "Most you would pay for all the GPUs of one option.",
        "budget",
        minimum=0,
        maximum=1e9,
        exclusive_min=True,
        placeholder="no limit",
    ),
    FieldDef(
        "max_hourly_usd",
        (*C, "max_hourly_usd"),
        "float",
        "Max rent (USD/hour)",
        "Most you would pay per hour of cloud time, all GPUs together.",
        "budget",
        minimum=0,
        maximum=1e6,
        exclusive_min=True,
        placeholder="no limit",
    ),
    FieldDef(
        "max_job_cost_usd",
        (*C, "max_job_cost_usd"),
        "float",
        "Max cost of the job (USD)",
        "Most the whole job may cost to finish.",
        "budget",
        minimum=0,
        maximum=1e9,
        exclusive_min=True,
        placeholder="no limit",
        advanced=True,
    ),
    FieldDef(
        "max_gpus",
        (*C, "max_gpus"),
        "int",
        "Max GPUs",
        "Largest number of GPUs to split the job over.",
        "budget",
        minimum=1,
        maximum=64,
        placeholder="8",
        advanced=True,
    ),
    FieldDef(
        "electricity_usd_per_kwh",
        (*C, "electricity_usd_per_kwh"),
        "float",
        "Electricity (USD/kWh)",
        "Energy price for the cost of running bought GPUs.",
        "budget",
        minimum=0,
        maximum=10,
        placeholder="0.15",
        advanced=True,
    ),
    FieldDef(
        "vendors",
        (*C, "vendors"),
        "multi",
        "Vendors",
        "Leave all unticked for any vendor.",
        "budget",
        VENDORS,
        advanced=True,
    ),
    FieldDef(
        "segments",
        (*C, "segments"),
        "multi",
        "Segments",
        "Leave all unticked for any class of card.",
        "budget",
        SEGMENTS,
        advanced=True,
    ),
    # --- the answer
    FieldDef(
        "objective",
        ("objective",),
        "choice",
        "Rank by",
        "What 'best' means for you.",
        "objective",
        OBJECTIVES,
    ),
    FieldDef(
        "limit",
        ("limit",),
        "int",
        "Rows",
        "How many GPUs to rank.",
        "objective",
        minimum=1,
        maximum=500,
        placeholder="10",
        advanced=True,
    ),
    FieldDef(
        "device_report_id",
        ("device_report_id",),
        "int",
        "Compare with my machine",
        "A stored device report: your GPU appears as the baseline.",
        "objective",
        minimum=1,
        maximum=2**62,
        advanced=True,
    ),
)

FIELDS_BY_NAME: dict[str, FieldDef] = {f.name: f for f in QUESTION_FIELDS}
FIELD_BY_PATH: dict[tuple[str, ...], str] = {f.path: f.name for f in QUESTION_FIELDS}

# The page's first visit: a preset people recognise and a neutral budget.
DEFAULTS: dict[str, str] = {
    "preset": "llama-3-8b",
    "framework": "pytorch",
    "acquisition": "either",
    "objective": "balanced",
}

_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbt]?)\s*$", re.IGNORECASE)
_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_size(text: str) -> float:
    """'7B' -> 7e9, '350m' -> 3.5e8, '1,281,167' -> 1281167.0, '1.2e9' -> 1.2e9."""
    cleaned = text.replace(",", "").replace("_", "").replace(" ", "")
    match = _SIZE_RE.match(cleaned)
    if not match:
        raise ValueError("write a number, optionally with K, M, B or T (e.g. 7B)")
    value = float(match.group(1)) * _SUFFIX[match.group(2).lower()]
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _parse_float(text: str) -> float:
    try:
        value = float(text.replace(",", "").replace("_", "").strip())
    except ValueError:
        raise ValueError("must be a number") from None
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


# Past this the database's integer types overflow; no catalog is that long anyway.
MAX_OFFSET = 1_000_000


def _parse_int(text: str) -> int:
    value = _parse_float(text)
    if value != int(value):
        raise ValueError("must be a whole number")
    return int(value)


def _check_range(f: FieldDef, value: float) -> None:
    if f.minimum is not None:
        if f.exclusive_min and value <= f.minimum:
            raise ValueError(f"must be more than {_fmt(f.minimum)}")
        if not f.exclusive_min and value < f.minimum:
            raise ValueError(f"must be at least {_fmt(f.minimum)}")
    if f.maximum is not None and value > f.maximum:
        raise ValueError(f"must be at most {_fmt(f.maximum)}")


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v == int(v) and abs(v) < 1e15 else f"{v:g}"


def _set(data: dict[str, Any], path: Sequence[str], value: Any) -> None:
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


MultiItems = Iterable[tuple[str, str]]


@dataclass
class QuestionForm:
    """The question as the user typed it, what it means, and what is wrong with it."""

    values: dict[str, Any] = field(default_factory=dict)  # raw text (lists for multi)
    errors: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)  # RecommendationRequest-shaped
    presets: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors

    def add_error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, message)

    def query(self) -> list[tuple[str, str]]:
        """The non-empty fields as query pairs: the canonical shareable link."""
        pairs: list[tuple[str, str]] = []
        for name in ("preset", *FIELDS_BY_NAME):
            value = self.values.get(name)
            values = value if isinstance(value, list) else [value]
            pairs.extend((name, str(v)) for v in values if v not in (None, ""))
        return pairs

    @property
    def has_advanced_values(self) -> bool:
        return any(
            self.values.get(f.name) not in (None, "", []) for f in QUESTION_FIELDS if f.advanced
        ) or any(FIELDS_BY_NAME[n].advanced for n in self.errors if n in FIELDS_BY_NAME)


def _grouped(items: MultiItems) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in items:
        out.setdefault(key, []).append(value)
    return out


def parse_question(
    items: MultiItems,
    *,
    presets: Iterable[str] = (),
    choices: Mapping[str, Sequence[str]] | None = None,
    use_defaults: bool = False,
) -> QuestionForm:
    """Parse query pairs into a form. ``choices`` overrides the allowed values per field
    (the pages pass the request schema's literals so the two never drift)."""
    raw = _grouped(items)
    if use_defaults and "preset" not in raw:
        # The first visit (or a link that sets only a few fields): start from the defaults.
        raw = {**{k: [v] for k, v in DEFAULTS.items()}, **raw}
    form = QuestionForm(presets=tuple(presets))
    allowed = dict(choices or {})

    preset = (raw.get("preset") or [""])[-1].strip()
    form.values["preset"] = preset
    if preset:
        if form.presets and preset not in form.presets:
            form.add_error("preset", "unknown preset; pick one from the list or 'Custom'")
        else:
            _set(form.data, (*W, "preset"), preset)

    for f in QUESTION_FIELDS:
        texts = [t.strip() for t in raw.get(f.name, []) if t.strip()]
        if f.kind == "multi":
            form.values[f.name] = texts
            valid = allowed.get(f.name) or [v for v, _ in f.choices]
            bad = [t for t in texts if t not in valid]
            if bad:
                form.add_error(f.name, f"unknown value: {', '.join(bad)}")
            elif texts:
                _set(form.data, f.path, list(dict.fromkeys(texts)))
            continue
        text = texts[-1] if texts else ""
        form.values[f.name] = text
        if not text:
            continue
        try:
            value: Any
            if f.kind == "choice":
                valid = allowed.get(f.name) or [v for v, _ in f.choices]
                if text not in valid:
                    raise ValueError(f"choose one of: {', '.join(valid)}")
                value = text
            elif f.kind == "flag":
                if text not in ("on", "off", "true", "false", "1", "0"):
                    raise ValueError("choose on or off")
                value = text in ("on", "true", "1")
            elif f.kind == "int":
                value = _parse_int(text)
                _check_range(f, value)
            elif f.kind == "size":
                value = parse_size(text)
                _check_range(f, value)
                if f.name == "params":
                    value = float(value)
                elif value == int(value):
                    value = int(value)
            else:
                value = _parse_float(text)
                _check_range(f, value)
        except ValueError as exc:
            form.add_error(f.name, str(exc))
            continue
        _set(form.data, f.path, value)

    if not preset:
        for name in ("family", "params"):
            if not form.values.get(name):
                form.add_error(name, "needed for a custom workload (or pick a preset)")
    return form


def field_for_loc(loc: Sequence[Any]) -> str | None:
    """Map a validation error location in the request to the form field it came from."""
    parts = tuple(str(p) for p in loc if not isinstance(p, int) and p not in ("body", "query"))
    while parts:
        if parts in FIELD_BY_PATH:
            return FIELD_BY_PATH[parts]
        if parts == (*W, "preset"):
            return "preset"
        parts = parts[:-1]
    return None


def field_for_name(name: str | None) -> str | None:
    """Map a service error's ``field`` ('workload.model.params', 'params') to a form field."""
    if not name:
        return None
    if name in FIELDS_BY_NAME or name == "preset":
        return name
    return field_for_loc(name.split("."))


# ---------------------------------------------------------------------------- the catalog

CATALOG_SORTS: tuple[tuple[str, str], ...] = (
    ("", "Vendor and name"),
    ("-memory_gb", "Memory, most first"),
    ("memory_gb", "Memory, least first"),
    ("-memory_bandwidth_gbs", "Bandwidth, most first"),
    ("-bf16_tflops", "BF16 TFLOPS, most first"),
    ("-fp16_tflops", "FP16 TFLOPS, most first"),
    ("-fp32_tflops", "FP32 TFLOPS, most first"),
    ("-fp8_tflops", "FP8 TFLOPS, most first"),
    ("purchase_usd", "Price, cheapest first"),
    ("-purchase_usd", "Price, dearest first"),
    ("cloud_price_usd_per_hour", "Cloud $/h, cheapest first"),
    ("-release_year", "Newest first"),
    ("tdp_w", "Power, lowest first"),
)
CATALOG_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8")
PAGE_SIZE = 50


@dataclass
class CatalogForm:
    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    vendors: list[str] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)
    precisions: list[str] = field(default_factory=list)
    min_memory_gb: float | None = None
    max_memory_gb: float | None = None
    max_price_usd: float | None = None
    max_hourly_usd: float | None = None
    q: str | None = None
    sort: str | None = None
    offset: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


_CATALOG_NUMBERS: dict[str, tuple[float, float]] = {
    "min_memory_gb": (0, 4096),
    "max_memory_gb": (0, 4096),
    "max_price_usd": (0, 1e9),
    "max_hourly_usd": (0, 1e6),
}


def parse_catalog(items: MultiItems, sortable: Iterable[str]) -> CatalogForm:
    raw = _grouped(items)
    form = CatalogForm()
    for name, valid in (
        ("vendor", [v for v, _ in VENDORS]),
        ("segment", [v for v, _ in SEGMENTS]),
        ("precision", list(CATALOG_PRECISIONS)),
    ):
        texts = [t.strip() for t in raw.get(name, []) if t.strip()]
        form.values[name] = texts
        bad = [t for t in texts if t not in valid]
        if bad:
            form.errors[name] = f"unknown value: {', '.join(bad)}"
    form.vendors = [v for v in form.values["vendor"] if v not in form.errors.get("vendor", "")]
    form.segments = list(form.values["segment"]) if "segment" not in form.errors else []
    form.precisions = list(form.values["precision"]) if "precision" not in form.errors else []
    if "vendor" in form.errors:
        form.vendors = []
    for name, (lo, hi) in _CATALOG_NUMBERS.items():
        text = (raw.get(name) or [""])[-1].strip()
        form.values[name] = text
        if not text:
            continue
        try:
            value = _parse_float(text)
            if not lo <= value <= hi:
                raise ValueError(f"must be between {_fmt(lo)} and {_fmt(hi)}")
        except ValueError as exc:
            form.errors[name] = str(exc)
            continue
        setattr(form, name, value)
    q = (raw.get("q") or [""])[-1].strip()
    form.values["q"] = q
    if len(q) > 100:
        form.errors["q"] = "at most 100 characters"
    else:
        form.q = q or None
    sort = (raw.get("sort") or [""])[-1].strip()
    form.values["sort"] = sort
    if sort:
        if sort.lstrip("-+") not in set(sortable):
            form.errors["sort"] = "cannot sort by that"
        else:
            form.sort = sort
    offset = (raw.get("offset") or [""])[-1].strip()
    if offset:
        try:
            form.offset = max(0, _parse_int(offset))
        except ValueError:
            form.errors["offset"] = "must be a whole number"
        else:
            if form.offset > MAX_OFFSET:
                form.offset = 0
                form.errors["offset"] = f"must be at most {MAX_OFFSET:,}"
    return form


def parse_slugs(values: Iterable[str]) -> list[str]:
    """``?slugs=a,b&slugs=c`` -> [a, b, c] (dupes and blanks dropped, order kept)."""
    out: list[str] = []
    for value in values:
        out.extend(s.strip() for s in value.split(","))
    return [s for s in dict.fromkeys(out) if s]
