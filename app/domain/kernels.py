"""Operator → time on one GPU: a roofline per operator with an efficiency curve per kernel class.

    t(op) = max(FLOPs ÷ (rate[class] × e(shape)), bytes ÷ (bandwidth × e_mem)) + launch

``rate[class]`` is the GPU's peak at the job's datapath times the vendor prior for a good GEMM
(``perf.prior_compute_efficiency``: cuBLAS/MAMF best-shape figures) times the class's factor
below; ``e(shape)`` is the share of the GPU a kernel of that shape keeps busy: output tiles over
the SMs, a whole wave at a time (wave quantisation). Skinny GEMMs (decode, small batches) need
no curve of their own: their bytes outweigh their FLOPs and the roofline makes them memory
bound. Constants and sources: docs/methodology.md §5.8.

The operator list is the same for every GPU of a job, so ``prepare`` sorts it once per kernel
class by intensity with running sums, and ``step_time`` prices it on each GPU with one
bisection per class (an op is compute-bound where its intensity reaches rate ÷ bandwidth).

Pure: no I/O.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import accumulate
from operator import attrgetter

import numpy as np
from numpy.typing import NDArray

from app.domain.operators import (
    ATTN_FLASH,
    ATTN_FLASH_BWD,
    CONV,
    CONV_3X3,
    CONV_DW,
    CONV_NCHW,
    GEMM,
    MEMORY,
    Op,
)

CLASSES = (GEMM, ATTN_FLASH, ATTN_FLASH_BWD, CONV, CONV_DW, MEMORY, CONV_3X3, CONV_NCHW)
CLASS_INDEX = {c: i for i, c in enumerate(CLASSES)}

# cuBLAS/CUTLASS 16-bit kernels on Ampere/Hopper tile the output in 128×128 (also 128×256 and
# 256×128) blocks, one block per SM at a time (NVIDIA, Matrix Multiplication Background User's
# Guide: tile and wave quantisation). The smaller tile is the conservative choice for occupancy.
TILE_M = 128
TILE_N = 128
# Each output tile runs a pipelined main loop over K in steps of TILE_K, after a prologue that
# fills STAGES shared-memory buffers and before an epilogue that writes the 128×128 C tile (in
# 16-bit as many bytes as two K steps of A and B: 128·128·2 ÷ ((128+128)·32·2)). CUTLASS's
# default Ampere 16-bit GEMM: 128×128×32 tiles, 3 stages. A tile therefore does useful work
# K ÷ (K + (STAGES + 2) · TILE_K) of its time, relative to the MAMF best shapes (K ≥ 5120).
TILE_K = 32
STAGES = 3
EPILOGUE_STEPS = 2
PIPELINE_K = (STAGES + EPILOGUE_STEPS) * TILE_K
BEST_SHAPE_K = 8192
# Without the GPU's SM count the wave efficiency is taken as its expectation over SM counts:
# tiles ÷ (tiles + SMs/2) for a nominal 108-SM device (A100; current parts carry 28–170 SMs).
# The catalog has no SM-count field yet, so every GPU is priced on this size-only curve.
NOMINAL_SMS = 108
# FlashAttention-2 on A100: forward at up to 73 % of peak, the range's low end 50 % (Dao 2023,
# arXiv 2307.08691, abstract and §4.1); relative to cuBLAS's 86.9 % best-shape GEMM on the same
# part (MAMF table), 0.84 forward. Its backward runs below its forward (the paper's benchmarks);
# the range's low end, 0.50 ÷ 0.869 = 0.58, prices it. These are the prior: a GPU whose kernel
# profile prices attention (own or carried-over points) uses its own forward ratio instead
# (``class_rates``' ``flash_fwd``).
FLASH_FWD_FACTOR = 0.73 / 0.869
FLASH_BWD_FACTOR = 0.50 / 0.869
# Fused attention kernels other than FlashAttention-2, as (forward, backward) slowdowns against
# it on the same GPU. "triton": FlashAttention written in Triton (the flash-attention repo's
# flash_attn_triton.py on the pre-MLIR Triton compiler, which MosaicML's MPT runs as
# attn_impl: triton — llm-foundry llmfoundry/models/layers/flash_attn_triton.py). The
# FlashAttention-2 paper measured it on an A100: FlashAttention-2 is "around 1.3-1.5× faster
# than FlashAttention in Triton in the forward pass and around 2× faster in the backward pass"
# (Dao 2023, arXiv 2307.08691, §4.1, Figs. 5-6); 1.4 is the forward range's midpoint. The same
# ratios stand for Hopper, where neither kernel uses wgmma or TMA (the pre-MLIR compiler
# predates them). "" (the default): FlashAttention-2 (flash-attn 2, PyTorch SDPA's flash path).
# The generation before it — FlashAttention (v1) and the CUTLASS memory-efficient kernel that
# xformers and PyTorch's SDPA "efficient" backend run — reaches 25-40 % of the A100's peak where
# FlashAttention-2 reaches 50-73 % ("around 2x", both from Dao 2023's abstract; PyTorch 2.2's
# release notes: SDPA "now supports FlashAttention-2, yielding around 2x speedups compared to
# previous versions"). A first-generation kernel runs at the top of its range over the top of
# FlashAttention-2's: 0.40 / 0.73 of the FlashAttention-2 rate, forward and backward alike.
FLASH1_RATIO = 0.40 / 0.73
# "megatron-softmax": no fused attention kernel at all — Megatron-LM before Transformer Engine
# and FlashAttention (its 2022 releases, Korthikanti et al. 2022's runs): two batched GEMMs around
# the whole score matrix, Megatron's fused scale-mask-softmax and a dropout pass over it
# (operators.attention's ``fused_softmax`` path); priced as those ops, so no slowdown entry.
MEGATRON_SOFTMAX = "megatron-softmax"
ATTENTION_KERNEL_SLOWDOWN: dict[str, tuple[float, float]] = {
    "triton": (1.4, 2.0),
    "flash1": (1 / FLASH1_RATIO, 1 / FLASH1_RATIO),
}
# FlashAttention-2 compiles its kernels for head dims in steps of 32 (hdim32, 64, 96, 128, 160,
# 192, 224, 256: csrc/flash_attn/src/flash_fwd_hdim*.cu, and the dispatcher rounds a head dim up
# to the next one); a head dim in between runs the next kernel up, its matmuls padded: Stable
# Diffusion 1.5's 40-wide heads run the 64 kernel and do 40/64 of its tensor work usefully.
HEAD_DIM_STEP = 32
# The online softmax between a fused attention kernel's two matmuls costs about four vector
# instructions per score (scale-and-subtract the running max, exp2, max, running sum), 8 FLOPs of
# the FP32 peak (an FMA counts two), where the matmuls cost 4·d tensor FLOPs per score (Dao 2023,
# arXiv 2307.08691, §3.1). The attention rates (FLASH_FWD_FACTOR, a profile's best-shape
# figure) are the papers' headline figures, at d = 128 (``softmax_fill``).
SOFTMAX_FLOPS = 8.0
BEST_HEAD_DIM = 128
# Tensor-core convolution kernels consume input channels in groups of 8 (16-bit NHWC: cuDNN pads
# C to a multiple of 8); a 3-channel stem fills 3/8 of each K step. A convolution on the CUDA
# cores (FP32 before Ampere: cuDNN's NCHW FP32 kernels, no MMA fragment to fill) reads its C as
# it is: ``tensor_cores=False`` prices it without the padding.
CHANNEL_ALIGN = 8


def gemm_tiles(m: float, n: float, batch: float = 1.0) -> float:
    return math.ceil(m / TILE_M) * math.ceil(n / TILE_N) * batch


def tile_fill(m: float, n: float) -> float:
    """Tile quantisation: the share of the 128×128 output tiles that holds real outputs (a
    64-wide layer leaves half of each tile idle; NVIDIA's Matrix Multiplication guide)."""
    if m <= 0 or n <= 0:
        return 1.0
    return (m * n) / (math.ceil(m / TILE_M) * TILE_M * math.ceil(n / TILE_N) * TILE_N)


def wave_fill(tiles: float, sms: int | None) -> float:
    """Share of the SMs busy over a kernel's waves: tiles ÷ (waves × SMs) with waves =
    ⌈tiles ÷ SMs⌉; without an SM count, the size-only expectation tiles ÷ (tiles + 54)."""
    if tiles <= 0:
        return 1.0
    if sms:
        waves = math.ceil(tiles / sms)
        return tiles / (waves * sms)
    return min(1.0, tiles / NOMINAL_SMS, tiles / (tiles + NOMINAL_SMS / 2))


def k_efficiency(k: float) -> float:
    """The share of a tile's time its main loop does useful work, relative to a best shape."""
    best = BEST_SHAPE_K / (BEST_SHAPE_K + PIPELINE_K)
    return k / (k + PIPELINE_K) / best if k > 0 else 1.0


# Split-K: when a GEMM's output has too few tiles to fill the GPU but a long reduction (the
# weight gradient of a layer over a large batch: m × n small, k = batch × positions), cuBLAS and
# cuDNN split K over several blocks and add the partial sums. The library picks the split that
# runs fastest; the curve does the same over 1, 2, 4, … MAX_SPLIT_K (the partial sums' extra
# traffic, m × n per split, is small where splitting pays and is not counted).
MAX_SPLIT_K = 64


def shape_efficiency(
    op: Op, sms: int | None = None, tensor_cores: bool = True, balance: float | None = None
) -> float:
    """e(shape) for one op: the wave fill of its output tiles times its main loop's share of
    each tile's time, at the best split of K; for a convolution on tensor cores also the share
    of each tensor-core K step its input channels fill; for an attention forward the softmax's
    share at its head dim against the headline's (``softmax_fill``; ``balance`` the GPU's
    attention matmuls' rate ÷ its FP32 peak, llm_step.softmax_balance; None: not priced)."""
    if op.klass in (MEMORY, CONV_DW):
        return 1.0  # direct CUDA-core kernels: no tensor-core tile to fill
    return _shape_efficiency(
        op.klass, op.m, op.n, op.k, op.batch, op.in_channels, sms, tensor_cores, balance
    )


@lru_cache(maxsize=1 << 16)  # a pure function of the shape: job variants repeat their shapes
def _shape_efficiency(
    klass: str,
    m: float,
    n: float,
    k: float,
    batch: float,
    in_channels: float,
    sms: int | None,
    tensor_cores: bool = True,
    balance: float | None = None,
) -> float:
    if klass in (ATTN_FLASH, ATTN_FLASH_BWD):
        # one thread block per 128 query rows per (sequence, head); its loop runs over the keys
        e = wave_fill(math.ceil(m / TILE_M) * batch, sms) * k_efficiency(n) * head_dim_fill(k)
        if klass == ATTN_FLASH:
            e *= softmax_fill(k, balance)
    else:
        tiles = gemm_tiles(m, n, batch)
        e, split = 0.0, 1
        while split <= MAX_SPLIT_K and (split == 1 or k / split >= TILE_K):
            e = max(e, wave_fill(tiles * split, sms) * k_efficiency(k / split))
            split *= 2
        e *= tile_fill(m, n)
    if tensor_cores and klass in (CONV, CONV_3X3) and 0 < in_channels < CHANNEL_ALIGN:
        e *= in_channels / CHANNEL_ALIGN
    return e


# A tensor-core op's shape as ``_shape_efficiency`` reads it: class, m, n, k, batch, input
# channels
Shape = tuple[str, float, float, float, float, float]
# the splits of K ``_shape_efficiency`` tries: 1, 2, 4, … MAX_SPLIT_K
_SPLIT_ROW = np.array([2.0**i for i in range(MAX_SPLIT_K.bit_length())])


@dataclass(frozen=True, slots=True)
class ShapeColumns:
    """Tiled shapes as columns of the factors of ``_shape_efficiency`` that no GPU property
    changes, so that ``column_efficiencies`` prices all of them on a GPU in a few array
    operations (a step's shapes are priced on every SM count of the catalog; one call per shape
    was most of a CNN request). Row i, column j: split ``_SPLIT_ROW[j]`` of shape i (an
    attention shape has split 1 only). Each row depends on its shape alone
    (``take_shapes``)."""

    tiles: NDArray[np.float64]  # (shapes, splits): the blocks a split launches (1 where none)
    idle: NDArray[np.bool_]  # (shapes, splits): no block at all (wave fill 1)
    loop: NDArray[np.float64]  # (shapes, splits): k_efficiency at the split; 0: not tried
    fill: NDArray[np.float64]  # tile fill; for attention the head-dim fill
    head_dim: NDArray[np.float64]  # an attention forward's (softmax_fill), 0 for the others
    narrow: NDArray[np.float64]  # a padded tensor-core convolution's channels ÷ CHANNEL_ALIGN, 1
    any_idle: bool
    reads_balance: bool  # some head dim: the GPU's balance sets a softmax's share
    reads_tensor_cores: bool  # some padded convolution


def _shape_rows(
    tiles: NDArray[np.float64],
    loop: NDArray[np.float64],
    fill: NDArray[np.float64],
    head_dim: NDArray[np.float64],
    narrow: NDArray[np.float64],
) -> ShapeColumns:
    idle = tiles <= 0
    return ShapeColumns(
        tiles=np.where(idle, 1.0, tiles),
        idle=idle,
        loop=loop,
        fill=fill,
        head_dim=head_dim,
        narrow=narrow,
        any_idle=bool(idle.any()),
        reads_balance=bool((head_dim > 0).any()),
        reads_tensor_cores=bool((narrow != 1.0).any()),
    )


def shape_columns(shapes: Iterable[Shape]) -> ShapeColumns:
    """``shapes`` as ``ShapeColumns``: ``_shape_efficiency``'s scalar steps on arrays, the same
    operations in its order (``gemm_tiles``, ``k_efficiency``, ``tile_fill``, ...)."""
    rows = list(shapes)
    klass = np.array([r[0] for r in rows], dtype=object)
    m, n, k, batch, channels = (
        np.array([r[i] for r in rows], dtype=np.float64).reshape(-1) for i in range(1, 6)
    )
    attention = (klass == ATTN_FLASH) | (klass == ATTN_FLASH_BWD)
    row_m, row_n = np.ceil(m / TILE_M), np.ceil(n / TILE_N)
    # an attention kernel: one block per TILE_M query rows per (sequence, head)
    blocks = np.where(attention, row_m * batch, row_m * row_n * batch)
    sliced = k[:, None] / _SPLIT_ROW
    # the loop stops at the first split whose K slice is shorter than a K step
    tried = np.logical_and.accumulate((_SPLIT_ROW == 1) | (sliced >= TILE_K), axis=1)
    loop = np.where(tried, _k_efficiencies(sliced), 0.0)
    loop[attention] = 0.0
    loop[attention, 0] = _k_efficiencies(n[attention])  # its loop runs over the keys
    area = row_m * TILE_M * row_n * TILE_N
    tile = np.where((m <= 0) | (n <= 0), 1.0, m * n / np.where(area > 0, area, 1.0))
    padded = np.ceil(k / HEAD_DIM_STEP) * HEAD_DIM_STEP
    head = np.where(k > 0, k / np.where(padded > 0, padded, 1.0), 1.0)
    conv = (klass == CONV) | (klass == CONV_3X3)
    narrow = conv & (channels > 0) & (channels < CHANNEL_ALIGN)
    return _shape_rows(
        blocks[:, None] * _SPLIT_ROW,
        loop,
        np.where(attention, head, tile),
        np.where(klass == ATTN_FLASH, k, 0.0),
        np.where(narrow, channels / CHANNEL_ALIGN, 1.0),
    )


def take_shapes(cols: ShapeColumns, rows: NDArray[np.intp]) -> ShapeColumns:
    """``cols``' rows ``rows``, in that order: ``shape_columns`` of those shapes."""
    return _shape_rows(
        np.where(cols.idle[rows], 0.0, cols.tiles[rows]),
        cols.loop[rows],
        cols.fill[rows],
        cols.head_dim[rows],
        cols.narrow[rows],
    )


def _softmax_fills(head_dim: NDArray[np.float64], balance: float) -> NDArray[np.float64]:
    """``softmax_fill`` of each head dim (1 where there is none)."""
    padded = np.ceil(head_dim / HEAD_DIM_STEP) * HEAD_DIM_STEP
    vector = balance * SOFTMAX_FLOPS / 4.0
    fills = (1.0 + vector / BEST_HEAD_DIM) / (1.0 + vector / np.where(padded > 0, padded, 1.0))
    return np.where(head_dim > 0, fills, 1.0)


def _k_efficiencies(k: NDArray[np.float64]) -> NDArray[np.float64]:
    """``k_efficiency`` of each of ``k``."""
    best = BEST_SHAPE_K / (BEST_SHAPE_K + PIPELINE_K)
    return np.where(k > 0, k / (k + PIPELINE_K) / best, 1.0)


def column_efficiencies(
    cols: ShapeColumns,
    sms: int | None = None,
    tensor_cores: bool = True,
    balance: float | None = None,
) -> NDArray[np.float64]:
    """``_shape_efficiency`` of each of ``cols``' shapes on one GPU, as an array: the same
    operations on the same doubles in the same order (wave_fill, then the best split, the
    fill, the softmax's or the channels' share), so the same values to the last bit."""
    t = cols.tiles
    if sms:
        wave = t / (np.ceil(t / sms) * sms)
    else:
        wave = np.minimum(np.minimum(1.0, t / NOMINAL_SMS), t / (t + NOMINAL_SMS / 2))
    if cols.any_idle:
        wave[cols.idle] = 1.0
    e: NDArray[np.float64] = (wave * cols.loop).max(axis=1) * cols.fill
    # the softmax's and the channels' shares are 1 on the other rows: × 1 changes no double
    if balance and cols.reads_balance:
        e = e * _softmax_fills(cols.head_dim, balance)
    if tensor_cores and cols.reads_tensor_cores:
        e = e * cols.narrow
    return e


def gpu_key(
    cols: ShapeColumns, sms: int | None, tensor_cores: bool, balance: float | None
) -> tuple[int | None, bool, float | None]:
    """The GPU properties ``column_efficiencies`` of ``cols`` read: the SM count always, whether the
    convolutions run on tensor cores only where one pads its input channels, the balance only
    where an attention forward prices its softmax (the GPUs of a catalog share SM counts far
    more often than all three)."""
    return (
        sms,
        tensor_cores if cols.reads_tensor_cores else True,
        balance if cols.reads_balance else None,
    )


def shape_efficiencies(
    shapes: Iterable[Shape],
    sms: int | None = None,
    tensor_cores: bool = True,
    balance: float | None = None,
) -> NDArray[np.float64]:
    """e(shape) of each (class, m, n, k, batch, input channels) of tiled ops, as an array (no
    MEMORY or CONV_DW op: ``shape_efficiency`` gives those 1)."""
    return column_efficiencies(shape_columns(shapes), sms, tensor_cores, balance)


def head_dim_fill(head_dim: float) -> float:
    """The share of a fused attention kernel's matmul work a head dim uses: the kernel is built
    for the next multiple of ``HEAD_DIM_STEP`` (1 at 64, 96, 128; 0.625 at 40; 0.83 at 80)."""
    if head_dim <= 0:
        return 1.0
    return head_dim / (math.ceil(head_dim / HEAD_DIM_STEP) * HEAD_DIM_STEP)


def softmax_fill(head_dim: float, balance: float | None) -> float:
    """A fused attention forward's rate at ``head_dim`` ÷ its rate at the headline d = 128, from
    the softmax's vector time beside the matmuls' tensor time: per score 4·d′ tensor FLOPs (d′
    the kernel's padded head dim, ``head_dim_fill``) and SOFTMAX_FLOPS on the CUDA cores, the
    vector work ``balance`` (the attention matmuls' rate ÷ the FP32 peak,
    llm_step.softmax_balance) times slower per FLOP. The share
    kernel_profiles.attention_factor fits profiled ceilings with. A 64-wide kernel on an A100
    (balance 16) keeps 0.83 of the d = 128 rate, on an RTX 4090 (balance 2) 0.97; 1 where the
    balance is unknown."""
    if not balance or head_dim <= 0:
        return 1.0
    padded = math.ceil(head_dim / HEAD_DIM_STEP) * HEAD_DIM_STEP
    vector = balance * SOFTMAX_FLOPS / 4.0
    return (1.0 + vector / BEST_HEAD_DIM) / (1.0 + vector / padded)


def op_time(
    op: Op,
    rates: dict[str, float],
    bandwidth: float,
    launch_s: float,
    sms: int | None = None,
    balance: float | None = None,
    tensor_cores: bool = True,
) -> float:
    """Seconds for one run of ``op``: ``rates`` are FLOP/s per kernel class before the shape
    efficiency, ``bandwidth`` achieved bytes/s; ``tensor_cores`` as ``prepare`` takes it (a
    convolution on CUDA cores pads no narrow input to a tensor-core K step)."""
    e = shape_efficiency(op, sms, tensor_cores, balance)
    compute = op.flops / (rates[op.klass] * e) if op.flops else 0.0
    return max(compute, op.bytes / bandwidth) + launch_s


@dataclass(frozen=True, slots=True)
class ClassColumns:
    """One kernel class's ops sorted by intensity (FLOPs ÷ e(shape) per byte), with running
    sums: on a GPU whose rate ÷ bandwidth is r, the ops at intensity ≥ r are bound by their
    FLOPs and the rest by their bytes, so the class's time is two look-ups after a bisection."""

    index: int  # into CLASSES
    intensity: tuple[float, ...]  # ascending
    bytes_below: tuple[float, ...]  # [j] = Σ count × bytes over ops [0, j)
    work_above: tuple[float, ...]  # [j] = Σ count × work over ops [j, n)


@dataclass(frozen=True, slots=True)
class OpArrays:
    """A step's ops, GPU-independent, after the runtime's fusion removed what it folds away:
    per kernel class, ``ClassColumns``; ``kernels`` launches per step."""

    classes: tuple[ClassColumns, ...]
    kernels: float
    flops: float  # Σ count × FLOPs (for reporting)


@dataclass(frozen=True, slots=True)
class OpColumns:
    """A step's ops after the runtime's fusion, as columns: what ``arrays_of`` prices per GPU
    (its SM count, tensor cores and balance) without going over the ops again. The shapes
    whose efficiency a GPU sets are listed once each (a network repeats its layers' shapes)."""

    klass: NDArray[np.intp]  # index into CLASSES
    flops: NDArray[np.float64]  # per run
    bytes: NDArray[np.float64]  # per run, read and written
    count: NDArray[np.float64]
    # the distinct shapes of the ops with FLOPs on a tensor-core-tiled class, the ops that
    # have one and each one's index into them (the others: efficiency 1)
    shapes: tuple[Shape, ...]
    shape_cols: ShapeColumns  # the same shapes, as ``column_efficiencies`` prices them
    shaped: NDArray[np.intp]
    shape_of: NDArray[np.intp]
    has_flops: NDArray[np.intp]  # the ops with FLOPs
    has_bytes: NDArray[np.intp]  # the ops with bytes (the others: infinite intensity)
    kernels: float  # Σ count
    total_flops: float  # Σ count × FLOPs
    rows: NDArray[np.intp]  # each one's index into the ops it was built from (``reclassed``)


_OP_COLUMNS = attrgetter(
    "klass", "flops", "bytes_read", "bytes_written", "count", "role", "m", "n", "k", "batch",
    "in_channels",
)  # fmt: skip
# classes whose kernels run on the CUDA cores directly: no tile to fill (``shape_efficiency``)
_UNTILED = frozenset({MEMORY, CONV_DW})


def op_columns(ops: Iterable[Op], fuse: Iterable[str] = ()) -> OpColumns:
    """``ops`` as ``OpColumns``, leaving out those whose role is in ``fuse`` (``prepare``)."""
    fused = set(fuse)
    kept = [(i, r) for i, r in enumerate(map(_OP_COLUMNS, ops)) if not (r[5] and r[5] in fused)]
    rows = [r for _, r in kept]
    index: dict[Shape, int] = {}
    shaped, shape_of = [], []
    for i, r in enumerate(rows):
        if r[1] and r[0] not in _UNTILED:
            shaped.append(i)
            shape_of.append(index.setdefault((r[0], *r[6:]), len(index)))
    klass = [r[0] for r in rows]
    flops = [r[1] for r in rows]
    count = [r[4] for r in rows]
    f = np.array(flops, dtype=np.float64)
    by = np.array([r[2] for r in rows], dtype=np.float64) + np.array(
        [r[3] for r in rows], dtype=np.float64
    )
    n = np.array(count, dtype=np.float64)
    return OpColumns(
        klass=np.array([CLASS_INDEX[k] for k in klass], dtype=np.intp),
        flops=f,
        bytes=by,
        count=n,
        shapes=tuple(index),
        shape_cols=shape_columns(index),
        shaped=np.array(shaped, dtype=np.intp),
        shape_of=np.array(shape_of, dtype=np.intp),
        has_flops=np.flatnonzero(f != 0.0),
        has_bytes=np.flatnonzero(by > 0.0),
        kernels=math.fsum(count),
        total_flops=math.fsum(c * x for c, x in zip(count, flops, strict=True)),
        rows=np.array([i for i, _ in kept], dtype=np.intp),
    )


@dataclass(frozen=True, slots=True)
class Twins:
    """An ``OpColumns``' shapes, then the same shapes in another class: where ``reclassed``
    reads the shapes of ops it moves to that class."""

    shapes: tuple[Shape, ...]
    first: NDArray[np.intp]  # each one's first equal among them (a twin may be a shape of cols)
    cols: ShapeColumns


def twinned(cols: OpColumns, klass: str) -> Twins:
    """``cols``' shapes, then the same shapes in class ``klass``."""
    shapes = (*cols.shapes, *((klass, *sh[1:]) for sh in cols.shapes))
    seen: dict[Shape, int] = {}
    first = [seen.setdefault(sh, i) for i, sh in enumerate(shapes)]
    return Twins(shapes, np.array(first, dtype=np.intp), shape_columns(shapes))


def reclassed(
    cols: OpColumns,
    moved: NDArray[np.bool_],
    dropped: NDArray[np.bool_],
    klass: str,
    twins: Twins,
) -> OpColumns:
    """``op_columns`` of the ops ``cols`` was built from, under its fusion, with those
    ``moved`` in class ``klass`` and those ``dropped`` left out (``moved`` and ``dropped``:
    masks over those ops), from ``cols`` without going over the ops again: each op keeps its
    row, its shape is read from ``twins`` (``twinned(cols, klass)``). A moved op keeps its
    tile: ``klass`` is tiled, and an op with FLOPs moves from a tiled class."""
    assert klass not in _UNTILED
    keep = ~dropped[cols.rows]
    to = moved[cols.rows]
    shape_at = np.full(len(cols.rows), -1, dtype=np.intp)
    shape_at[cols.shaped] = cols.shape_of
    flops = cols.flops[keep]
    assert not (to[keep] & (shape_at[keep] < 0) & (flops != 0.0)).any()
    # each kept shaped op's shape among the twins (a moved op's: its twin), the first of
    # equal ones; numbered as ``op_columns`` numbers them, in order of first appearance
    twin_at = twins.first[np.where(to, shape_at + len(cols.shapes), shape_at)][keep]
    shaped = np.flatnonzero(shape_at[keep] >= 0)
    distinct, first, inverse = np.unique(twin_at[shaped], return_index=True, return_inverse=True)
    order = np.argsort(first)
    number = np.empty(len(order), dtype=np.intp)
    number[order] = np.arange(len(order))
    source = distinct[order]
    by, count = cols.bytes[keep], cols.count[keep]
    # each kept op's index once the dropped ones are gone
    position = np.cumsum(~dropped) - 1
    return OpColumns(
        klass=np.where(to, CLASS_INDEX[klass], cols.klass)[keep],
        flops=flops,
        bytes=by,
        count=count,
        shapes=tuple(twins.shapes[i] for i in source.tolist()),
        shape_cols=take_shapes(twins.cols, source),
        shaped=shaped,
        shape_of=number[inverse.reshape(-1)],
        has_flops=np.flatnonzero(flops != 0.0),
        has_bytes=np.flatnonzero(by > 0.0),
        kernels=math.fsum(count.tolist()),
        total_flops=math.fsum((count * flops).tolist()),
        rows=position[cols.rows[keep]],
    )


def arrays_of(
    cols: OpColumns,
    sms: int | None = None,
    tensor_cores: bool = True,
    balance: float | None = None,
) -> OpArrays:
    """``prepare``'s columns for one GPU from the step's ``OpColumns``: each op's work (FLOPs
    ÷ e(shape)) and intensity as arrays, sorted by class and intensity, then each class's
    running sums (sequential: the op-by-op definition in tests/domain/test_r30sq_op_columns.py
    adds them so)."""
    size = len(cols.flops)
    e = np.ones(size)
    if cols.shapes:
        each = column_efficiencies(cols.shape_cols, sms, tensor_cores, balance)
        e[cols.shaped] = each[cols.shape_of]
    work = np.zeros(size)
    has = cols.has_flops
    work[has] = cols.flops[has] / e[has]
    pos = cols.has_bytes
    intensity = np.full(size, math.inf)
    intensity[pos] = work[pos] / cols.bytes[pos]
    below_each, above_each = cols.count * cols.bytes, cols.count * work
    # by class, then as ``sorted`` orders (intensity, bytes, work) tuples
    order = np.lexsort((above_each, below_each, intensity, cols.klass))
    klass = cols.klass[order].tolist()
    inten = intensity[order].tolist()
    below_l, above_l = below_each[order].tolist(), above_each[order].tolist()
    columns: list[ClassColumns] = []
    a = 0
    while a < size:
        b = bisect_right(klass, klass[a], a)
        above = list(accumulate(reversed(above_l[a:b])))
        above.reverse()
        columns.append(
            ClassColumns(
                klass[a], tuple(inten[a:b]), (0.0, *accumulate(below_l[a:b])), (*above, 0.0)
            )
        )
        a = b
    return OpArrays(classes=tuple(columns), kernels=cols.kernels, flops=cols.total_flops)


def prepare(
    ops: Iterable[Op],
    fuse: Iterable[str] = (),
    sms: int | None = None,
    tensor_cores: bool = True,
    balance: float | None = None,
) -> OpArrays:
    """Columns for ``step_time``. Ops whose role is in ``fuse`` run inside a neighbouring
    kernel's epilogue or a fused chain (TensorRT, Inductor): no bytes of their own, no launch.
    ``tensor_cores``: whether the convolutions run on tensor cores; ``balance``: the GPU's
    tensor-to-vector balance for the attention softmax (``shape_efficiency``)."""
    return arrays_of(op_columns(ops, fuse), sms, tensor_cores, balance)


@dataclass(frozen=True, slots=True)
class StepTime:
    total: float
    compute: float  # time of the ops bound by their FLOPs
    memory: float  # time of the ops bound by their bytes
    launch: float


def step_time(
    arrs: OpArrays, rates: tuple[float, ...], bandwidth: float, launch_s: float
) -> StepTime:
    """Σ count × (max(work ÷ rate[class], bytes ÷ bandwidth) + launch) over the step's ops;
    ``rates`` holds FLOP/s per class in ``CLASSES`` order."""
    compute = memory = 0.0
    for col in arrs.classes:
        rate = rates[col.index]
        j = bisect_left(col.intensity, rate / bandwidth)
        compute += col.work_above[j] / rate
        memory += col.bytes_below[j] / bandwidth
    launch = arrs.kernels * launch_s
    return StepTime(compute + memory + launch, compute, memory, launch)


def issue_order(
    ops: Iterable[Op], first_roles: Iterable[str] = (), inside_roles: Iterable[str] = ()
) -> list[tuple[Op, ...]]:
    """The step's kernels in the order a framework issues them, as runs of ops: a shipped
    table lists a network's ops in forward order, a repeated block (ResNeXt-101's 22
    ``layer3.[1-22]`` bottlenecks) as consecutive ops of one count, which run block after
    block; so each run of consecutive ops of one count is repeated that many times, in turn.
    Ops whose role is in ``first_roles`` (the weight casts an AMP graph rewrite adds: their
    inputs, the variables, are ready when the step starts) come first, one run each; ops whose
    role is in ``inside_roles`` (cuDNN's NCHW layout transforms, listed after the table, named
    ``<conv>.nchw``) run right after the op they are named after."""
    firsts, inside = set(first_roles), set(inside_roles)
    kept = list(ops)
    out: list[tuple[Op, ...]] = [(o,) * max(1, round(o.count)) for o in kept if o.role in firsts]
    attached: dict[str, list[Op]] = {}
    for o in kept:
        if o.role in inside:
            attached.setdefault(o.name.rsplit(".", 1)[0], []).append(o)
    rest: list[Op] = []
    for o in kept:
        if o.role not in firsts and o.role not in inside:
            rest.append(o)
            rest.extend(replace(a, count=o.count) for a in attached.pop(o.name, ()))
    rest.extend(a for group in attached.values() for a in group)  # no op of that name
    i = 0
    while i < len(rest):
        j = i + 1
        while j < len(rest) and rest[j].count == rest[i].count:
            j += 1
        out.append(tuple(rest[i:j]) * max(1, round(rest[i].count)))
        i = j
    return out


def fifo_finish(kernels: Iterable[tuple[float, float]]) -> float:
    """When the last of a step's kernels ends, given each kernel's (host seconds to issue it,
    GPU seconds to run it) in issue order: the host issues kernels one after another into one
    stream; a kernel starts when it is issued and the one before it has ended. With H_k the
    moment kernel k is issued, the step ends at max over k of H_k + the GPU time of kernels k
    onwards — at least max(Σ host, Σ GPU), and more where host-heavy kernels come before the
    GPU-heavy ones (the GPU idles until they are issued) and after the last issue (its tail)."""
    issued = ended = 0.0
    for host_s, gpu_s in kernels:
        issued += host_s
        ended = (ended if ended > issued else issued) + gpu_s
    return ended


def class_rates(
    gemm_rate: float,
    vector_rate: float | None,
    flash_fwd: float | None = None,
    flash_cap: float | None = None,
    attention_kernel: str = "",
    winograd: float | None = None,
    sustained: float = 1.0,
    conv_share: float = 1.0,
    accumulate: float = 1.0,
    attention_accumulate: float = 1.0,
) -> tuple[float, ...]:
    """FLOP/s per class from the GPU's GEMM rate (peak × prior at the job's datapath) and its
    non-tensor rate (depthwise convolutions run on the CUDA cores; element-wise FLOPs too).
    ``flash_fwd``: the attention forward's rate ÷ the GEMM rate where the GPU's kernel
    profile gives it (own or carried-over attention points); the backward keeps the paper's
    backward-to-forward ratio (0.50 ÷ 0.73) under it. ``flash_cap``: the most FLOP/s the
    flash-attention forward reaches on this architecture (a kernel that cannot use the
    architecture's tensor-core instructions, e.g. FlashAttention-2 on Hopper; the 16-bit rate
    of an fp8 job's attention); the backward keeps its ratio to the forward.
    ``attention_kernel``: a fused attention kernel other than FlashAttention-2 (a key of
    ``ATTENTION_KERNEL_SLOWDOWN``: "triton", or "flash1" — FlashAttention v1 or the
    memory-efficient kernel, ``FLASH1_RATIO`` of the FlashAttention-2 rate), slower than it by
    that entry's forward and backward ratios.
    ``winograd``: where the runtime autotunes its cuDNN convolutions, the multiplies a Winograd
    algorithm saves on a 3×3 stride-1 convolution, which runs on the CUDA cores: that class runs
    at the faster of the implicit GEMM (``gemm_rate``) and the Winograd kernel (``winograd`` × the
    CUDA-core rate), the one cuDNN's autotuner would time fastest.
    ``sustained``: the share of ``gemm_rate`` the GPU's GEMMs hold over a long run at its power
    limit (a training step: perf._sustained_shares; 1 elsewhere). It slows the tensor-core GEMM
    and convolution classes, the kernels the sustained figure measured; the attention kernels
    keep their rates (on Hopper FlashAttention-2 and the Triton kernel run at a third of peak
    or less, a load the figure did not measure).
    ``conv_share``: the tensor-core convolutions' rate ÷ the GEMM rate where the runtime's
    convolution kernels cannot issue at the architecture's full tensor rate (implicit-GEMM
    convolutions built on Ampere's synchronous mma, run on Hopper, whose dense peak needs
    wgmma: half of it); 1 elsewhere. The Winograd path (CUDA cores) keeps its rate.
    ``accumulate``: how much faster the runtime's GEMMs and tensor-core convolutions run than
    ``gemm_rate`` because they accumulate in FP16 (2 on GeForce parts, whose FP32-accumulate
    rate is half the FP16-accumulate one: llm_step.fp16_accumulate_gain).
    ``attention_accumulate``: the same gain for the fused attention kernels, where they also
    accumulate in FP16 (TensorRT's fused MHA); 1 where they accumulate in FP32 (FlashAttention,
    PyTorch's SDPA kernels).
    The last class, a convolution on the CUDA cores over NCHW tensors (operators.CONV_NCHW), runs
    at ``vector_rate`` (the GEMM rate where it is unknown, as the other CUDA-core classes; no op
    is given that class then: perf._autotuned_nchw)."""
    vec = vector_rate if vector_rate else gemm_rate
    fwd = gemm_rate * (flash_fwd if flash_fwd else FLASH_FWD_FACTOR) * attention_accumulate
    if flash_cap is not None and flash_cap < fwd:
        fwd = flash_cap
    bwd = fwd * (FLASH_BWD_FACTOR / FLASH_FWD_FACTOR)
    slow_fwd, slow_bwd = ATTENTION_KERNEL_SLOWDOWN.get(attention_kernel, (1.0, 1.0))
    tensor = gemm_rate * sustained * accumulate
    conv = tensor * conv_share
    conv3 = max(conv, winograd * vector_rate) if winograd and vector_rate else conv
    return (
        tensor,
        fwd / slow_fwd,
        bwd / slow_bwd,
        conv,
        vec,
        vec,
        conv3,
        vec,
    )
