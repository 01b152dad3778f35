"""A training step's peak tensor memory, simulated with PyTorch itself, against the engine.

No GPU needed: each job runs two real training steps (forward, loss, backward, optimizer) of
a Llama-style causal LM on fake tensors (``FakeTensorMode``: shapes and dtypes, no storage)
under PyTorch's ``MemTracker`` (torch.distributed._tools.mem_tracker), which follows every
storage that autograd, the loss and the optimizer allocate and free; the second step's peak is
what ``torch.cuda.max_memory_allocated`` would report, less the caching allocator's 512-byte
rounding. The engine's ``MemoryBreakdown.tensors`` (the total less allocator slack and the
CUDA context) is compared with it, and its total with published peaks where there are some.

The network is the Hugging Face Llama layout (benchmarks/activation_memory.py's layer: RMSNorm
in fp32, q/k/v/o, rotary, attention saved as FlashAttention saves it, SwiGLU) or, for the GPT-2
jobs, its GPT-2 layout (LayerNorm, a plain GELU MLP: what the engine reads a plain-MLP decoder
as), an embedding, a final norm, the LM head and cross-entropy on the fp32 logits, the caller
holding the model's logits until the step ends. Policies: bf16 autocast with fp32 parameters
(each matmul casts its weight and its input), or a frozen bf16 base with fp32 LoRA adapters on
every linear (rank r); QLoRA's base stores the block linears in 4 bits (uint8 pairs, an 8-bit
absmax per 64 weights and an fp32 one per 256 of those: 4.127 bits) and dequantises one weight
at a time for its matmul, saving nothing per token (bitsandbytes MatMul4Bit saves only the
quantised weight). Gradient checkpointing wraps each decoder layer in
``torch.utils.checkpoint`` (non-reentrant). AdamW runs foreach (PyTorch's CUDA default).

    python benchmarks/training_peak.py [TEXT]     # TEXT: only the jobs whose name holds it
    python benchmarks/training_peak.py --published  # only the published peaks (no simulation)

After the simulated jobs it prints every published peak of tests/data/training_peak_memory.yaml
against the engine (benchmarks/peak_memory.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import activation_memory as am  # noqa: E402
import peak_memory  # noqa: E402

from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown  # noqa: E402

BF16 = torch.bfloat16


FlashAttention = am.FlashAttention  # saves what FlashAttention/SDPA saves


am.FlashAttention = FlashAttention  # type: ignore[misc]


class Dequant4bit(torch.autograd.Function):
    """bitsandbytes MatMul4Bit: dequantise, matmul, keep only the packed weight."""

    @staticmethod
    def forward(ctx, x, packed, shape):  # type: ignore[no-untyped-def,override]
        ctx.shape = shape
        ctx.packed = packed
        w = torch.empty(shape, dtype=x.dtype, device=x.device)
        return x @ w.t()

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def,override]
        w = torch.empty(ctx.shape, dtype=grad.dtype, device=grad.device)
        return grad @ w, None, None


class Adapted(nn.Module):
    """A frozen base linear (bf16, or 4-bit) plus fp32 LoRA A and B."""

    def __init__(self, base: nn.Linear, rank: int, four_bit: bool) -> None:
        super().__init__()
        out_f, in_f = base.weight.shape
        self.shape = (out_f, in_f)
        self.four_bit = four_bit
        if four_bit:
            self.register_buffer("packed", torch.empty(out_f * in_f // 2, dtype=torch.uint8))
            # NF4 with double quantisation: 8-bit absmax per 64 weights, fp32 per 256 of those
            self.register_buffer("absmax", torch.empty(out_f * in_f // 64, dtype=torch.uint8))
            self.register_buffer(
                "absmax2", torch.empty(out_f * in_f // 16384 + 1, dtype=torch.float32)
            )
        else:
            self.register_buffer("weight", base.weight.detach().to(BF16))
        self.a = nn.Parameter(torch.empty(rank, in_f, dtype=torch.float32))
        self.b = nn.Parameter(torch.empty(out_f, rank, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.four_bit:
            y = Dequant4bit.apply(x, self.packed, self.shape)
        else:
            y = nn.functional.linear(x, self.weight)
        # under autocast the adapters' fp32 weights are cast to bf16 for the matmul
        lora = nn.functional.linear(nn.functional.linear(x, self.a.to(BF16)), self.b.to(BF16))
        return y + lora


@dataclass(frozen=True)
class Job:
    name: str
    model: ModelSpec
    batch: int
    seq: int
    peft: str = "none"  # none | lora | qlora
    rank: int = 16
    checkpointing: bool = False
    tied: bool = False
    gpt2: bool = False  # GPT-2's layout: LayerNorm and a plain GELU MLP (up, down)
    published: str = ""
    published_gb: float | None = None


class CausalLM(nn.Module):
    def __init__(self, job: Job) -> None:
        super().__init__()
        m = job.model
        h, vocab = int(m.hidden_size or 0), int(m.vocab_size or 0)
        heads, kv = int(m.num_heads or 1), int(m.num_kv_heads or m.num_heads or 1)
        self.job = job
        self.emb = nn.Embedding(vocab, h)
        self.layers = nn.ModuleList(
            am.DecoderLayer(
                h, heads, kv, int(m.intermediate_size or 4 * h), job.gpt2, 1, m.explicit_head_dim
            )
            for _ in range(int(m.layers or 0))
        )
        if job.gpt2:
            for layer in self.layers:
                del layer.gate  # a plain MLP has no gate projection
        self.norm: nn.Module = nn.LayerNorm(h) if job.gpt2 else am.RMSNorm(h)
        self.head = None if job.tied else nn.Linear(h, vocab, bias=False)
        if job.peft != "none":
            # the frozen base, built in bf16 (simulate sets the default dtype), as buffers:
            # MemTracker hooks every parameter's gradient
            for mod in self.modules():
                for name, p in list(mod._parameters.items()):
                    if p is not None:
                        del mod._parameters[name]
                        mod.register_buffer(name, p.detach())
            for layer in self.layers:
                for name in ("q", "k", "v", "o", "up", "down", *(() if job.gpt2 else ("gate",))):
                    lora = Adapted(getattr(layer, name), job.rank, job.peft == "qlora")
                    setattr(layer, name, lora)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.emb(ids)
        if self.job.peft != "none":
            x.requires_grad_(True)  # Hugging Face's enable_input_require_grads
        ckpt = self.job.checkpointing
        for layer in self.layers:
            x = checkpoint(layer, x, use_reentrant=False) if ckpt else layer(x)
        x = self.norm(x)
        w = self.emb.weight if self.head is None else self.head.weight
        logits = nn.functional.linear(x.to(BF16), w.to(BF16))
        loss = nn.functional.cross_entropy(
            logits.float().view(-1, logits.shape[-1]), labels.view(-1)
        )
        return logits, loss


# the layer's matmuls go through _lin (activation_memory): route adapted linears to themselves
_plain_lin = am._lin


def _lin(x: torch.Tensor, layer: nn.Module) -> torch.Tensor:
    if isinstance(layer, Adapted):
        return layer(x.to(BF16))
    return _plain_lin(x, layer)  # type: ignore[arg-type]


am._lin = _lin  # type: ignore[assignment]


def simulate(job: Job) -> float:
    """Peak bytes of tensors during the second of two training steps."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker

    with FakeTensorMode():
        torch.set_default_dtype(BF16 if job.peft != "none" else torch.float32)
        try:
            model = CausalLM(job)
        finally:
            torch.set_default_dtype(torch.float32)
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(trainable, foreach=True)
        ids = torch.zeros(job.batch, job.seq, dtype=torch.long)
        labels = torch.zeros(job.batch, job.seq, dtype=torch.long)
        tracker = MemTracker()
        tracker.track_external(model, opt)
        peaks = []
        with tracker:
            for _ in range(2):
                tracker.reset_mod_stats()
                logits, loss = model(ids, labels)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del logits, loss
                snap = tracker.get_tracker_snapshot("peak")
                peaks.append(sum(float(v["Total"]) for v in snap.values()))
    return peaks[-1]


def engine(job: Job) -> tuple[float, float]:
    """(tensors, total) in GB from the engine."""
    work = WorkloadSpec(
        task="fine-tuning" if job.peft != "none" else "training",
        model=replace(job.model, tied_embeddings=job.tied),
        precision="bf16",
        batch_size=job.batch,
        seq_len=job.seq,
        peft=job.peft,
        lora_rank=job.rank,
        gradient_checkpointing=job.checkpointing,
    )
    mem = memory_breakdown(work)
    return mem.tensors, mem.total


SMOL = ModelSpec(family="decoder", params=1.71e9, layers=24, hidden_size=2048, num_heads=32,
                 intermediate_size=8192, vocab_size=49152)  # fmt: skip
LLAMA3_8B = ModelSpec(family="decoder", params=8.03e9, layers=32, hidden_size=4096,
                      num_heads=32, num_kv_heads=8, intermediate_size=14336,
                      vocab_size=128256)  # fmt: skip
GPT2 = ModelSpec(family="decoder", params=124e6, layers=12, hidden_size=768, num_heads=12,
                 intermediate_size=3072, vocab_size=50257)  # fmt: skip
LLAMA2_7B = ModelSpec(family="decoder", params=6.74e9, layers=32, hidden_size=4096,
                      num_heads=32, intermediate_size=11008, vocab_size=32000)  # fmt: skip
# Heads wider than hidden ÷ heads (config.json head_dim): 16 × 128 = 2048 at hidden 1024, the
# shape of Qwen3-0.6B's config.json (28 layers, 16 Q / 8 KV heads, intermediate 3072, vocab
# 151,936, tied); session 32 (fz): the engine had saved q and the attention output h wide
WIDE_HEADS = ModelSpec(family="decoder", params=5.96e8, layers=28, hidden_size=1024,
                       num_heads=16, num_kv_heads=8, explicit_head_dim=128,
                       intermediate_size=3072, vocab_size=151936, gated_mlp=True)  # fmt: skip

JOBS = [
    Job("1.7B decoder, autocast, 4 x 2048", SMOL, 4, 2048, tied=True,
        published="H200, issue #11", published_gb=52.3),
    Job("Llama 3 8B, autocast, 1 x 2048", LLAMA3_8B, 1, 2048),
    Job("head_dim 128 at h 1024, autocast, 4 x 2048", WIDE_HEADS, 4, 2048, tied=True),
    Job("GPT-2 124M (GELU), autocast, 8 x 1024", GPT2, 8, 1024, tied=True, gpt2=True),
    Job("GPT-2 124M (GELU), LoRA r16, 8 x 1024", GPT2, 8, 1024, "lora", tied=True, gpt2=True),
    Job("Llama 3 8B, autocast, ckpt, 2 x 4096", LLAMA3_8B, 2, 4096, checkpointing=True),
    Job("Llama 3 8B, LoRA r16, ckpt, 1 x 2048", LLAMA3_8B, 1, 2048, "lora", checkpointing=True),
    Job("Llama 3 8B, QLoRA r16, ckpt, 1 x 2048", LLAMA3_8B, 1, 2048, "qlora",
        checkpointing=True, published="HF+FA2 OOM on 8 GB (unsloth)"),
    Job("Llama 3 8B, QLoRA r16, 1 x 2048", LLAMA3_8B, 1, 2048, "qlora"),
    Job("Llama 2 7B, QLoRA r8, ckpt, 1 x 2048", LLAMA2_7B, 1, 2048, "qlora", 8, True,
        published="LLaMA-Factory wiki, A100", published_gb=7.0),
    Job("Llama 2 7B, QLoRA r8, ckpt, 1 x 8192", LLAMA2_7B, 1, 8192, "qlora", 8, True,
        published="LLaMA-Factory wiki, A100", published_gb=12.0),
]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    if "--published" in args:
        print(peak_memory.report(peak_memory.evaluate()))
        return 0
    only = " ".join(args)
    torch.set_num_threads(1)
    print(f"{'job':40} {'simulated':>9} {'engine':>7} {'ratio':>6}   total  published")
    worst = 0.0
    for job in JOBS:
        if only and only not in job.name:
            continue
        sim = simulate(job) / 1e9
        tensors, total = engine(job)
        ratio = tensors / sim
        worst = max(worst, abs(ratio - 1.0))
        pub = ""
        if job.published_gb:
            pub = f"{job.published_gb:.1f} GB ({job.published}): {total / job.published_gb:.2f}x"
        elif job.published:
            pub = job.published
        line = f"{job.name:40} {sim:8.2f}G {tensors:6.2f}G {ratio:6.3f}  {total:6.2f}G  {pub}"
        print(line, flush=True)
    print(f"largest engine/simulated error: {worst:.1%}")
    print()
    print(peak_memory.report(peak_memory.evaluate()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
