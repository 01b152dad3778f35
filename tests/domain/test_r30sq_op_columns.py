"""A step's kernel columns priced as arrays (kernels.arrays_of over kernels.op_columns, the
GPU-independent columns a job keeps per fusion policy) are the op-by-op definition
(_prepare_scalar below) to the last bit, on the operator tables of every family the engine
steps (CNN, encoder, decoder training and inference, diffusion) at several SM counts, with and
without tensor-core convolutions and a softmax balance, and with the runtime's fusions; and
on made-up steps that hit the edges (ties in intensity, ops without bytes or FLOPs)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pytest

from app.domain import kernels
from app.domain.operators import GEMM, MEMORY, Op
from tests.support import preset_step_ops

DATA = Path(__file__).resolve().parents[2] / "data"

# (preset, task, batch): one job of each family the operator path steps
JOBS = [
    ("resnet-50", "training", 256),
    ("resnet-50", "inference", 1),
    ("bert-base", "fine-tuning", 32),
    ("gpt-2", "training", 8),
    ("llama-3-8b", "training", 4),
    ("stable-diffusion-1.5", "inference", 1),
    ("vit-b-16", "inference", 64),
]
GPU_KEYS = [
    (None, True, None),
    (108, True, 16.0),
    (132, True, 8.0),
    (46, False, 2.0),
    (1, True, None),
]


def _prepare_scalar(
    ops: Iterable[Op],
    fuse: Iterable[str] = (),
    sms: int | None = None,
    tensor_cores: bool = True,
    balance: float | None = None,
) -> kernels.OpArrays:
    """``prepare`` op by op: the definition ``arrays_of`` computes as arrays (its tests hold
    the two equal)."""
    fused = set(fuse)
    kept = [o for o in ops if not (o.role and o.role in fused)]
    by_class: dict[int, list[tuple[float, float, float]]] = {}
    for o in kept:
        work = o.flops / kernels.shape_efficiency(o, sms, tensor_cores, balance) if o.flops else 0.0
        by = o.bytes
        intensity = work / by if by > 0 else math.inf
        by_class.setdefault(kernels.CLASS_INDEX[o.klass], []).append(
            (intensity, o.count * by, o.count * work)
        )
    columns: list[kernels.ClassColumns] = []
    for index, rows in sorted(by_class.items()):
        rows.sort()
        below, above = [0.0], [0.0]
        for _, b, _w in rows:
            below.append(below[-1] + b)
        for _, _b, w in reversed(rows):
            above.append(above[-1] + w)
        columns.append(
            kernels.ClassColumns(
                index, tuple(r[0] for r in rows), tuple(below), tuple(reversed(above))
            )
        )
    return kernels.OpArrays(
        classes=tuple(columns),
        kernels=math.fsum(o.count for o in kept),
        flops=math.fsum(o.count * o.flops for o in kept),
    )


def _ops(preset: str, task: str, batch: int) -> list[Op]:
    ops = preset_step_ops(preset, task, batch)
    if not ops:
        pytest.skip(f"{preset} has no operator table")
    return ops


@pytest.mark.parametrize(("preset", "task", "batch"), JOBS)
def test_the_columns_are_the_op_by_op_columns(preset: str, task: str, batch: int) -> None:
    ops = _ops(preset, task, batch)
    roles = sorted({o.role for o in ops if o.role})
    for fuse in ((), tuple(roles), tuple(roles[: len(roles) // 2])):
        cols = kernels.op_columns(ops, fuse)
        for sms, tensor_cores, balance in GPU_KEYS:
            want = _prepare_scalar(ops, fuse, sms, tensor_cores, balance)
            got = kernels.arrays_of(cols, sms, tensor_cores, balance)
            assert got == want, (preset, fuse, sms)
            assert kernels.prepare(ops, fuse, sms, tensor_cores, balance) == want
            # the step priced from them is the same too (a class's time is read at a bisection)
            rates = tuple(1e14 * (i + 1) for i in range(len(kernels.CLASSES)))
            assert kernels.step_time(got, rates, 2e12, 4e-6) == kernels.step_time(
                want, rates, 2e12, 4e-6
            )


def _op(
    name: str, klass: str, flops: float, read: float, count: float = 1.0, mnk: float = 0.0
) -> Op:
    kind = "gemm" if klass == GEMM else "elementwise"
    return Op(kind, name, klass, count, flops, read, 0.0, m=mnk, n=mnk / 2 or 0.0, k=4096.0)


def test_edges_ties_no_bytes_no_flops_and_an_empty_step() -> None:
    """Ops that tie on intensity (sorted then by bytes, then work, as the tuples sort), ops
    without bytes (infinite intensity), without FLOPs (no shape priced), a fused role, and a
    step with no op at all."""
    ops = [
        _op("a", GEMM, 2e9, 1e6, 3.0, 512.0),
        _op("b", GEMM, 2e9, 1e6, 1.0, 512.0),  # ties a, fewer runs
        _op("c", GEMM, 4e9, 2e6, 2.0, 1024.0),
        _op("d", GEMM, 1e9, 0.0, 1.0, 64.0),  # no bytes
        _op("e", MEMORY, 0.0, 5e5, 4.0),
        _op("f", MEMORY, 1e6, 5e5, 1.0),
        Op("elementwise", "g", MEMORY, 2.0, 0.0, 1e5, 1e5, role="bias"),
    ]
    for fuse in ((), ("bias",)):
        for sms, tensor_cores, balance in GPU_KEYS:
            want = _prepare_scalar(ops, fuse, sms, tensor_cores, balance)
            assert kernels.prepare(ops, fuse, sms, tensor_cores, balance) == want
    assert kernels.prepare([], (), 108) == _prepare_scalar([], (), 108)
    # the definition itself: "a" and "b" tie on intensity, so "b" (fewer bytes) comes first
    gemm = _prepare_scalar(ops, (), 108).classes[0]
    i = next(
        j for j in range(len(gemm.intensity) - 1) if gemm.intensity[j] == gemm.intensity[j + 1]
    )
    below = gemm.bytes_below
    assert below[i + 1] - below[i] == 1e6 and below[i + 2] - below[i + 1] == 3e6
