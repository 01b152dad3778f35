"""Quality said out loud: which weight formats a request allows by default, and what a
quantised row is known to cost in quality, with its source (data/quality.yaml).

By default a model keeps its published weights: bf16/fp16, or fp8 on a card that runs fp8
natively when the model publishes fp8 weights (its preset's precision). 4-bit formats (int4,
fp4, GGUF Q4, AWQ/GPTQ) only when the user asks: ``workload.quantization`` names one, or
``constraints.allow_4bit`` (the serving planner's choice: serving_step.serving_weights) while
the weight format is left blank; weight format 'none' keeps unquantised weights even then
(app/recommend/serving.py allows_4bit).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from app.recommend.presets import DATA_DIR
from app.shipped import yamlio
from app.vocab import QUANTIZATION_PRECISION, RUNTIME_OWN_FORMATS, UNQUANTISED_PRECISIONS

# The weight formats task 'serving' accepts as a request for that format, and the precision
# the serving planner runs each at.
SERVING_FORMATS = {"awq": "int4", "gptq": "int4", "nvfp4": "fp4", "mxfp4": "fp4"}
# llama.cpp's server runs GGUF files, not those: the GGUF format its serving row prices
# (data/efficiency.yaml serving_runtimes llama.cpp int4_format), and a model's MXFP4 release,
# which it reads on the same integer-dot path (serving.RuntimeProfile.reading), are the ones
# a request may name
LLAMACPP_SERVING_FORMATS = {"q4_k_m": "int4", "mxfp4": "int4"}
# MLX's server takes the formats the default runtimes do (its int4_reads read MXFP4 on its own
# 4-bit path) and its own affine 4-bit (mlx_4bit, what mlx_lm.convert -q writes)
MLX_SERVING_FORMATS = {**SERVING_FORMATS, "mlx_4bit": "int4"}


# How a row's note ends when its weights are the model's own release: no quality cost to weigh
AS_RELEASED = "as the model was released (its own checkpoint)"
# How a row's note ends when its weights are the publisher's own checkpoint published beside
# the 16-bit release (Qwen/Qwen3-235B-A22B-FP8): not "as the model was released"
PUBLISHER_OWN = "published beside its 16-bit weights; its quality is the publisher's to state"


def is_release(released: str | None, precision: str, quantization: str | None) -> bool:
    """Whether weights at ``precision`` (in ``quantization``, where named) are the model's own
    ``released`` ones: the release's format named, or left blank where its precision is the
    one running; a release in a plain precision (DeepSeek-V3: "we only provide FP8 weights")
    is its own."""
    return released is not None and (
        quantization == released
        or (
            quantization in (None, "none")
            and QUANTIZATION_PRECISION.get(released, released) == precision
        )
    )


def serving_formats(runtime: str | None) -> dict[str, str]:
    """The weight formats a serving request on ``runtime`` may name, each with the precision
    the planner runs it at (None: the default runtimes, vLLM and those the planner picks)."""
    if runtime == "llama.cpp":
        return LLAMACPP_SERVING_FORMATS
    return MLX_SERVING_FORMATS if runtime == "mlx" else SERVING_FORMATS


UNQUANTISED = UNQUANTISED_PRECISIONS

# The format a runtime runs a bare precision as, where that is one library's own: Transformers'
# int8 with no format named loads through bitsandbytes (LLM.int8()), whose paper states its own
# cost; Kurtic et al.'s W8A8-INT figure is vLLM's and TensorRT-LLM's kind of int8, not this.
# MLX's int4 with no format named is its own affine 4-bit (vocab.RUNTIME_OWN_FORMATS), whose
# cost is said as that format's, not GPTQ/AWQ's W4A16 figure.
RUNTIME_FORMATS: dict[tuple[str, str], str] = {
    ("transformers", "int8"): "llm_int8",
    **RUNTIME_OWN_FORMATS,
}
# How such a format is named in a row's words (the key is the data file's)
FORMAT_NAMES = {
    "llm_int8": "int8 (bitsandbytes LLM.int8())",
    "mlx_4bit": "MLX 4-bit (affine, group 64, 4.5 bits per weight)",
}


def runtime_format(runtime: str | None, precision: str) -> str | None:
    """The weight format ``runtime`` runs ``precision`` weights as where none is named
    (``RUNTIME_FORMATS``); None where the precision's own figure stands."""
    return RUNTIME_FORMATS.get((runtime or "", precision))


@cache
def _doc(data_dir: Path) -> dict[str, Any]:
    """data/quality.yaml, parsed once per folder (``_table`` and ``_unmeasured`` read it)."""
    return yamlio.safe_load((data_dir / "quality.yaml").read_text(encoding="utf-8")) or {}


@cache
def _table(
    data_dir: Path, section: str = "formats", family: str | None = None
) -> dict[str, tuple[str, str]] | None:
    """format (or KV cache precision, section "kv_cache") → (cost, 'title (url)'); with a
    ``family`` the table ``families`` holds for it (None where it holds none: the language
    models' figures stand)."""
    doc = _doc(data_dir)
    sources = doc.get("sources") or {}
    entries = doc.get(section) or {}
    if family is not None:
        own = (doc.get("families") or {}).get(family)
        if own is None:
            return None
        entries = own
    out: dict[str, tuple[str, str]] = {}
    for key, item in entries.items():
        ref = sources[item["source"]]
        out[str(key)] = (str(item["cost"]), f"{ref['title']} ({ref['url']})")
    return out


def known_cost(precision: str, data_dir: Path = DATA_DIR) -> str | None:
    """What weights at ``precision`` are known to cost, with its source ("… (source: …)"),
    as a row running them says it (``cost_note``); None where no figure is held."""
    hit = (_table(data_dir) or {}).get(precision)
    return f"{hit[0]} (source: {hit[1]})" if hit is not None else None


def kv_note(kv_precision: str, data_dir: Path = DATA_DIR) -> str | None:
    """What a KV cache below 16 bits is known to cost, with its source; None at 16 bits."""
    hit = (_table(data_dir, "kv_cache") or {}).get(kv_precision)
    if hit is None:
        return None
    return f"quality: {kv_precision} KV cache — {hit[0]} (source: {hit[1]})"


def publisher_note(precision: str, repo: str) -> str:
    """A row's weights in the checkpoint the model's own publisher ships at ``precision``
    beside the 16-bit release (Qwen/Qwen3-32B-FP8): said as the publisher's own checkpoint
    (``PUBLISHER_OWN``), not as the release itself and not with a figure measured on another
    model."""
    # the summary reads no caveat into it, as into a release's note
    own = f"the publisher's own {precision.upper()} checkpoint ({repo})"
    return f"quality: {precision} weights in {own}, {PUBLISHER_OWN}"


def notes(
    precision: str,
    kv_precision: str | None,
    quantization: str | None = None,
    released: str | None = None,
    publisher_repo: str | None = None,
) -> tuple[str, ...]:
    """A serving row's quality notes: its weights', then its KV cache's. ``publisher_repo``:
    the model's publisher's own checkpoint the row's weights load from (deploy.publisher_fp8),
    said as released where no named format says otherwise."""
    weights = cost_note(precision, quantization, released=released)
    if publisher_repo is not None and weights is not None and quantization in (None, "none"):
        weights = publisher_note(precision, publisher_repo)
    said = (weights, kv_note(kv_precision) if kv_precision else None)
    return tuple(n for n in said if n is not None)


def cost_note(
    precision: str,
    quantization: str | None = None,
    data_dir: Path = DATA_DIR,
    released: str | None = None,
    family: str | None = None,
) -> str | None:
    """What running weights at ``precision`` (in the named ``quantization`` format, when one is
    named) is known to cost, with its source; None for unquantised weights. The format the
    model was ``released`` in costs nothing against its own checkpoint: said as such. A
    ``family`` with figures of its own (a CNN's int8) reads only those: a language model's
    measurement is not a CNN's, so where the family has none the note says none is known.
    Every figure is the source's model's, and the note says so."""
    if precision in UNQUANTISED and quantization in (None, "none"):
        return None
    name = quantization if quantization not in (None, "none") else precision
    name = FORMAT_NAMES.get(name, name)
    if is_release(released, precision, quantization):
        return f"quality: {released} weights {AS_RELEASED}"
    own = _table(data_dir, family=family) if family is not None else None
    table = own if own is not None else _table(data_dir) or {}
    hit = table.get(quantization or "") or table.get(precision)
    if hit is None:
        if own is None:
            return None
        return (
            f"quality: {name} weights — no published measurement of {name} on this kind of "
            "model is in the sources here; check its accuracy before relying on it"
        )
    if (quantization or precision) in _unmeasured(data_dir):
        # no figure found: the entry says so, and where it looked (data/quality.yaml measured)
        return f"quality: {name} weights — {hit[0]} (source: {hit[1]})"
    whose = "on the source's own model (yours may lose more or less)"
    return f"quality: {name} weights — {whose}: {hit[0]} (source: {hit[1]})"


@cache
def _unmeasured(data_dir: Path) -> frozenset[str]:
    """Formats whose entry holds no figure (``measured: false``): what was looked for and not
    found, said without "on the source's own model" (there is no such model)."""
    doc = _doc(data_dir)
    return frozenset(
        str(k) for k, v in (doc.get("formats") or {}).items() if v.get("measured") is False
    )
