"""kernels.column_efficiencies over kernels.shape_columns (a step's tiled shapes priced on a GPU
as arrays) is kernels._shape_efficiency shape by shape to the last bit: on the shapes of the
operator tables the engine steps and on made-up shapes at the curve's edges (no rows, no K, a
K too short to split, narrow stems, attention heads between kernel widths), at several SM
counts, with and without tensor-core convolutions and a softmax balance. kernels.gpu_key keeps
only the GPU properties those shapes read, so GPUs that share it share the priced columns. And
an autotuned step's columns taken from its step's (perf._moved_job over kernels.reclassed) are
the columns of its ops built afresh, and its ops those the autotuner's definition gives."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import kernels, perf
from app.domain.operators import (
    ATTN_FLASH,
    ATTN_FLASH_BWD,
    CONV,
    CONV_3X3,
    CONV_NCHW,
    GEMM,
    LAYOUT_ROLES,
    Op,
    derive,
)
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency
from tests.support import preset_step_ops

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = [
    (None, True, None),
    (108, True, 16.0),
    (132, False, 8.0),
    (46, True, 2.0),
    (1, True, None),
    (7, False, None),
]
EDGES: list[kernels.Shape] = [
    (GEMM, 0.0, 64.0, 64.0, 1.0, 0.0),  # no rows: no tile
    (GEMM, 64.0, 64.0, 0.0, 1.0, 0.0),  # no K
    (GEMM, 1.0, 1.0, 1e7, 1.0, 0.0),  # one tile, a long K: every split
    (GEMM, 4096.0, 4096.0, 63.0, 1.0, 0.0),  # K too short to split
    (GEMM, 300.0, 129.0, 4096.0, 12.0, 0.0),
    (CONV, 802816.0, 64.0, 147.0, 1.0, 3.0),  # a 3-channel stem
    (CONV_3X3, 3136.0, 64.0, 576.0, 1.0, 7.0),
    (CONV, 3136.0, 64.0, 576.0, 1.0, 8.0),  # aligned: no padding
    (CONV_NCHW, 802816.0, 64.0, 147.0, 1.0, 3.0),  # CUDA cores: no padding either
    (ATTN_FLASH, 4096.0, 4096.0, 40.0, 32.0, 0.0),
    (ATTN_FLASH, 77.0, 4096.0, 128.0, 8.0, 0.0),
    (ATTN_FLASH_BWD, 4096.0, 4096.0, 80.0, 32.0, 0.0),
    (ATTN_FLASH, 128.0, 0.0, 0.0, 1.0, 0.0),
]


def _ops(preset: str, task: str, batch: int) -> list[Op]:
    return preset_step_ops(preset, task, batch)


def _scalar(shapes: list[kernels.Shape], sms: int | None, tc: bool, bal: float | None) -> list:
    return [kernels._shape_efficiency(*sh, sms, tc, bal) for sh in shapes]


@pytest.mark.parametrize(
    ("preset", "task", "batch"),
    [
        ("resnet-50", "training", 256),
        ("resnet-50", "inference", 3),
        ("gpt-2", "training", 8),
        ("stable-diffusion-1.5", "inference", 1),
    ],
)
def test_the_columns_price_each_table_shape_as_the_scalar_curve(
    preset: str, task: str, batch: int
) -> None:
    ops = _ops(preset, task, batch)
    shapes = kernels.op_columns(ops).shapes
    assert shapes
    cols = kernels.shape_columns(shapes)
    for sms, tc, bal in GPUS:
        got = kernels.column_efficiencies(cols, sms, tc, bal).tolist()
        assert got == _scalar(list(shapes), sms, tc, bal), (preset, sms, tc, bal)


def test_the_columns_price_the_edges_as_the_scalar_curve() -> None:
    cols = kernels.shape_columns(EDGES)
    for sms, tc, bal in GPUS:
        got = kernels.column_efficiencies(cols, sms, tc, bal).tolist()
        assert got == _scalar(EDGES, sms, tc, bal), (sms, tc, bal)
    assert kernels.column_efficiencies(kernels.shape_columns([]), 108).shape == (0,)


def test_the_gpu_key_drops_what_the_shapes_do_not_read() -> None:
    gemms = kernels.shape_columns([s for s in EDGES if s[0] == GEMM])
    stems = kernels.shape_columns([s for s in EDGES if s[0] == CONV])
    heads = kernels.shape_columns([s for s in EDGES if s[0] == ATTN_FLASH])
    assert kernels.gpu_key(gemms, 46, False, 2.0) == (46, True, None)
    assert kernels.gpu_key(stems, 46, False, 2.0) == (46, False, None)
    assert kernels.gpu_key(heads, 46, False, 2.0) == (46, True, 2.0)
    # what it drops moves no efficiency
    for cols, (tc, bal) in itertools.product(
        (gemms, stems, heads), itertools.product((True, False), (None, 2.0, 16.0))
    ):
        key = kernels.gpu_key(cols, 46, tc, bal)
        np.testing.assert_array_equal(
            kernels.column_efficiencies(cols, 46, tc, bal),
            kernels.column_efficiencies(cols, *key),
        )


def _same_columns(got: kernels.OpColumns, want: kernels.OpColumns) -> None:
    for name in kernels.OpColumns.__slots__:
        a, b = getattr(got, name), getattr(want, name)
        if isinstance(a, kernels.ShapeColumns):
            for part in kernels.ShapeColumns.__slots__:
                np.testing.assert_array_equal(getattr(a, part), getattr(b, part), err_msg=part)
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=name)
            assert a.dtype == b.dtype, name
        else:
            assert a == b, name


@pytest.mark.parametrize("batch", [1, 24, 256])
def test_an_autotuned_steps_columns_are_its_ops_columns(batch: int) -> None:
    presets = load_presets(DATA)
    work = WorkloadSpec(
        task="inference",
        model=presets["resnet-50"].model,
        precision="fp16",
        batch_size=batch,
        seq_len=1,
        output_tokens=1,
        preset="resnet-50",
        runtime="pytorch",
        efficiency=load_efficiency(DATA),
    )
    gpu = next(g for g in read_gpu_specs(DATA) if g.slug == "rtx-4090")
    on = perf._on_gpu(gpu, work, "pytorch", None, None)
    job = perf._step_job(work, True, on.act_b)
    pairs = job.nchw_pairs
    assert pairs is not None and job.ops is not None
    roles = sorted({o.role for o in job.ops if o.role and o.role not in LAYOUT_ROLES})
    for fuse in ((), tuple(roles), tuple(roles[::2])):
        for won in (np.arange(len(pairs.names)), np.arange(0, len(pairs.names), 3)):
            moved = perf._moved_job(job, pairs, won, fuse)
            names = {pairs.names[i] for i in won.tolist()}
            # the autotuner's definition: its convolutions on the CUDA cores, their
            # transforms gone
            want = [
                derive(o, klass=CONV_NCHW) if o.kind == "conv" and o.name in names else o
                for o in job.ops
                if not (o.role == "layout" and o.name.removesuffix(".nchw") in names)
            ]
            assert list(moved.ops or ()) == want
            assert sum(o.klass == CONV_NCHW for o in want) == len(names)
            _same_columns(moved.columns[fuse], kernels.op_columns(want, fuse))


def _conv(name: str, klass: str, m: float, channels: float = 64.0, role: str = "") -> Op:
    return Op("conv", name, klass, 2.0, 2.0 * m * 64.0 * 576.0, 1e6, 2e6, role=role,
              m=m, n=64.0, k=576.0, in_channels=channels)  # fmt: skip


def test_moved_ops_that_meet_a_shape_already_there_share_it() -> None:
    ops = [
        _conv("a", CONV, 3136.0, 3.0),  # its twin: d's shape
        Op("elementwise", "a.nchw", "memory", 1.0, 0.0, 1e6, 1e6, role="layout"),
        _conv("b", CONV_3X3, 3136.0, 3.0),  # its twin: d's shape too
        Op("elementwise", "relu", "memory", 1.0, 0.0, 1e6, 1e6, role="act"),
        _conv("c", CONV, 784.0),
        _conv("d", CONV_NCHW, 3136.0, 3.0),
        _conv("e", CONV, 784.0, role="act"),
    ]
    for fuse in ((), ("act",)):
        cols = kernels.op_columns(ops, fuse)
        twins = kernels.twinned(cols, CONV_NCHW)
        for moved_names in ({"a"}, {"a", "b"}, {"b", "c"}, {"a", "b", "c", "e"}):
            moved = np.array([o.name in moved_names and o.kind == "conv" for o in ops])
            dropped = np.array([o.name == "a.nchw" and "a" in moved_names for o in ops])
            want = [
                derive(o, klass=CONV_NCHW) if m else o
                for o, m, d in zip(ops, moved, dropped, strict=True)
                if not d
            ]
            got = kernels.reclassed(cols, moved, dropped, CONV_NCHW, twins)
            _same_columns(got, kernels.op_columns(want, fuse))
    assert len(got.shapes) == 2  # (CONV_NCHW, 3136, ...) once, (CONV_NCHW, 784, ...) once
