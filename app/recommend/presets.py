"""Workload presets and the job sizes assumed without a dataset (data/workloads.yaml).

The file ships with the code and never changes at run time, so it is parsed once per
directory and cached. The engine's rule tables (frameworks, efficiencies) are read by
app/shipped/rules.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, get_type_hints

from app.domain.operators import ForwardTable
from app.domain.operators import parse_table as parse_operator_table
from app.domain.workload import ModelSpec
from app.shipped import yamlio
from app.shipped.rules import DATA_DIR

# The model fields a preset may set, and which of them are integers: read off ModelSpec so a
# field added there is a preset field too.
_MODEL_TYPES = get_type_hints(ModelSpec)
_TABLES = ("operators", "decoder_operators")  # read from data/operators/, never from the preset
_MODEL_FIELDS = tuple(f.name for f in fields(ModelSpec) if f.name not in _TABLES)
_INT_FIELDS = tuple(k for k in _MODEL_FIELDS if _MODEL_TYPES[k] in (int, int | None))


@dataclass(frozen=True, slots=True)
class LongContext:
    """A preset's documented context extension (data/workloads.yaml ``long_context``): RoPE
    scaling of ``rope_type`` over the ``original`` positions it was trained on, validated up to
    ``factor`` times them; ``native`` is the longest context its config.json serves without
    it (Qwen3: YaRN over 32,768 positions, validated to 131,072; config.json's 40,960)."""

    native: int
    rope_type: str
    original: int
    factor: float
    source: str = ""

    def factor_for(self, context: int) -> float:
        """The scaling that reaches ``context``: Qwen's advice is to size the factor to the
        context ("if the typical context length for your application is 65,536 tokens, it
        would be better to set factor as 2.0"), since static YaRN rescales every request; in
        whole steps, so the runtime's derived length (original × factor) holds the context."""
        return float(max(2, math.ceil(context / self.original)))

    def rope_scaling(self, context: int) -> dict[str, object]:
        return {
            "rope_type": self.rope_type,
            "factor": self.factor_for(context),
            "original_max_position_embeddings": self.original,
        }


@dataclass(frozen=True, slots=True)
class Preset:
    id: str
    name: str
    description: str
    model: ModelSpec
    defaults: dict[str, Any]
    sources: tuple[str, ...] = ()
    notes: str | None = None
    source_refs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The publisher's post-trained (chat/instruct) checkpoint of a base model, which a serving
    # command starts; None where the sourced repo is already the one to serve.
    serve_repo: str | None = None
    # An FP8 checkpoint of it (the publisher's own where it ships one, else NVIDIA's Model
    # Optimizer export), which an fp8 serving plan starts instead of quantising 16-bit weights
    # at load; None where none is named.
    serve_repo_fp8: str | None = None
    # An int4 AWQ checkpoint (the publisher's own or a widely used one) and an NVFP4 one, which
    # int4 and fp4 serving plans start: a runtime cannot load the 16-bit repo as either.
    serve_repo_awq: str | None = None
    serve_repo_fp4: str | None = None
    # its documented context extension (data/workloads.yaml ``long_context``), if any
    long_context: LongContext | None = None


@dataclass(frozen=True, slots=True)
class DefaultDataset:
    """The job size assumed for a kind of job when neither the request nor the preset gives a
    dataset (data/workloads.yaml ``default_datasets``): one of ``tokens`` (samples = tokens ÷
    seq_len), ``tokens_per_param`` (samples = that × params ÷ seq_len) or ``samples``."""

    families: tuple[str, ...]
    task: str
    label: str
    epochs: float = 1.0
    tokens: float | None = None
    tokens_per_param: float | None = None
    samples: float | None = None

    def samples_for(self, params: float, seq_len: int) -> float:
        if self.samples is not None:
            return self.samples
        tokens = self.tokens if self.tokens is not None else (self.tokens_per_param or 0) * params
        return tokens / max(1, seq_len)


@dataclass(frozen=True, slots=True)
class DefaultBatch:
    """The global batch assumed for a kind of job when neither the request nor a preset made
    for that task gives one (data/workloads.yaml ``default_batches``): ``sequences``, or tokens
    per step by model size (``tokens_by_params``: (up to params, tokens), the last open)."""

    families: tuple[str, ...]
    task: str
    source: str
    label: str
    sequences: int | None = None
    tokens_by_params: tuple[tuple[float | None, float], ...] = ()

    def sequences_for(self, params: float, seq_len: int) -> tuple[int, float | None]:
        """(sequences per step, the tokens per step they stand for, None for a fixed count)."""
        if self.sequences is not None:
            return self.sequences, None
        tokens = next(t for cap, t in self.tokens_by_params if cap is None or params <= cap)
        return max(1, round(tokens / max(1, seq_len))), tokens


def _workloads_section(data_dir: Path, key: str) -> list[dict[str, Any]]:
    """One top-level list of data/workloads.yaml (empty where the file or the list is)."""
    path = data_dir / "workloads.yaml"
    if not path.exists():
        return []
    doc = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    return list(doc.get(key) or [])


@lru_cache(maxsize=8)
def load_default_batches(data_dir: Path = DATA_DIR) -> tuple[DefaultBatch, ...]:
    out = []
    for raw in _workloads_section(data_dir, "default_batches"):
        steps = tuple(
            (None if cap is None else float(_num(cap)), float(_num(tok)))
            for cap, tok in raw.get("tokens_by_params") or ()
        )
        if not steps and raw.get("sequences") is None:
            raise ValueError(f"default_batches {raw}: give sequences or tokens_by_params")
        if steps and steps[-1][0] is not None:
            raise ValueError(f"default_batches {raw}: the last tokens_by_params row is open")
        seqs = raw.get("sequences")
        out.append(
            DefaultBatch(
                families=tuple(raw["families"]),
                task=str(raw["task"]),
                source=str(raw["source"]),
                label=str(raw["label"]),
                sequences=int(seqs) if seqs is not None else None,
                tokens_by_params=steps,
            )
        )
    return tuple(out)


def default_batch(family: str, task: str, data_dir: Path = DATA_DIR) -> DefaultBatch | None:
    return next(
        (b for b in load_default_batches(data_dir) if family in b.families and b.task == task),
        None,
    )


def _num(value: Any) -> Any:
    # YAML reads 8.03e9 as a string (no dot before the exponent in YAML 1.1 rules)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def model_from_dict(raw: dict[str, Any]) -> ModelSpec:
    kw = {k: _num(raw.get(k)) for k in _MODEL_FIELDS}
    for k in _INT_FIELDS:
        if kw[k] is not None:
            kw[k] = int(kw[k])
    kw["params"] = float(kw["params"])
    return ModelSpec(**kw)


@lru_cache(maxsize=8)
def load_presets(data_dir: Path = DATA_DIR) -> dict[str, Preset]:
    path = data_dir / "workloads.yaml"
    if not path.exists():
        return {}
    doc = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    refs = doc.get("sources") or {}
    out: dict[str, Preset] = {}
    for raw in doc.get("workloads") or []:
        sources = tuple(raw.get("sources") or ())
        model = model_from_dict(raw["model"])
        table = load_operator_table(data_dir, raw["id"])
        if table is not None:
            model = replace(model, operators=table)
        decoder = load_operator_table(data_dir / "operators", raw["id"], "vae")
        if decoder is not None:
            model = replace(model, decoder_operators=decoder)
        out[raw["id"]] = Preset(
            id=raw["id"],
            name=raw.get("name", raw["id"]),
            description=raw.get("description", ""),
            model=model,
            defaults={k: _num(v) for k, v in (raw.get("defaults") or {}).items()},
            sources=sources,
            notes=raw.get("notes"),
            source_refs={s: refs[s] for s in sources if s in refs},
            serve_repo=raw.get("serve_repo"),
            serve_repo_fp8=raw.get("serve_repo_fp8"),
            serve_repo_awq=raw.get("serve_repo_awq"),
            serve_repo_fp4=raw.get("serve_repo_fp4"),
            long_context=_long_context(raw),
        )
    return out


def _long_context(raw: dict[str, Any]) -> LongContext | None:
    """A preset's ``long_context`` block, checked as the file loads: every field present and
    the extension longer than the native context (a malformed block had surfaced as a 500)."""
    lc = raw.get("long_context")
    if not lc:
        return None
    try:
        out = LongContext(
            native=int(lc["native"]),
            rope_type=str(lc["rope_type"]),
            original=int(lc["original_max_position_embeddings"]),
            factor=float(lc["factor"]),
            source=str(lc.get("source") or ""),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"workloads.yaml preset {raw.get('id')}: bad long_context ({e})") from e
    if out.original * out.factor <= out.native:
        raise ValueError(f"workloads.yaml preset {raw.get('id')}: long_context extends nothing")
    return out


@lru_cache(maxsize=8)
def load_default_datasets(data_dir: Path = DATA_DIR) -> tuple[DefaultDataset, ...]:
    out = []
    for raw in _workloads_section(data_dir, "default_datasets"):
        numbers = {k: _num(raw.get(k)) for k in ("tokens", "tokens_per_param", "samples")}
        out.append(
            DefaultDataset(
                families=tuple(raw["families"]),
                task=str(raw["task"]),
                label=str(raw["label"]),
                epochs=float(_num(raw.get("epochs") or 1)),
                **{k: float(v) for k, v in numbers.items() if v is not None},
            )
        )
    return tuple(out)


def default_dataset(family: str, task: str, data_dir: Path = DATA_DIR) -> DefaultDataset | None:
    return next(
        (d for d in load_default_datasets(data_dir) if family in d.families and d.task == task),
        None,
    )


def load_operator_table(
    data_dir: Path, preset_id: str, folder: str = "operators"
) -> ForwardTable | None:
    """The preset's shipped forward operator table (data/operators/<id>.yaml; a diffusion
    preset's VAE decoder: data/operators/vae/<id>.yaml), if any."""
    path = data_dir / folder / f"{preset_id}.yaml"
    if not path.exists():
        return None
    return parse_operator_table(yamlio.safe_load(path.read_text(encoding="utf-8")) or {})


_HF = "https://huggingface.co/"


def hf_repo(preset: Preset) -> str | None:
    """The model's Hugging Face id, read off the first source that is its model page."""
    for ref in preset.source_refs.values():
        url = str(ref.get("url") or "")
        if url.startswith(_HF) and not url.startswith(_HF + "datasets/"):
            parts = url[len(_HF) :].split("/")
            if len(parts) >= 2 and parts[0] and parts[1]:
                return f"{parts[0]}/{parts[1]}"
    return None
