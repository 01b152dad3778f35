"""The Transformers model-training-anatomy runs (BERT-large on a V100, 2022), replayed on CPU.

tests/data/training_peak_memory.yaml's ``hf-anatomy`` rows print NVML's used memory after
``Trainer.train()``: the CUDA context plus what PyTorch's caching allocator holds (it never
gives memory back unless a ``cudaMalloc`` fails). This runs the same job on fake tensors
(shapes and dtypes, no storage): BertForSequenceClassification as Transformers wrote it then
(benchmarks/encoder_saved.py's layer: eager attention, CUDA's 1-byte dropout masks), the Trainer
loop of that release (v4.16: forward under autocast for ``fp16=True``, backward, the gradient
clipped to norm 1.0, ``optim="adamw_hf"`` — Transformers' own AdamW, one parameter at a time —
or bitsandbytes' Adam8bit, then ``model.zero_grad()``, which before PyTorch 2.0 zero-fills the
gradients instead of freeing them), and replays every storage it allocates and frees through a
model of the caching allocator (benchmarks/caching_allocator.py). It prints, per row, what
``torch.cuda.max_memory_allocated`` would report, what the allocator reserves, and that plus
the context the source measured (1,343 MiB) against the published figure.

    python benchmarks/hf_trainer_memory.py [--set-to-none] [--softmax-drops-input]

PyTorch 1.10 (the release of January 2022) is the default: gradients zero-filled, and softmax's
input saved for backward beside its output (pytorch/pytorch #49600, fixed in 1.11 by #66018);
the flags turn either to today's behaviour.
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, str(Path(__file__).resolve().parent))

import encoder_saved as es
from caching_allocator import CachingAllocator

MIB = float(1 << 20)
CONTEXT_MIB = 1343  # the source's reading after torch.ones((1, 1)).to("cuda")
F16 = torch.float16


class Traced(TorchDispatchMode):
    """Hands every new storage an op creates to the allocator; frees it when the storage dies."""

    def __init__(self, alloc: CachingAllocator) -> None:
        super().__init__()
        self.alloc = alloc
        self.live: dict[int, Any] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        st = t.untyped_storage()
        key = st._cdata
        if key in self.live or st.nbytes() == 0:
            return
        block = self.alloc.malloc(st.nbytes())

        def gone(_: object, key: int = key) -> None:
            self.alloc.free(self.live.pop(key)[0])

        self.live[key] = (block, weakref.ref(st, gone))


# autocast's weight cache: one 16-bit copy of each fp32 leaf parameter, kept until the
# outermost autocast region exits (ATen autocast_mode.cpp cached_cast; torch.autocast.__exit__
# clears it), also under no_grad (the checkpointed forward)
CAST_CACHE: dict[int, torch.Tensor] = {}


def _cast(p: torch.Tensor) -> torch.Tensor:
    if id(p) not in CAST_CACHE:
        CAST_CACHE[id(p)] = p.to(F16)
    return CAST_CACHE[id(p)]


def _lin(x: torch.Tensor, layer: nn.Linear, amp: bool) -> torch.Tensor:
    if amp:
        return nn.functional.linear(x.to(F16), _cast(layer.weight), _cast(layer.bias))
    return layer(x)


es._lin = _lin  # type: ignore[assignment]


class Classifier(nn.Module):
    """BertForSequenceClassification (two labels) in Transformers v4.16's order of tensors."""

    def __init__(self, ckpt: bool) -> None:
        super().__init__()
        h = es.H
        self.we, self.pe, self.te = nn.Embedding(es.V, h), nn.Embedding(512, h), nn.Embedding(2, h)
        self.ln = nn.LayerNorm(h)
        self.layers = nn.ModuleList(es.Layer() for _ in range(es.L))
        self.pool, self.cls = nn.Linear(h, h), nn.Linear(h, 2)
        self.ckpt = ckpt
        self.amp = False

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        b, s = ids.shape
        pos = torch.zeros(b, s, dtype=torch.long)
        x = self.we(ids) + self.te(pos)
        x += self.pe(pos)
        x = es.Drop.apply(self.ln(x))
        # get_extended_attention_mask: (1 - mask) * -10000 in the parameters' dtype (fp32)
        mask = (1.0 - torch.ones(b, 1, 1, s)) * -10000.0
        amp = self.amp
        for layer in self.layers:
            if self.ckpt:

                def run(t: torch.Tensor, layer: nn.Module = layer) -> torch.Tensor:
                    y = layer(t, mask, amp)
                    if torch.is_grad_enabled():  # the recompute's own autocast region ends
                        CAST_CACHE.clear()
                    return y

                x = checkpoint(run, x, use_reentrant=True, preserve_rng_state=False)
            else:
                x = layer(x, mask, amp)
        pooled = torch.tanh(_lin(x[:, 0], self.pool, amp))
        logits = _lin(es.Drop.apply(pooled), self.cls, amp)
        return nn.functional.cross_entropy(logits.float(), labels)


def adamw_hf(params: list[nn.Parameter], state: dict[int, dict[str, torch.Tensor]]) -> None:
    """transformers.optimization.AdamW.step (weight decay 0.0, the Trainer's default)."""
    for p in params:
        if p.grad is None:
            continue
        st = state.setdefault(id(p), {})
        if not st:
            st["exp_avg"] = torch.zeros_like(p)
            st["exp_avg_sq"] = torch.zeros_like(p)
        g = p.grad
        st["exp_avg"].mul_(0.9).add_(g, alpha=0.1)
        st["exp_avg_sq"].mul_(0.999).addcmul_(g, g, value=0.001)
        denom = st["exp_avg_sq"].sqrt().add_(1e-8)
        p.data.addcdiv_(st["exp_avg"], denom, value=-5e-5)


def adam8bit(params: list[nn.Parameter], state: dict[int, dict[str, torch.Tensor]]) -> None:
    """bitsandbytes Adam8bit (0.2x): uint8 moments with an fp32 absmax per 2048-value block for
    tensors of 4096 values or more, fp32 moments below; the update runs in place."""
    for p in params:
        if p.grad is None:
            continue
        st = state.setdefault(id(p), {})
        if not st:
            n = p.numel()
            if n >= 4096:
                st["state1"] = torch.zeros_like(p, dtype=torch.uint8)
                st["state2"] = torch.zeros_like(p, dtype=torch.uint8)
                st["absmax1"] = torch.zeros(n // 2048 + 1)
                st["absmax2"] = torch.zeros(n // 2048 + 1)
            else:
                st["state1"] = torch.zeros_like(p)
                st["state2"] = torch.zeros_like(p)


def clip_grad_norm(params: list[nn.Parameter], max_norm: float = 1.0) -> None:
    """torch.nn.utils.clip_grad_norm_ as of PyTorch 1.10 (one norm per gradient, stacked)."""
    norms = [torch.linalg.vector_norm(p.grad) for p in params if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack(norms))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for p in params:
        if p.grad is not None:
            p.grad.mul_(coef)


@dataclass(frozen=True)
class Run:
    name: str
    batch: int
    fp16: bool = False
    optimizer: str = "adamw"
    grad_accum: int = 1
    ckpt: bool = False
    published_mib: int = 0


RUNS = [
    Run("vanilla 4", 4, published_mib=14949),
    Run("fp16 4", 4, fp16=True, published_mib=13939),
    Run("adam8bit 4", 4, optimizer="adam8bit", published_mib=13085),
    Run("1 x ga4", 1, grad_accum=4, published_mib=8681),
    Run("1 x ga4 ckpt", 1, grad_accum=4, ckpt=True, published_mib=6775),
    Run("1 x ga4 ckpt fp16", 1, fp16=True, grad_accum=4, ckpt=True, published_mib=7275),
    Run("1 x ga4 ckpt fp16 8bit", 1, True, "adam8bit", 4, True, published_mib=5363),
]


def replay(run: Run, steps: int = 3, set_to_none: bool = False) -> dict[str, float]:
    """Allocated and reserved peaks (bytes) over ``steps`` optimizer steps."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    alloc = CachingAllocator()
    CAST_CACHE.clear()
    with FakeTensorMode(), Traced(alloc):
        model = Classifier(run.ckpt)
        loaded = alloc.reserved
        params = list(model.parameters())
        step = adamw_hf if run.optimizer == "adamw" else adam8bit
        state: dict[int, dict[str, torch.Tensor]] = {}
        ids = torch.zeros(run.batch, 512, dtype=torch.long)
        labels = torch.zeros(run.batch, dtype=torch.long)
        for _ in range(steps):
            for _ in range(run.grad_accum):
                model.amp = run.fp16
                loss = model(ids, labels)
                CAST_CACHE.clear()  # autocast's region ends with the forward
                model.amp = False
                (loss / run.grad_accum).backward()
                del loss
            clip_grad_norm(params)
            step(params, state)
            for p in params:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()
    return {
        "loaded": float(loaded),
        "allocated": float(alloc.peak_allocated),
        "reserved": float(alloc.peak_reserved),
    }


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    set_to_none = "--set-to-none" in args
    es.SOFTMAX_SAVES_INPUT = "--softmax-drops-input" not in args
    torch.set_num_threads(1)
    print(
        f"zero_grad: {'set_to_none' if set_to_none else 'zero-filled (PyTorch < 2.0)'}; "
        f"softmax saves its input: {es.SOFTMAX_SAVES_INPUT} (PyTorch < 1.11)"
    )
    print(f"{'run':24} {'alloc':>7} {'reserved':>8} {'+ctx':>7} {'published':>9} {'err':>7}  MiB")
    for run in RUNS:
        r = replay(run, set_to_none=set_to_none)
        total = r["reserved"] / MIB + CONTEXT_MIB
        err = total / run.published_mib - 1.0
        print(
            f"{run.name:24} {r['allocated'] / MIB:7.0f} {r['reserved'] / MIB:8.0f} {total:7.0f}"
            f" {run.published_mib:9d} {err:+7.1%}   (model loaded: {r['loaded'] / MIB:.0f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
