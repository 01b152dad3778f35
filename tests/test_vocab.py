"""The vocabulary's tables cover every value, and the contracts use the vocabulary."""

from __future__ import annotations

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
    (vocab.RUNTIMES, vocab.RUNTIME_LABELS),
    (vocab.QUANTIZATIONS, vocab.QUANTIZATION_LABELS),
    (vocab.FRAMEWORKS, vocab.FRAMEWORK_LABELS),
    (vocab.ACQUISITIONS, vocab.ACQUISITION_LABELS),
    (vocab.OBJECTIVES, vocab.OBJECTIVE_LABELS),
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
