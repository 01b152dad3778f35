"""Shared pieces for the suites: the run context, the profile, and figure construction."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from app.bench.report import Figure, Unit, check_peak
from app.bench.timing import Stats, Timer, Timing, TimingConfig, summarize
from app.vocab import MEASURED_PRECISIONS


@dataclass(frozen=True)
class ConvLayer:
    name: str
    c: int
    hw: int
    k: int
    kernel: int
    stride: int = 1
    padding: int = 0


@dataclass(frozen=True)
class CnnConfig:
    channels: int = 256
    bottleneck: int = 64
    hw: int = 14


@dataclass(frozen=True)
class TransformerConfig:
    d_model: int = 1024
    heads: int = 16
    ff: int = 4096
    seq: int = 512


Shape3 = tuple[int, int, int]

#: Llama-3-8B's layer GEMMs as (N, K) = (out features, in features): q/o projections,
#: gate/up, down, LM head (hidden 4096, intermediate 14336, vocabulary 128256; the model
#: card's config.json). M is the number of tokens in flight: ≤ 16 in decode, thousands in
#: prefill.
LLAMA3_8B_LAYERS: tuple[tuple[int, int], ...] = (
    (4096, 4096),
    (14336, 4096),
    (4096, 14336),
    (128256, 4096),
)


@dataclass(frozen=True)
class KernelConfig:
    """Sizes of the kernel-class suites for one profile and class of device."""

    gemm_shapes: tuple[Shape3, ...] = ((1024, 1024, 1024),)
    gemm_precisions: tuple[str, ...] = ("fp32",)
    #: (batch, heads, head_dim) and context lengths for prefill (causal) and decode (q = 1)
    attention_bhd: tuple[int, int, int] = (1, 8, 64)
    prefill_contexts: tuple[int, ...] = (256,)
    decode_contexts: tuple[int, ...] = (1024,)
    #: dtype of the attention, element-wise, normalisation and embedding kernels
    dtypes: tuple[str, ...] = ("fp32",)
    elementwise_numel: tuple[int, ...] = (1 << 22,)
    norm_shapes: tuple[tuple[int, int], ...] = ((4096, 1024),)  # (rows, hidden)
    #: (vocabulary, hidden, tokens gathered)
    embedding_shapes: tuple[tuple[int, int, int], ...] = ((32000, 1024, 4096),)
    graph_kernels: int = 100  # kernels per captured CUDA graph
    collective_bytes: tuple[int, ...] = (1 << 20, 1 << 24)


@dataclass(frozen=True)
class Profile:
    """Sizes and budgets of one profile for one class of device (CPU or accelerator)."""

    name: str
    timing: TimingConfig
    global_warmup_s: float
    # matmul
    matmul_reference: tuple[int, int, int]
    matmul_search: tuple[tuple[int, int, int], ...]
    matmul_emulated: tuple[int, int, int]
    matmul_precisions: tuple[str, ...] = MEASURED_PRECISIONS
    matmul_single_thread: bool = False
    # convolution
    conv_batch: int = 64
    conv_layers: tuple[ConvLayer, ...] = ()
    conv_precisions: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16")
    # memory bandwidth
    memory_min_bytes: int = 1 << 30
    memory_llc_multiple: int = 4
    memory_max_fraction: float = 0.25
    # host <-> device
    transfer_sizes: tuple[int, ...] = ()
    transfer_headline: int = 256 << 20
    # batch scaling
    cnn: CnnConfig = field(default_factory=CnnConfig)
    transformer: TransformerConfig = field(default_factory=TransformerConfig)
    batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    batch_precisions: tuple[str, ...] = ("auto",)
    batch_step_cap_s: float = 1.0
    batch_timing: TimingConfig | None = None
    # peak memory
    peak_memory_batches: tuple[int, int] = (8, 32)
    #: cap on one bandwidth array (None: none): the quick profile on a host whose reported
    #: last-level cache is huge (a VM showing a whole socket's L3) would allocate gigabytes
    memory_max_bytes: int | None = None
    # kernel classes
    kernels: KernelConfig = field(default_factory=KernelConfig)
    #: Wall-clock seconds for all suites together, shared out by the runner in proportion to
    #: each suite's weight (unused time carries over). A suite past its share measures what
    #: it must (a reference shape per precision, two points per curve) and skips the rest,
    #: saying so. What a measurement costs grows with the device (autotuning, larger shapes,
    #: slow first calls), so sizes alone cannot bound the run; ``None``: no budget.
    budget_s: float | None = None


ProgressFn = Callable[[str, float], None]


@dataclass
class Context:
    """What every suite receives."""

    device: str
    backend: str
    sync: Callable[[], None]
    profile: Profile
    peaks: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    progress: ProgressFn | None = None
    #: ``time.perf_counter()`` after which the current suite should stop optional work.
    deadline: float | None = None
    timer: Timer = field(init=False)

    def __post_init__(self) -> None:
        self.timer = Timer(sync=self.sync, config=self.profile.timing)

    @property
    def is_accelerator(self) -> bool:
        return self.backend != "cpu"

    @property
    def torch_device(self) -> torch.device:
        return torch.device(self.device)

    def step(self, label: str, fraction: float) -> None:
        """Progress within the current suite (fraction in 0..1)."""
        if self.progress is not None:
            self.progress(label, max(0.0, min(1.0, fraction)))

    def out_of_time(self) -> bool:
        """True once the current suite has spent its share of the profile's budget."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def skip_note(self, what: str) -> None:
        """Record that optional measurements were skipped for the time budget."""
        note = f"{what} skipped: the profile's time budget was spent"
        if note not in self.warnings:
            self.warnings.append(note)

    def measure(
        self,
        fn: Callable[[], object],
        *,
        before_block: Callable[[], object] | None = None,
        config: TimingConfig | None = None,
    ) -> Timing:
        return self.timer.measure(fn, before_block=before_block, config=config)

    def check(self, fig: Figure, peak_key: str | None, what: str) -> Figure:
        if peak_key is None:
            return fig
        return check_peak(fig, self.peaks.get(peak_key), what)


def rate_figure(timing: Timing, work: float, unit: Unit, scale: float) -> Figure:
    """Figure for a rate (work per second ÷ scale), with p10/p90 of the rate itself."""
    values = [work / t / scale for t in timing.per_call_s]
    return _figure(summarize(values), unit, timing)


def time_figure(timing: Timing) -> Figure:
    return _figure(timing.stats, "s", timing)


def _figure(st: Stats, unit: Unit, timing: Timing) -> Figure:
    """The figure of ``st``, a summary of ``timing``'s calls in ``unit``."""
    return Figure(
        value=st.median,
        unit=unit,
        p10=st.p10,
        p90=st.p90,
        noisy=st.noisy,
        n_blocks=timing.n_blocks,
        iters_per_block=timing.iters_per_block,
        median_time_s=timing.median_s,
    )


def failed(unit: Unit, exc: BaseException) -> Figure:
    msg = f"{type(exc).__name__}: {exc}".strip()
    return Figure.missing(unit, "failed", msg[:500])


class CacheFlusher:
    """Writes a buffer ≥ 256 MiB (≥ 2 × L2) before each timed block on accelerators so that
    operands do not sit in the last-level cache between blocks."""

    def __init__(self, device: str, nbytes: int) -> None:
        self.buffer: torch.Tensor | None = None
        with contextlib.suppress(Exception):
            self.buffer = torch.empty(nbytes // 4, dtype=torch.float32, device=device)

    def __call__(self) -> None:
        if self.buffer is not None:
            self.buffer.zero_()

    def release(self) -> None:
        self.buffer = None


@contextlib.contextmanager
def flusher_for(ctx: Context) -> Iterator[Callable[[], None] | None]:
    if not ctx.is_accelerator:
        yield None
        return
    size = 256 << 20
    with contextlib.suppress(Exception):
        if ctx.backend in ("cuda", "rocm"):
            l2 = int(
                getattr(torch.cuda.get_device_properties(ctx.torch_device), "L2_cache_size", 0) or 0
            )
            size = max(size, 2 * l2)
    flusher = CacheFlusher(ctx.device, size)
    try:
        yield flusher if flusher.buffer is not None else None
    finally:
        flusher.release()
