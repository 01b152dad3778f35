"""The vocabulary's tables cover every value, the contracts use the vocabulary, and no
module declares a closed set of vocabulary words of its own."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from app import vocab
from app.catalog import schemas as catalog_schemas
from app.domain.compat import FALLBACK
from app.domain.gpu import GpuSpec
from app.domain.workload import BYTES
from app.recommend import schemas as rs

TABLES = [
    (vocab.PRECISIONS, vocab.BYTES_PER_ELEMENT),
    (vocab.PRECISIONS, vocab.PRECISION_LABELS),
    (vocab.PRECISIONS, vocab.PRECISION_FALLBACK),
    (vocab.TASKS, vocab.TASK_LABELS),
    (vocab.FAMILIES, vocab.FAMILY_LABELS),
    (vocab.OPTIMIZERS, vocab.OPTIMIZER_LABELS),
    (vocab.PEFTS, vocab.PEFT_LABELS),
    (vocab.EXTRA_GPUS, vocab.EXTRA_GPUS_LABELS),
    (vocab.RUNTIMES, vocab.RUNTIME_LABELS),
    (vocab.QUANTIZATIONS, vocab.QUANTIZATION_LABELS),
    (vocab.FRAMEWORKS, vocab.FRAMEWORK_LABELS),
    (vocab.ACQUISITIONS, vocab.ACQUISITION_LABELS),
    (vocab.OBJECTIVES, vocab.OBJECTIVE_LABELS),
    (vocab.PURCHASE_BASES, vocab.PURCHASE_BASIS_LABELS),
    (vocab.PRECISIONS, vocab.PRECISION_TABLE),
    (vocab.PRECISIONS, vocab.KV_BYTES_PER_ELEMENT),
    (vocab.VENDORS, vocab.VENDOR_LABELS),
    (vocab.SEGMENTS, vocab.SEGMENT_LABELS),
    (vocab.BACKENDS, vocab.BACKEND_LABELS),
]


@pytest.mark.parametrize(("values", "table"), TABLES)
def test_every_value_has_an_entry(values: tuple[str, ...], table: dict[str, object]) -> None:
    assert set(table) == set(values)


def test_subsets_stay_inside_their_set() -> None:
    assert set(vocab.CATALOG_PRECISIONS) <= set(vocab.PRECISIONS)
    assert set(vocab.MEASURED_PRECISIONS) <= set(vocab.CATALOG_PRECISIONS)
    assert set(vocab.PEAK_FIELDS) == set(vocab.CATALOG_PRECISIONS)
    assert set(vocab.MODELLED_PRECISIONS) <= set(vocab.PRECISIONS)
    assert set(vocab.MODELLED_TASKS) <= set(vocab.TASKS)
    assert set(vocab.DEVICE_BACKENDS) <= set(vocab.BACKENDS)
    assert set(vocab.KV_CACHE_PRECISIONS) <= set(vocab.PRECISIONS)
    assert set(vocab.SERVING_PRECISION_ORDER) <= set(vocab.PRECISIONS)
    assert set(vocab.FIT_PRECISIONS) <= set(vocab.PRECISIONS)
    assert set(vocab.INFERENCE_TASKS) | set(vocab.TRAINING_TASKS) == set(vocab.TASKS)
    assert set(vocab.ONE_JOB_TASKS) <= set(vocab.TASKS)
    assert set(vocab.CONV_FAMILIES) <= set(vocab.FAMILIES)
    assert set(vocab.TRAINING_RUNTIMES) <= set(vocab.RUNTIMES)
    assert set(vocab.TRAINING_ONLY_RUNTIMES) <= set(vocab.TRAINING_RUNTIMES)
    assert set(vocab.SDPA_RUNTIMES) <= set(vocab.RUNTIMES)
    assert set(vocab.TRANSFORMER_ONLY_RUNTIMES) <= set(vocab.TRAINING_RUNTIMES)
    assert set(vocab.TRANSFORMER_RUNTIME_FAMILIES) <= set(vocab.FAMILIES)
    assert set(vocab.LLM_RUNTIMES) <= set(vocab.RUNTIMES) - set(vocab.TRAINING_RUNTIMES)
    assert set(vocab.LANGUAGE_MODEL_FAMILIES) <= set(vocab.FAMILIES)
    assert set(vocab.SERVING_RUNTIMES) <= set(vocab.RUNTIMES)
    assert set(vocab.GGUF_FORMATS) <= set(vocab.QUANTIZATIONS)
    assert set(vocab.QUANTIZATION_PRECISION) == set(vocab.QUANTIZATIONS) - {"none"}
    modelled = set(vocab.MODELLED_PRECISIONS) | set(vocab.FORMAT_ONLY_PRECISIONS)
    assert set(vocab.QUANTIZATION_PRECISION.values()) <= modelled
    assert not set(vocab.FORMAT_ONLY_PRECISIONS) & set(vocab.MODELLED_PRECISIONS)
    assert set(vocab.SUSTAINED_GEMM_PRECISIONS) <= set(vocab.MEASURED_PRECISIONS)
    assert set(vocab.BOUNDED_OBJECTIVES) <= set(vocab.OBJECTIVES)
    # every condition but "market" is a basis of its own; a "used" basis takes market prices
    # (cost.choose_purchase)
    assert set(vocab.CONDITIONS) - {"market"} <= set(vocab.PURCHASE_BASES)
    assert "market" in vocab.CONDITIONS and "market" not in vocab.PURCHASE_BASES
    assert set(vocab.HOST_TIERS) <= set(vocab.TIERS)
    assert set(vocab.SINGLE_DEVICE_SEGMENTS) <= set(vocab.SEGMENTS)
    for precision, order in vocab.PRECISION_FALLBACK.items():
        assert precision not in order
        assert all(b in vocab.PRECISIONS for b in order)
        # a fallback never needs fewer bytes per weight than what it replaces
        assert all(vocab.BYTES_PER_ELEMENT[b] >= vocab.BYTES_PER_ELEMENT[precision] for b in order)


def test_the_engine_and_contracts_share_the_vocabulary() -> None:
    assert set(BYTES) == set(vocab.PRECISIONS)
    assert FALLBACK == vocab.PRECISION_FALLBACK
    assert set(get_args(rs.Precision)) == set(vocab.PRECISIONS)
    assert set(get_args(rs.Task)) == set(vocab.TASKS)
    assert set(get_args(catalog_schemas.Vendor)) == set(vocab.VENDORS)


def test_every_catalog_precision_is_a_gpu_spec_field() -> None:
    gpu = GpuSpec("x", "X", "nvidia", "a", "datacenter", 80, 2000, fp8_tflops=1.0, int8_tops=2.0)
    for name in vocab.PEAK_FIELDS.values():
        assert hasattr(gpu, name), name
    assert gpu.peak_tflops("fp8") == 1.0
    assert gpu.peak_tflops("int8") == 2.0
    assert gpu.peak_tflops("int4") is None
    assert gpu.peak_tflops("fp4") is None


def test_the_catalog_precisions_are_the_rows_with_a_peak() -> None:
    with_peak = {p for p, row in vocab.PRECISION_TABLE.items() if row.peak_field}
    assert with_peak == set(vocab.CATALOG_PRECISIONS)
    assert all(vocab.PEAK_FIELDS[p] == vocab.PRECISION_TABLE[p].peak_field for p in with_peak)


@pytest.mark.parametrize("precision", vocab.PRECISIONS)
def test_a_kv_cache_is_kept_in_16_bit_or_wider(precision: str) -> None:
    # A one-job inference keeps its KV cache in 16-bit whatever its weights are stored in
    # (fp32 and tf32 keep fp32); only task 'serving' quantises it, through its own setting.
    row = vocab.PRECISION_TABLE[precision]  # type: ignore[index]
    assert row.kv_bytes == max(row.bytes, 2.0)


# ---------------------------------------------------------------- one declaration per set

APP = Path(__file__).resolve().parent.parent / "app"


def _vocabulary_words() -> set[str]:
    words: set[str] = set()
    for name in dir(vocab):
        value = getattr(vocab, name)
        members = get_args(value) or (value if isinstance(value, tuple) else ())
        words |= {m for m in members if isinstance(m, str)}
    return words


WORDS = _vocabulary_words()


def _strings(node: ast.AST) -> list[str] | None:
    if isinstance(node, ast.Call) and node.args:  # tuple(...), frozenset(...)
        node = node.args[0]
    if not isinstance(node, ast.Tuple | ast.List | ast.Set):
        return None
    if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def closed_sets(source: str) -> list[tuple[int, list[str]]]:
    """(line, words) of each Literal of two or more words, and each module-level tuple, list
    or set of two or more strings, that names vocabulary words: a set declared outside the
    vocabulary. A one-word Literal is a tag (a union's discriminator), not a set; tuples
    written inside a function are logic, not declarations."""
    tree = ast.parse(source)
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and (
            (isinstance(node.value, ast.Name) and node.value.id == "Literal")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "Literal")
        ):
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            tags = [a.value for a in args if isinstance(a, ast.Constant)]
            if len(tags) >= 2 and {str(t) for t in tags} & WORDS:
                found.append((node.lineno, [str(t) for t in tags]))
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            strings = _strings(stmt.value)
            if strings and len(strings) >= 2 and set(strings) <= WORDS:
                found.append((stmt.lineno, strings))
    return found


def test_the_scan_finds_a_copied_set() -> None:
    copied = 'from typing import Literal\nP = ("fp32", "tf32")\nX = Literal["vllm", "other"]\n'
    assert [line for line, _ in closed_sets(copied)] == [3, 2]
    assert closed_sets('TAG = Literal["rent"]\nCOUNTS = ("a", "b")\n') == []


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(APP.rglob("*.py")) if p.name != "vocab.py" or p.parent != APP],
    ids=lambda p: p.relative_to(APP.parent).as_posix(),
)
def test_no_module_declares_its_own_closed_set(path: Path) -> None:
    assert closed_sets(path.read_text(encoding="utf-8")) == []
