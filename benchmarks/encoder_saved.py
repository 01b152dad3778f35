"""What a BERT-style encoder layer saves for backward, and a whole training step's peak.

The Hugging Face ``BertLayer`` as Transformers wrote it in 2022 (eager attention: scores,
softmax, dropout on the probabilities; post-LayerNorm; GELU MLP; dropout after both output
projections), in plain PyTorch. Dropout is CUDA's fused kernel (a 1-byte mask saved; the CPU
path would save an fp32 noise tensor), and fp16 autocast is written out as its casts: every
linear casts its input and weight to 16-bit, softmax and LayerNorm run in fp32 (ATen's
autocast fp32 op list). Saved-tensor hooks count the bytes per token per layer (weight casts
excluded: the engine counts autocast's weight copies once, apart).

    python benchmarks/encoder_saved.py            # per-layer counts, fp32 and fp16 autocast
    python benchmarks/encoder_saved.py --step     # + BERT-large 4 x 512 fp32 training steps
                                                  #   on fake tensors under MemTracker (slow)
"""

from __future__ import annotations

import math
import sys

import torch
from torch import nn

H, A, INTER, V, L = 1024, 16, 4096, 30522, 24  # google-bert/bert-large-uncased config.json
F16 = torch.float16


class Drop(torch.autograd.Function):
    """CUDA's fused dropout: saves a bool mask."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def,override]
        mask = torch.ones(x.shape, dtype=torch.bool, device=x.device)
        ctx.save_for_backward(mask)
        return x * 1.0

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def,override]
        (mask,) = ctx.saved_tensors
        return g * mask


class SoftmaxSavingInput(torch.autograd.Function):
    """Softmax as PyTorch autograd kept it before 1.11: the input saved beside the output
    (``_softmax_backward_data`` took ``self`` for its dtype; pytorch/pytorch issue #49600,
    fixed by PR #66018, October 2021, first released in 1.11)."""

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def,override]
        y = torch.softmax(x, -1)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def,override]
        _, y = ctx.saved_tensors
        return torch._softmax_backward_data(g, y, -1, y.dtype)


# the PyTorch release the layer runs: before 1.11 softmax saves its input too
SOFTMAX_SAVES_INPUT = False


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return SoftmaxSavingInput.apply(x) if SOFTMAX_SAVES_INPUT else torch.softmax(x, -1)


def _lin(x: torch.Tensor, layer: nn.Linear, amp: bool) -> torch.Tensor:
    if amp:
        return nn.functional.linear(x.to(F16), layer.weight.to(F16), layer.bias.to(F16))
    return layer(x)


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(H, H) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.i, self.out = nn.Linear(H, INTER), nn.Linear(INTER, H)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, amp: bool) -> torch.Tensor:
        b, s, _ = x.shape

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, s, A, H // A).permute(0, 2, 1, 3)

        q, k, v = (heads(_lin(x, lin, amp)) for lin in (self.q, self.k, self.v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(H // A) + mask
        probs = Drop.apply(_softmax(scores.float() if amp else scores))
        ctx = torch.matmul(probs.to(F16) if amp else probs, v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(b, s, H)
        a = Drop.apply(_lin(ctx, self.o, amp))
        x = self.ln1((a + x).float() if amp else a + x)
        m = Drop.apply(_lin(nn.functional.gelu(_lin(x, self.i, amp)), self.out, amp))
        return self.ln2((m + x).float() if amp else m + x)


class Bert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.we, self.pe, self.te = nn.Embedding(V, H), nn.Embedding(512, H), nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H)
        self.layers = nn.ModuleList(Layer() for _ in range(L))
        self.pool, self.cls = nn.Linear(H, H), nn.Linear(H, 2)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        b, s = ids.shape
        pos = torch.zeros(b, s, dtype=torch.long)
        x = Drop.apply(self.ln(self.we(ids) + self.pe(pos) + self.te(pos)))
        mask = torch.zeros(b, 1, 1, s)
        for layer in self.layers:
            x = layer(x, mask, False)
        logits = self.cls(Drop.apply(torch.tanh(self.pool(x[:, 0]))))
        return nn.functional.cross_entropy(logits, labels)


def layer_saved(amp: bool, seq: int = 512) -> float:
    """Bytes per token one layer saves (parameters and their 16-bit casts excluded)."""
    layer = Layer()
    seen: set[int] = set()
    skip = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    total = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal total
        ptr = t.untyped_storage().data_ptr()
        weight_cast = t.dim() == 2 and t.shape[0] in (H, INTER) and t.shape[1] in (H, INTER)
        if ptr not in seen and ptr not in skip and not weight_cast:
            seen.add(ptr)
            total += t.untyped_storage().nbytes()
        return t

    x = torch.randn(1, seq, H, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x, torch.zeros(1, 1, 1, seq), amp)
    return total / seq


def step_peak(batch: int = 4, seq: int = 512, set_to_none: bool = True) -> float:
    """Allocated peak (GB) of the third of three fp32 AdamW steps (fake tensors, MemTracker)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker

    with FakeTensorMode():
        model = Bert()
        opt = torch.optim.AdamW(model.parameters(), foreach=False)
        ids = torch.zeros(batch, seq, dtype=torch.long)
        labels = torch.zeros(batch, dtype=torch.long)
        tracker = MemTracker()
        tracker.track_external(model, opt)
        peak = 0.0
        with tracker:
            for _ in range(3):
                tracker.reset_mod_stats()
                model(ids, labels).backward()
                opt.step()
                opt.zero_grad(set_to_none=set_to_none)
                snap = tracker.get_tracker_snapshot("peak")
                peak = sum(float(v["Total"]) for v in snap.values()) / 1e9
    return peak


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    torch.set_num_threads(1)
    seq = 512
    for amp in (False, True):
        per = layer_saved(amp, seq)
        score = (7.0 if amp else 9.0) * A * seq
        name = "fp16 autocast" if amp else "fp32"
        print(f"{name:14} {per:9.0f} B/token/layer = {(per - score) / H:.2f}·h + "
              f"{7 if amp else 9}·a·s")  # fmt: skip
    if "--step" in args:
        for stn in (True, False):
            what = "set_to_none" if stn else "zero-filled gradients"
            print(f"BERT-large fp32 AdamW 4 x 512, {what}: {step_peak(set_to_none=stn):.2f} GB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
