"""Measure the bytes autograd saves for backward, per sample, for the workload presets.

Each network is built here in plain PyTorch (no torchvision: the shapes follow the papers and
the reference implementations named below) and run forward once under the preset's training
precision scheme (bf16 autocast, the usual mixed-precision recipe) with
``torch.autograd.graph.saved_tensors_hooks`` counting every tensor saved for backward, each
storage once, parameters excluded (they are counted as weights; autocast's 16-bit weight
copies are reported separately). CNNs run on the CPU at batch 2 with real data; decoder
layers run on the ``meta`` device (shapes only, no memory), at batch 1 and the preset's
sequence, with attention saved the way FlashAttention/SDPA saves it (q, k, v, output and the
log-sum-exp; never the score matrix).

    python benchmarks/activation_memory.py [--write]     # --write updates data/workloads.yaml

Printed per preset: MB of 16-bit activations per sample (CNNs) or bytes per token per layer
per hidden unit (decoders, the coefficient that replaces Korthikanti et al.'s 34), which the
engine uses for both memory and the activation-traffic term (app/domain/workload.py).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "data" / "workloads.yaml"


class SavedBytes:
    """Sum of distinct storages saved for backward (parameters and their views excluded)."""

    def __init__(self, params: set[int]) -> None:
        self.params = params
        self.seen: set[tuple[str, int]] = set()
        self.bytes = 0
        self.keep: list[torch.Tensor] = []

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        if t.device.type == "meta":
            # meta tensors have no addresses: a view's identity is its base tensor's
            base = t._base if t._base is not None else t
            key = ("meta", id(base))
            if key in self.seen or id(base) in self.params:
                return t
            self.seen.add(key)
            self.keep.append(base)  # keep it alive so that id() stays unique
            self.bytes += base.untyped_storage().nbytes()
            return t
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in self.params or ("cpu", ptr) in self.seen:
            return t
        self.seen.add(("cpu", ptr))
        self.bytes += storage.nbytes()
        return t


def measure(model: nn.Module, inputs: Callable[[], torch.Tensor], batch: int) -> float:
    """Bytes saved per sample in one bf16-autocast forward pass."""
    if next(model.parameters()).device.type == "meta":
        params = {id(p) for p in model.parameters()}
    else:
        params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    counter = SavedBytes(params)
    x = inputs()
    device = x.device.type if x.device.type != "meta" else "cpu"
    with (
        torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t),
        torch.autocast(device, dtype=torch.bfloat16, enabled=x.device.type != "meta"),
    ):
        out = model(x)
    del out
    return counter.bytes / batch


# ---------------------------------------------------------------- CNNs


def conv_bn(
    cin: int, cout: int, k: int, s: int = 1, groups: int = 1, act: bool = True
) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if act:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    def __init__(self, cin: int, mid: int, stride: int) -> None:
        super().__init__()
        cout = mid * 4
        self.body = nn.Sequential(
            conv_bn(cin, mid, 1), conv_bn(mid, mid, 3, stride), conv_bn(mid, cout, 1, act=False)
        )
        self.down = conv_bn(cin, cout, 1, stride, act=False) if stride != 1 or cin != cout else None
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        idt = x if self.down is None else self.down(x)
        return self.relu(self.body(x) + idt)


def resnet50_trunk(last_stride: int = 2, stages: int = 4) -> tuple[nn.Sequential, int]:
    """torchvision-style ResNet-50 v1.5 (stride on the 3×3), He et al. 2016 Table 1."""
    layers: list[nn.Module] = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, (mid, n) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))[:stages]):
        for j in range(n):
            stride = (1 if i == 0 else (last_stride if i == 3 else 2)) if j == 0 else 1
            if i == 2 and stages == 3 and j == 0:
                stride = 1  # SSD keeps conv4_x at 38×38 (DLE's modified first block)
            layers.append(Bottleneck(cin, mid, stride))
            cin = mid * 4
    return nn.Sequential(*layers), cin


def resnet50() -> nn.Module:
    trunk, c = resnet50_trunk()
    return nn.Sequential(trunk, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 1000))


class XBottleneck(nn.Module):
    """ResNeXt bottleneck as NVIDIA DeepLearningExamples builds it (expansion 2, the 3×3 conv
    grouped over ``card`` groups, stride on the 3×3), optionally with a squeeze-and-excitation
    (reduction 16) on the block's output before the residual add (SE-ResNeXt)."""

    def __init__(self, cin: int, width: int, stride: int, card: int, se: bool) -> None:
        super().__init__()
        cout = width * 2
        self.body = nn.Sequential(
            conv_bn(cin, width, 1),
            conv_bn(width, width, 3, stride, groups=card),
            conv_bn(width, cout, 1, act=False),
        )
        self.down = conv_bn(cin, cout, 1, stride, act=False) if stride != 1 or cin != cout else None
        self.se = (
            nn.Sequential(
                nn.AdaptiveAvgPool2d(1),
                nn.Conv2d(cout, cout // 16, 1),
                nn.ReLU(inplace=True),
                nn.Conv2d(cout // 16, cout, 1),
                nn.Sigmoid(),
            )
            if se
            else None
        )
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        idt = x if self.down is None else self.down(x)
        y = self.body(x)
        if self.se is not None:
            y = y * self.se(y)
        return self.relu(y + idt)


def resnext101_32x4d(se: bool = False) -> nn.Module:
    """DLE ResNeXt101-32x4d (image_classification/models/resnet.py: widths 128/256/512/1024,
    expansion 2, cardinality 32, layers 3/4/23/3); Xie et al. 2017, Hu et al. 2018 for SE."""
    layers: list[nn.Module] = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, (width, n) in enumerate(((128, 3), (256, 4), (512, 23), (1024, 3))):
        for j in range(n):
            layers.append(XBottleneck(cin, width, 2 if i and not j else 1, 32, se))
            cin = width * 2
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000))


def vgg16() -> nn.Module:
    """Simonyan & Zisserman 2015, configuration D (13 conv + 3 FC)."""
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    layers: list[nn.Module] = []
    cin = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(cin, int(v), 3, padding=1), nn.ReLU(inplace=True)]
            cin = int(v)
    head = [nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout()]
    head += [nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(), nn.Linear(4096, 1000)]
    return nn.Sequential(*layers, *head)


class SSD300(nn.Module):
    """NVIDIA DeepLearningExamples SSD300 v1.1: ResNet-50 trunk to conv4 (stride 1 in the last
    block kept), five extra feature layers, 3×3 location/confidence heads on six maps."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk, c = resnet50_trunk(stages=3)
        # DLE modifies conv4_x's first block to stride 1 so that the 38×38 map is kept
        chans = [c, 512, 512, 256, 256, 256]
        mids = [256, 256, 128, 128, 128]
        extra: list[nn.Module] = []
        for i, (cin, mid, cout) in enumerate(zip(chans[:-1], mids, chans[1:], strict=True)):
            stride, pad = (2, 1) if i < 3 else (1, 0)
            extra.append(
                nn.Sequential(
                    nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(True),
                    nn.Conv2d(mid, cout, 3, stride, pad, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU(True),
                )
            )  # fmt: skip
        self.extra = nn.ModuleList(extra)
        boxes = [4, 6, 6, 6, 4, 4]
        self.loc = nn.ModuleList(
            nn.Conv2d(ch, b * 4, 3, padding=1) for ch, b in zip(chans, boxes, strict=True)
        )
        self.conf = nn.ModuleList(
            nn.Conv2d(ch, b * 81, 3, padding=1) for ch, b in zip(chans, boxes, strict=True)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = [self.trunk(x)]
        for layer in self.extra:
            feats.append(layer(feats[-1]))
        outs = [h(f).flatten(1) for f, h in zip(feats, self.loc, strict=True)]
        outs += [h(f).flatten(1) for f, h in zip(feats, self.conf, strict=True)]
        return torch.cat(outs, 1)


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, expand: int, k: int, stride: int) -> None:
        super().__init__()
        mid = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU()]
        layers += [nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False)]
        layers += [nn.BatchNorm2d(mid), nn.SiLU()]
        self.pre = nn.Sequential(*layers)
        sq = max(1, cin // 4)
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, sq, 1), nn.SiLU(), nn.Conv2d(sq, mid, 1),
            nn.Sigmoid(),
        )  # fmt: skip
        self.post = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pre(x)
        h = self.post(h * self.se(h))
        return x + h if self.skip else h


def efficientnet_b0() -> nn.Module:
    """Tan & Le 2019, Table 1 (MBConv stages)."""
    stages = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
              (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]  # fmt: skip
    layers: list[nn.Module] = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.SiLU()]
    cin = 32
    for e, c, n, s, k in stages:
        for j in range(n):
            layers.append(MBConv(cin, c, e, k, s if j == 0 else 1))
            cin = c
    layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.SiLU()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pw2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 1e-6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.dw(x).permute(0, 2, 3, 1)
        h = self.gamma * self.pw2(self.act(self.pw1(self.norm(h))))
        return x + h.permute(0, 3, 1, 2)


class ChannelsLN(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def convnext_tiny() -> nn.Module:
    """Liu et al. 2022: depths (3, 3, 9, 3), widths (96, 192, 384, 768)."""
    dims, depths = (96, 192, 384, 768), (3, 3, 9, 3)
    layers: list[nn.Module] = [nn.Conv2d(3, dims[0], 4, 4), ChannelsLN(dims[0])]
    for i, (d, n) in enumerate(zip(dims, depths, strict=True)):
        if i:
            layers += [ChannelsLN(dims[i - 1]), nn.Conv2d(dims[i - 1], d, 2, 2)]
        layers += [ConvNeXtBlock(d) for _ in range(n)]
    layers += [
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.LayerNorm(dims[-1]),
        nn.Linear(dims[-1], 1000),
    ]
    return nn.Sequential(*layers)


def count_cnn(name: str) -> tuple[float, float]:
    """(parameters, forward GFLOPs per sample as 2 × MACs of convolutions and linears)."""
    build, side = CNNS[name]
    model = build().eval()
    macs = [0.0]

    def hook(mod: nn.Module, inp: tuple[torch.Tensor, ...], out: torch.Tensor) -> None:
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1] * mod.in_channels // mod.groups
            macs[0] += out.numel() * k
        elif isinstance(mod, nn.Linear):
            macs[0] += out.numel() * mod.in_features

    for mod in model.modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            mod.register_forward_hook(hook)
    with torch.no_grad():
        model(torch.zeros(1, 3, side, side))
    params = float(sum(p.numel() for p in model.parameters()))
    return params, 2 * macs[0] / 1e9


CNNS: dict[str, tuple[Callable[[], nn.Module], int]] = {
    "resnet-50": (resnet50, 224),
    "vgg16": (vgg16, 224),
    "ssd300": (SSD300, 300),
    "efficientnet-b0": (efficientnet_b0, 224),
    "convnext-tiny": (convnext_tiny, 224),
    "resnext101-32x4d": (resnext101_32x4d, 224),
    "se-resnext101-32x4d": (lambda: resnext101_32x4d(se=True), 224),
}


def measure_cnn(name: str, batch: int = 2) -> float:
    """Per-sample slope between batch and 2 × batch: autocast's 16-bit weight copies are saved
    once per step, not per sample, and drop out of the difference."""
    build, side = CNNS[name]
    torch.manual_seed(0)
    model = build().train()
    small = measure(model, lambda: torch.randn(batch, 3, side, side), batch) * batch
    large = measure(model, lambda: torch.randn(2 * batch, 3, side, side), 2 * batch) * 2 * batch
    return (large - small) / batch


# ---------------------------------------------------------------- decoder layers (meta device)


class FlashAttention(torch.autograd.Function):
    """Attention that saves what FlashAttention/SDPA's efficient kernels save."""

    @staticmethod
    def forward(ctx, q, k, v):  # type: ignore[no-untyped-def,override]
        out = torch.empty_like(q)
        lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def,override]
        # shapes only: benchmarks/training_peak.py runs backward to see what it allocates
        q, k, v, _, _ = ctx.saved_tensors
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


class RMSNorm(nn.Module):
    """Hugging Face LlamaRMSNorm: computes in fp32, returns the input dtype."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        h = x.to(torch.float32)
        var = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(var + 1e-6)
        return self.weight * h.to(dtype)


BF16 = torch.bfloat16


def _lin(x: torch.Tensor, layer: nn.Linear) -> torch.Tensor:
    """What autocast does for a linear layer: bf16 copies of the input and the fp32 weight."""
    return nn.functional.linear(x.to(BF16), layer.weight.to(BF16))


class DecoderLayer(nn.Module):
    """A decoder layer under bf16 autocast with fp32 parameters (the usual PyTorch recipe:
    fp32 master weights, 16-bit math): Llama-style (RMSNorm, GQA with rotary, SwiGLU MLP)
    or GPT-2-style (LayerNorm, GELU MLP), Hugging Face eager layout. ``experts`` routed MLPs
    per token (Mixtral: 2) each save their own activations."""

    def __init__(
        self,
        h: int,
        heads: int,
        kv_heads: int,
        inter: int,
        gpt2: bool,
        experts: int,
        head_dim: int | None = None,
    ) -> None:
        """``head_dim``: a config.json's explicit one (Qwen3: 128 at any width); None: h ÷
        heads. Q is h → heads·head_dim and O its transpose, as in Hugging Face's layers."""
        super().__init__()
        self.heads, self.kv, self.hd, self.gpt2, self.experts = (
            heads,
            kv_heads,
            head_dim or h // heads,
            gpt2,
            experts,
        )
        norm: Callable[[int], nn.Module] = nn.LayerNorm if gpt2 else RMSNorm
        self.n1, self.n2 = norm(h), norm(h)
        self.q = nn.Linear(h, heads * self.hd, bias=False)
        self.k = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(heads * self.hd, h, bias=False)
        self.gate = nn.Linear(h, inter, bias=False)
        self.up = nn.Linear(h, inter, bias=False)
        self.down = nn.Linear(inter, h, bias=False)

    @staticmethod
    def _rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        rot = torch.cat((-x[..., half:], x[..., :half]), -1)
        return x * cos + rot * sin

    def _mlp(self, y: torch.Tensor) -> torch.Tensor:
        if self.gpt2:
            return _lin(nn.functional.gelu(_lin(y, self.up)), self.down)
        return _lin(nn.functional.silu(_lin(y, self.gate)) * _lin(y, self.up), self.down)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        y = self.n1(x)
        q = _lin(y, self.q).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = _lin(y, self.k).view(b, s, self.kv, self.hd).transpose(1, 2)
        v = _lin(y, self.v).view(b, s, self.kv, self.hd).transpose(1, 2)
        if not self.gpt2:
            cos = torch.ones(1, 1, s, self.hd, dtype=BF16, device=x.device)
            q, k = self._rotary(q, cos, cos), self._rotary(k, cos, cos)
        a = FlashAttention.apply(q, k, v).transpose(1, 2).reshape(b, s, self.heads * self.hd)
        x = x + _lin(a, self.o)
        y = self.n2(x)
        out = self._mlp(y)
        for _ in range(self.experts - 1):
            out = out + self._mlp(y)
        return x + out


def decoder_coefficient(
    h: int, heads: int, kv: int, inter: int, gpt2: bool = False, experts: int = 1
) -> float:
    """Bytes saved per token per layer per hidden unit under bf16 autocast with fp32 weights:
    the slope between 1024 and 2048 tokens, so autocast's per-step weight copies drop out."""
    saved = []
    for seq in (1024, 2048):
        with torch.device("meta"):
            layer = DecoderLayer(h, heads, kv, inter, gpt2, experts)
            x = torch.empty(1, seq, h, requires_grad=True)
        saved.append(measure(layer, lambda x=x: x, 1))
    return (saved[1] - saved[0]) / (1024 * h)


# ---------------------------------------------------------------- main


def _presets() -> dict[str, dict]:
    import yaml

    doc = yaml.safe_load(WORKLOADS.read_text(encoding="utf-8"))
    return {w["id"]: w for w in doc["workloads"]}


def _write(values: dict[str, tuple[str, float]]) -> None:
    """Set activation_mb_per_sample / activation_coeff in each preset's model block."""
    text = WORKLOADS.read_text(encoding="utf-8")
    for pid, (field, value) in values.items():
        block = re.search(rf"\n  - id: {re.escape(pid)}\n(.*?)(?=\n  - id: |\Z)", text, re.S)
        if block is None:
            continue
        body = block.group(0)
        model, rest = body.split("\n    defaults:", 1)  # only the model block holds the figure
        line = f"      {field}: {value:.4g}"
        if re.search(rf"\n      {field}: ", model):
            model = re.sub(rf"\n      {field}: [^\n]*", "\n" + line, model)
        else:
            model = model + "\n" + line
        text = text.replace(body, model + "\n    defaults:" + rest)
    WORKLOADS.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="update data/workloads.yaml")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    presets = _presets()
    values: dict[str, tuple[str, float]] = {}
    for name in CNNS:
        per = measure_cnn(name)
        mb = per / 1e6
        params, gflops = count_cnn(name)
        print(
            f"{name:20} cnn      {mb:8.1f} MB of bf16 activations per sample"
            f"   ({params / 1e6:.1f} M params, {gflops:.1f} forward GFLOPs counted)"
        )
        values[name] = ("activation_mb_per_sample", mb)
    for pid, w in presets.items():
        m = w["model"]
        if m.get("family") != "decoder" or not m.get("hidden_size"):
            continue
        h, heads = int(m["hidden_size"]), int(m["num_heads"])
        kv = int(m.get("num_kv_heads") or heads)
        inter = int(m.get("intermediate_size") or 4 * h)
        gpt2 = pid.startswith("gpt")  # GPT-2 presets: LayerNorm + GELU MLP (hf-gpt2 config)
        experts = int(m.get("active_experts") or 1)
        coeff = decoder_coefficient(h, heads, kv, inter, gpt2, experts)
        print(f"{pid:20} decoder  {coeff:8.2f} bytes per token per layer per hidden unit")
        values[pid] = ("activation_coeff", coeff)
    if args.write:
        _write(values)
        print(f"wrote {WORKLOADS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["decoder_coefficient", "math", "measure_cnn", "sys"]
