"""Generate the operator tables of the CNN, ViT and diffusion presets (data/operators/*.yaml).

A dev-time step, not part of the service: each network is built from its reference
implementation on PyTorch's ``meta`` device (shapes only, no weights, nothing downloaded) and run
forward once at batch 1. Every aten operator is recorded with the module that issued it
(``TorchDispatchMode`` plus forward pre-hooks for the names); ``scaled_dot_product_attention``
is caught one level up (patched in ``torch.nn.functional``) and recorded as one attention
operator, so the kernels it runs inside are not counted twice. Views, reshapes and tensor
creation are dropped (no kernel or no traffic); every other operator becomes a conv, gemm,
attention, norm, elementwise, pool, softmax or embedding entry. Runs of identical blocks
(ResNet's repeated bottlenecks, a UNet's transformer layers) are folded into one copy with
``count``.

The FLOPs of the table (2 × MACs of conv, gemm and attention) are checked against
``torch.utils.flop_counter.FlopCounterMode`` on the same forward pass before a file is written.

The diffusion presets' tables are one denoiser call: a UNet's (SD 1.5, SDXL) or FLUX.1's
transformer (FluxTransformer2DModel over 4096 packed image tokens and the T5 prompt), each with
its VAE decode in data/operators/vae/ (FLUX.1's also holds the pipeline's other once-per-image
work: the CLIP and T5-XXL prompt encoders).

FLUX.1's tables are traced as FluxPipeline runs them, in bf16 (``Net.dtype``): a cast between
widths (``_to_copy``) is a kernel of its own, and an op's tensors held wider than 16 bits (the
fp32 rotary embedding, T5's fp32 RMSNorm statistics) are counted apart (``f32_in`` /
``f32_out``: 4-byte words among ``elements_in`` / ``elements_out``, which the engine prices at
4 bytes whatever the job's activation width). ``torch.nn.RMSNorm`` (FLUX.1's QK norms) is one
op: ``F.rms_norm`` runs ATen's fused ``_fused_rms_norm`` kernel on CUDA when its weight has the
input's dtype (aten/src/ATen/native/layer_norm.cpp, ``rms_norm_symint``), where the meta device
would decompose it. They are traced twice, at two image sizes (``Net.resized``), so each op's
token and element counts split into the part that grows with the image and the part that does
not (``fixed``: the prompt's 512 T5 tokens, a time embedding, the text encoders), which
``app.domain.operators.rescaled_table`` keeps at another image size.

Needs torchvision, diffusers and (for YOLOv8) ultralytics, which the service does not use: run it
from a separate virtual environment, e.g.

    python3.11 -m venv /tmp/genvenv
    /tmp/genvenv/bin/pip install torch==2.13.0 torchvision==0.28.* diffusers ultralytics \
        transformers
    /tmp/genvenv/bin/python benchmarks/gen_operator_tables.py [--only resnet-50 ...]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "data" / "operators"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# Operators that launch no kernel or move no data worth charging.
_SKIP = {
    "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "squeeze",
    "unsqueeze", "slice", "select", "split", "split_with_sizes", "chunk", "unbind", "alias",
    "detach", "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "arange", "_to_copy", "lift_fresh", "as_strided", "new_empty", "new_zeros",
    "new_ones", "scalar_tensor", "lift_fresh_copy", "empty_strided", "resize_", "set_",
    "fill_", "zero_", "flatten", "unflatten", "narrow", "_reshape_alias", "view_as",
    "broadcast_tensors", "sym_size", "sym_stride", "is_same_size", "dropout", "native_dropout",
}  # fmt: skip
_GEMM = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear"}
_NORM = {
    "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
    "native_layer_norm", "native_group_norm", "layer_norm", "group_norm", "batch_norm",
    "rms_norm", "_fused_rms_norm",
}  # fmt: skip
_POOL = {
    "max_pool2d", "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d",
    "_adaptive_avg_pool2d", "mean", "adaptive_max_pool2d",
}  # fmt: skip
_SOFTMAX = {"_softmax", "softmax", "_log_softmax", "log_softmax"}
_EMBED = {"embedding"}


def _numel(x: Any) -> int:
    if isinstance(x, torch.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return sum(_numel(v) for v in x)
    return 0


def _words(x: Any, wide: bool) -> tuple[int, int]:
    """(elements, f32) of a tensor or a nest of them. With ``wide`` (a 16-bit trace) a tensor
    wider than 16 bits counts in 4-byte words (an fp32 element one, a float64 or int64 two),
    ``f32`` being those words; else every element counts once and ``f32`` is 0."""
    if isinstance(x, torch.Tensor):
        size = x.element_size()
        if wide and size > 2:
            w = x.numel() * size // 4
            return w, w
        return x.numel(), 0
    if isinstance(x, (list, tuple)):
        pairs = [_words(v, wide) for v in x]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    return 0, 0


def _first(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (list, tuple)):
        for v in x:
            t = _first(v)
            if t is not None:
                return t
    return None


@dataclass
class Recorder:
    """Operators of one forward pass, each tagged with the module that issued it."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    in_attention: int = 0
    # a 16-bit trace: tensors wider than 16 bits are counted apart (``_words``)
    wide: bool = False
    # every ATen call the forward makes, views and reshapes included (each crosses Python and
    # the dispatcher on the host in eager mode), an SDPA call once
    calls: int = 0

    def where(self) -> str:
        return self.stack[-1] if self.stack else "model"

    def add(self, entry: dict[str, Any]) -> None:
        # an element-wise op carries its ATen name in the entry's name ("layer1.0:add_"): the
        # module alone does not say which of its element-wise ops this is
        op = entry.pop("op", None)
        name = f"{self.where()}:{op}" if op else self.where()
        self.ops.append({"name": name, **entry})


class _Dispatch(TorchDispatchMode):
    def __init__(self, rec: Recorder) -> None:
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.rec.in_attention:
            return out
        self.rec.calls += 1
        name = func.overloadpacket.__name__
        if name == "_to_copy" and _casts(args, out):
            # a cast between widths (``x.float()``, ``.to(x.dtype)``) is a kernel of its own; a
            # same-dtype ``.to`` never reaches the dispatcher
            entry: dict[str, Any] | None = _classify("_to_copy", args, out, self.rec.wide)
            if entry is not None:
                self.rec.add(entry)
            return out
        if name in _SKIP or (name.endswith("_copy") and name != "copy"):
            return out
        entry = _classify(name, args, out, self.rec.wide)
        if entry is not None:
            self.rec.add(entry)
        return out


def _casts(args: Any, out: Any) -> bool:
    """Whether a ``_to_copy`` changes the dtype (a device move on the meta device is none)."""
    src, dst = _first(args), _first(out)
    return src is not None and dst is not None and src.dtype != dst.dtype


def _memory_entry(kind: str, ins: Any, outs: Any, wide: bool) -> dict[str, Any]:
    """A memory-bound op's elements in and out, and (a 16-bit trace) the 4-byte words among
    them (``f32_in`` / ``f32_out``, written only where there are some)."""
    el_in, f32_in = _words(ins, wide)
    el_out, f32_out = _words(outs, wide)
    entry: dict[str, Any] = {"kind": kind, "elements_in": el_in, "elements_out": el_out}
    if f32_in:
        entry["f32_in"] = f32_in
    if f32_out:
        entry["f32_out"] = f32_out
    return entry


def _classify(
    name: str, args: tuple[Any, ...], out: Any, wide: bool = False
) -> dict[str, Any] | None:
    first = _first(out)
    if name == "convolution":
        x, w = args[0], args[1]
        stride, groups, transposed = args[3], args[8], args[6]
        if transposed:
            raise NotImplementedError("transposed convolution")
        assert first is not None
        return {
            "kind": "conv",
            "c_in": int(x.shape[1]),
            "c_out": int(w.shape[0]),
            "h_in": int(x.shape[2]),
            "w_in": int(x.shape[3]),
            "h_out": int(first.shape[2]),
            "w_out": int(first.shape[3]),
            "r": int(w.shape[2]),
            "s": int(w.shape[3]),
            "stride": int(stride[0]),
            "groups": int(groups),
        }
    if name in _GEMM:
        a, b = (args[1], args[2]) if name in {"addmm", "baddbmm"} else (args[0], args[1])
        if a.dim() == 3:  # bmm: batch folded into m only when b is shared; keep it explicit
            raise NotImplementedError(f"batched matmul outside attention: {tuple(a.shape)}")
        return {"kind": "gemm", "m": int(a.shape[0]), "n": int(b.shape[1]), "k": int(a.shape[1])}
    if name in _NORM:
        entry = _memory_entry("norm", args[0], first, wide)
        if name == "native_group_norm":
            # (input, weight, bias, N, C, HxW, group, eps): a group norm's statistics span
            # whole feature maps, so its kernel reads the input twice (data/README.md)
            entry["groups"] = int(args[6])
        return entry
    if name in _POOL:
        return _memory_entry("pool", args[0], first, wide)
    if name in _SOFTMAX:
        return _memory_entry("softmax", args, out, wide)
    if name in _EMBED:
        return _memory_entry("embedding", args[1], out, wide)
    if first is None:
        return None
    return {**_memory_entry("elementwise", args, out, wide), "op": name}


@contextmanager
def _attention_as_one_op(rec: Recorder) -> Iterator[None]:
    """Records each SDPA call as one attention operator and hides the kernels it runs inside.
    Patched in torch.nn.functional itself, which both diffusers (F.scaled_dot_product_attention)
    and nn.MultiheadAttention (the module-level name) look up at call time."""
    import torch.nn.functional as F

    orig = F.scaled_dot_product_attention

    def sdpa(*args: Any, **kwargs: Any) -> Any:
        # positional (nn.MultiheadAttention, the UNets' AttnProcessor2_0) or by keyword
        # (diffusers' attention_dispatch._native_attention: query=, key=, value=)
        q = args[0] if args else kwargs["query"]
        k = args[1] if len(args) > 1 else kwargs["key"]
        rec.add(
            {
                "kind": "attention",
                "q_len": int(q.shape[-2]),
                "kv_len": int(k.shape[-2]),
                "heads": int(q.numel() // (q.shape[-2] * q.shape[-1])),  # batch is 1
                "head_dim": int(q.shape[-1]),
            }
        )
        rec.calls += 1
        rec.in_attention += 1
        try:
            return orig(*args, **kwargs)
        finally:
            rec.in_attention -= 1

    F.scaled_dot_product_attention = sdpa
    try:
        yield
    finally:
        F.scaled_dot_product_attention = orig


@contextmanager
def _fused_rms_norm_as_one_op(rec: Recorder) -> Iterator[None]:
    """Records each ``F.rms_norm`` (``torch.nn.RMSNorm``) call whose weight has the input's
    dtype as one norm operator: ATen's ``rms_norm`` dispatches it to ``_fused_rms_norm``, one
    kernel on CUDA (``_fused_rms_norm_cuda``, torch 2.13's native_functions.yaml: it reads the
    input, computes in fp32 inside, writes the output at the input's width), which the meta
    device has no kernel for and decomposes (upcast, pow, mean, add, rsqrt, mul, mul, cast).
    A weight of another dtype takes the composite path on CUDA too: traced as it runs. The
    kernel also writes one fp32 reciprocal RMS per normalised row (its second output)."""
    import torch.nn.functional as F

    orig = F.rms_norm

    def rms_norm(
        x: torch.Tensor, normalized_shape: Any, weight: Any = None, eps: Any = None
    ) -> Any:
        if weight is not None and weight.dtype != x.dtype:
            return orig(x, normalized_shape, weight, eps)
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        rows = x.numel() // max(1, math.prod(shape))
        rstd = torch.empty(rows, dtype=torch.float32, device="meta")
        rec.add(_memory_entry("norm", x, (x, rstd), rec.wide))
        rec.calls += 1
        rec.in_attention += 1
        try:
            return orig(x, normalized_shape, weight, eps)
        finally:
            rec.in_attention -= 1

    F.rms_norm = rms_norm
    try:
        yield
    finally:
        F.rms_norm = orig


def trace(
    model: nn.Module,
    inputs: Callable[[], tuple[Any, dict[str, Any]]],
    rec: Recorder | None = None,
) -> list[dict]:
    rec = rec if rec is not None else Recorder()
    names = {m: n or "model" for n, m in model.named_modules()}

    def enter(mod: nn.Module, args: Any) -> None:
        rec.stack.append(names[mod])

    def leave(mod: nn.Module, args: Any, out: Any) -> None:
        rec.stack.pop()

    hooks = []
    for mod in model.modules():
        hooks.append(mod.register_forward_pre_hook(enter))
        hooks.append(mod.register_forward_hook(leave))
    args, kwargs = inputs()
    # nn.MultiheadAttention's inference fast path is one fused op that hides its GEMMs; the
    # regular path runs the projections as GEMMs and attention as SDPA, as training does.
    torch.backends.mha.set_fastpath_enabled(False)
    with (
        torch.no_grad(),
        _attention_as_one_op(rec),
        _fused_rms_norm_as_one_op(rec),
        _Dispatch(rec),
    ):
        model(*args, **kwargs)
    for h in hooks:
        h.remove()
    return rec.ops


def counted_gflops(model: nn.Module, inputs: Callable[[], tuple[Any, dict[str, Any]]]) -> float:
    args, kwargs = inputs()
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(*args, **kwargs)
    return fc.get_total_flops() / 1e9


def op_flops(op: dict[str, Any]) -> float:
    """2 × MACs of one operator (FlopCounterMode's convention); 0 for the memory-bound kinds."""
    kind = op["kind"]
    if kind == "conv":
        return (
            2.0
            * op["c_out"]
            * op["h_out"]
            * op["w_out"]
            * op["c_in"]
            // op["groups"]
            * (op["r"] * op["s"])
        )
    if kind == "gemm":
        return 2.0 * op["m"] * op["n"] * op["k"]
    if kind == "attention":
        return 4.0 * op["heads"] * op["q_len"] * op["kv_len"] * op["head_dim"]
    return 0.0


# ---------------------------------------------------------------- folding repeated blocks


def _sig(op: dict[str, Any]) -> tuple[Any, ...]:
    """Shapes plus the name with its indices blanked: 'layer3.4.conv1' repeats 'layer3.1.conv1',
    but a downsample conv never folds into a main-path conv of the same shape."""
    template = re.sub(r"\d+", "#", op["name"])
    return (
        template,
        *sorted(
            (k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
            for k, v in op.items()
            if k not in {"name", "count"}
        ),
    )


# The fields of an op that may count image tokens or pixels (a Linear's rows, an attention's
# sequence, a memory-bound op's elements); a convolution's sides grow with the image's side.
GROWING = ("m", "q_len", "kv_len", "elements_in", "elements_out", "f32_in", "f32_out")
CONV_SIDES = ("h_in", "w_in", "h_out", "w_out")


def split_fixed(ops: list[dict[str, Any]], other: list[dict[str, Any]], area: Fraction) -> None:
    """Adds to each op of ``ops`` (traced at one image size) the part of each ``GROWING`` field
    that does not grow with the image (``fixed``), from the same network traced at ``area`` ×
    that image's pixels (``other``): each field is v = a + b·P over P pixels, so with v₁ at P₁
    and v₂ at area·P₁, b·P₁ = (v₁ − v₂) ÷ (1 − area) and a = v₁ − b·P₁, solved exactly; a must
    come out a whole number ≥ 0 (else the op does not grow linearly with the pixels: an error).
    Only a ≠ 0 is written; every other field must be the same in both traces (a convolution's
    sides aside, which grow with the image's side)."""
    if len(ops) != len(other):
        raise SystemExit(f"the two traces differ: {len(ops)} and {len(other)} operators")
    for op, o2 in zip(ops, other, strict=True):
        if (op["name"], op["kind"]) != (o2["name"], o2["kind"]):
            raise SystemExit(f"the two traces differ at {op['name']} / {o2['name']}")
        for k in set(op) | set(o2):
            if k in GROWING or k in CONV_SIDES or k == "name":
                continue
            if op.get(k) != o2.get(k):
                raise SystemExit(f"{op['name']}: {k} {op.get(k)} vs {o2.get(k)}")
        fixed: dict[str, int] = {}
        for k in GROWING:
            v1, v2 = Fraction(op.get(k, 0)), Fraction(o2.get(k, 0))
            grows = (v1 - v2) / (1 - area)  # b × the first trace's pixels
            a = v1 - grows
            if a < 0 or grows < 0 or a.denominator != 1:
                raise SystemExit(f"{op['name']}: {k} {v1} and {v2} are not a + b x pixels")
            if a:
                fixed[k] = int(a)
        if fixed:
            op["fixed"] = fixed


def _merge_names(a: str, b: str) -> str:
    """'layer3.1.conv1' and 'layer3.5.conv1' -> 'layer3.[1-5].conv1'."""
    if a == b:
        return a
    ta, tb = re.split(r"(\d+)", a), re.split(r"(\d+)", b)
    if len(ta) != len(tb):
        return a
    out = []
    for x, y in zip(ta, tb, strict=True):
        out.append(x if x == y else f"[{x}-{y}]")
    return "".join(out)


def _best_run(ids: list[int], names: list[str], max_period: int) -> tuple[int, int, int] | None:
    """(start, period, repeats) of the longest stretch that is one block repeated; ties go to
    the alignment whose merged names agree (block boundaries on module boundaries), then to
    more repeats."""
    best: tuple[tuple[int, bool, int], tuple[int, int, int]] | None = None
    n = len(ids)
    for i in range(n - 1):
        for p in range(1, min(max_period, (n - i) // 2) + 1):
            if ids[i + p] != ids[i]:
                continue
            r = 1
            while ids[i + r * p : i + (r + 1) * p] == ids[i : i + p]:
                r += 1
            if r == 1:
                continue
            last = i + (r - 1) * p
            brackets = {
                tuple(re.findall(r"\[[^]]*\]", _merge_names(names[i + j], names[last + j])))
                for j in range(p)
            }
            score = (p * r, len(brackets) <= 1, r)
            if best is None or score > best[0]:
                best = (score, (i, p, r))
    return None if best is None else best[1]


def fold(ops: list[dict[str, Any]], max_period: int = 400) -> list[dict[str, Any]]:
    """Fold consecutive repeats of the same operator sequence into one copy with ``count``,
    the longest repeated stretch first, then what lies before and after it."""
    if len(ops) < 2:
        return [{**o, "count": o.get("count", 1)} for o in ops]
    table: dict[tuple[Any, ...], int] = {}
    ids = [table.setdefault(_sig(o), len(table)) for o in ops]
    run = _best_run(ids, [o["name"] for o in ops], max_period)
    if run is None:
        return [{**o, "count": o.get("count", 1)} for o in ops]
    i, p, r = run
    last = i + (r - 1) * p
    block = [
        {
            **ops[i + j],
            "name": _merge_names(ops[i + j]["name"], ops[last + j]["name"]),
            "count": ops[i + j].get("count", 1) * r,
        }
        for j in range(p)
    ]
    return fold(ops[:i], max_period) + fold(block, max_period) + fold(ops[i + p * r :], max_period)


# ---------------------------------------------------------------- the networks


def _lenient_torchvision() -> None:
    """The PyPI torchvision wheel is a CUDA build whose C ops do not load against CPU torch;
    its model definitions are pure Python, so skip the op registrations that need them."""
    orig = torch.library.register_fake

    def register_fake(op: Any, *a: Any, **k: Any) -> Any:
        if isinstance(op, str) and op.startswith("torchvision::"):
            return lambda f: f
        return orig(op, *a, **k)

    torch.library.register_fake = register_fake


def _image(side: int) -> Callable[[], tuple[Any, dict[str, Any]]]:
    return lambda: ((torch.zeros(1, 3, side, side, device="meta"),), {})


def _tv(name: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import torchvision.models as tvm

        with torch.device("meta"):
            return getattr(tvm, name)()

    return build


def _resnext101_32x4d(se: bool) -> Callable[[], nn.Module]:
    """NVIDIA DeepLearningExamples' ResNeXt101-32x4d (image_classification/models/resnet.py:
    bottleneck widths 128/256/512/1024 × expansion 2, cardinality 32, stride on the 3x3 conv,
    layers 3/4/23/3), which is torchvision's ResNet(Bottleneck, groups=32, width_per_group=4).
    ``se``: the SE-ResNeXt variant, a squeeze-and-excitation (reduction 16) on each block's
    output before the residual add (DLE's SEBottleneck), its two FC layers dense as DLE builds
    them (PyTorch image_classification/models/common.py: nn.Linear; TensorFlow
    squeeze_excitation_layer.py: layers.dense), not torchvision's SqueezeExcitation's 1x1
    convolutions (same FLOPs and weights; the engine prices a convolution's host call apart)."""

    def build() -> nn.Module:
        from torchvision.models.resnet import Bottleneck, ResNet

        class DenseSE(nn.Module):
            def __init__(self, channels: int, squeezed: int) -> None:
                super().__init__()
                self.avgpool = nn.AdaptiveAvgPool2d(1)
                self.fc1 = nn.Linear(channels, squeezed)
                self.activation = nn.ReLU()
                self.fc2 = nn.Linear(squeezed, channels)
                self.scale_activation = nn.Sigmoid()

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                s = self.avgpool(x).flatten(1)
                s = self.scale_activation(self.fc2(self.activation(self.fc1(s))))
                return x * s[:, :, None, None]

        class SEBottleneck(Bottleneck):
            def __init__(self, inplanes: int, planes: int, *a: Any, **k: Any) -> None:
                super().__init__(inplanes, planes, *a, **k)
                out = planes * self.expansion
                self.se = DenseSE(out, out // 16)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                identity = x if self.downsample is None else self.downsample(x)
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.relu(self.bn2(self.conv2(out)))
                out = self.se(self.bn3(self.conv3(out)))
                return self.relu(out + identity)

        block = SEBottleneck if se else Bottleneck
        with torch.device("meta"):
            return ResNet(block, [3, 4, 23, 3], groups=32, width_per_group=4)

    return build


def _ssd300() -> nn.Module:
    from benchmarks.activation_memory import SSD300

    with torch.device("meta"):
        return SSD300()


def _yolov8m() -> nn.Module:
    from ultralytics.nn.tasks import DetectionModel

    # its constructor initialises biases with .item(), so build on the CPU (25.9M parameters)
    return DetectionModel("yolov8m.yaml", nc=80, verbose=False).to("meta")


def _raw_detect_head(model: nn.Module) -> None:
    head: Any = model.get_submodule("model")
    head[-1].train()


# diffusers UNet2DConditionModel configs, copied from the published config.json files.
SD15_UNET = {
    "act_fn": "silu", "attention_head_dim": 8, "block_out_channels": [320, 640, 1280, 1280],
    "center_input_sample": False, "cross_attention_dim": 768,
    "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
                         "CrossAttnDownBlock2D", "DownBlock2D"],
    "downsample_padding": 1, "flip_sin_to_cos": True, "freq_shift": 0, "in_channels": 4,
    "layers_per_block": 2, "mid_block_scale_factor": 1, "norm_eps": 1e-05,
    "norm_num_groups": 32, "out_channels": 4, "sample_size": 64,
    "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D",
                       "CrossAttnUpBlock2D"],
}  # fmt: skip
SDXL_UNET = {
    "act_fn": "silu", "addition_embed_type": "text_time", "addition_embed_type_num_heads": 64,
    "addition_time_embed_dim": 256, "attention_head_dim": [5, 10, 20],
    "block_out_channels": [320, 640, 1280], "center_input_sample": False,
    "cross_attention_dim": 2048,
    "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
    "downsample_padding": 1, "flip_sin_to_cos": True, "freq_shift": 0, "in_channels": 4,
    "layers_per_block": 2, "mid_block_scale_factor": 1, "norm_eps": 1e-05,
    "norm_num_groups": 32, "out_channels": 4, "projection_class_embeddings_input_dim": 2816,
    "sample_size": 128, "transformer_layers_per_block": [1, 2, 10],
    "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
    "use_linear_projection": True,
}  # fmt: skip


def _unet(config: dict[str, Any]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from diffusers import UNet2DConditionModel

        with torch.device("meta"):
            model = UNet2DConditionModel(**config)
        from diffusers.models.attention_processor import AttnProcessor2_0

        model.set_attn_processor(AttnProcessor2_0())  # SDPA, diffusers' default on torch 2
        return model

    return build


def _unet_inputs(config: dict[str, Any]) -> Callable[[], tuple[Any, dict[str, Any]]]:
    side = config["sample_size"]

    def make() -> tuple[Any, dict[str, Any]]:
        meta = torch.device("meta")
        sample = torch.zeros(1, 4, side, side, device=meta)
        ctx = torch.zeros(1, 77, config["cross_attention_dim"], device=meta)
        kwargs: dict[str, Any] = {}
        if config.get("addition_embed_type") == "text_time":
            kwargs["added_cond_kwargs"] = {
                "text_embeds": torch.zeros(1, 1280, device=meta),
                "time_ids": torch.zeros(1, 6, device=meta),
            }
        return (sample, torch.tensor([500], device="meta"), ctx), kwargs

    return make


# diffusers FluxTransformer2DModel configs, copied from the published transformer/config.json of
# black-forest-labs/FLUX.1-dev and FLUX.1-schnell: the same network but for the guidance
# embedding (FLUX.1 [dev] is guidance-distilled: the guidance scale enters as an embedding, so
# a denoising step is one transformer call, no classifier-free guidance pair).
FLUX_DEV = {
    "patch_size": 1, "in_channels": 64, "num_layers": 19, "num_single_layers": 38,
    "attention_head_dim": 128, "num_attention_heads": 24, "joint_attention_dim": 4096,
    "pooled_projection_dim": 768, "guidance_embeds": True, "axes_dims_rope": [16, 56, 56],
}  # fmt: skip
FLUX_SCHNELL = {**FLUX_DEV, "guidance_embeds": False}
# FluxPipeline packs the 16-channel latents of a 1024 x 1024 image (128 x 128, the VAE's 8 x)
# into 2 x 2 patches: (1024 / 16)^2 = 4096 image tokens of 64 channels; the T5 prompt is padded
# to max_sequence_length tokens (512 for dev, 256 for schnell: pipeline_flux.py's default and
# the schnell model card's). The second trace (``Net.resized``): a 512 x 512 image, 1024 tokens.
FLUX_IMAGE_TOKENS = 4096
FLUX_RESIZED_TOKENS = 1024
# FluxPipeline(torch_dtype=torch.bfloat16), the model cards' example: every module in bf16
FLUX_DTYPE = torch.bfloat16


def _flux(config: dict[str, Any]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from diffusers import FluxTransformer2DModel

        with torch.device("meta"):
            return FluxTransformer2DModel(**config)

    return build


def _flux_inputs(
    config: dict[str, Any], text_tokens: int, image_tokens: int = FLUX_IMAGE_TOKENS
) -> Callable[[], tuple[Any, dict]]:
    """The transformer call of FluxPipeline's denoising loop (pipeline_flux.py, diffusers
    0.42.1): latents, prompt embeddings, ids and timestep in the pipeline's dtype (bf16), the
    embedded guidance as it builds it (``torch.full([1], guidance_scale, dtype=torch.float32)``,
    cast by the model)."""

    def make() -> tuple[Any, dict[str, Any]]:
        meta, dt = torch.device("meta"), FLUX_DTYPE
        kwargs: dict[str, Any] = {
            "hidden_states": torch.zeros(1, image_tokens, config["in_channels"], device=meta,
                                         dtype=dt),
            "encoder_hidden_states": torch.zeros(
                1, text_tokens, config["joint_attention_dim"], device=meta, dtype=dt
            ),
            "pooled_projections": torch.zeros(1, config["pooled_projection_dim"], device=meta,
                                              dtype=dt),
            "timestep": torch.ones(1, device=meta, dtype=dt),
            "img_ids": torch.zeros(image_tokens, 3, device=meta, dtype=dt),
            "txt_ids": torch.zeros(text_tokens, 3, device=meta, dtype=dt),
            "guidance": torch.ones(1, device=meta) if config["guidance_embeds"] else None,
            "return_dict": False,
        }  # fmt: skip
        return (), kwargs

    return make


FLUX_SOURCE = (
    "diffusers {diffusers} FluxTransformer2DModel (FluxAttnProcessor, SDPA), built from "
    "https://huggingface.co/black-forest-labs/{repo}/blob/main/transformer/config.json "
    "(19 double-stream + 38 single-stream blocks, 24 heads of 128, joint_attention_dim 4096, "
    "pooled_projection_dim 768, guidance_embeds {guidance}); one transformer pass, batch 1, "
    "4096 packed image tokens (1024 x 1024) + {text} T5 tokens; guidance-distilled, so one "
    "pass per denoising step; traced in bf16 as FluxPipeline runs it (f32_in / f32_out: the "
    "4-byte words of the fp32 tensors, the rotary embedding's; casts are ops; the QK "
    "RMSNorms are torch's fused rms_norm kernel), and again at 512 x 512 (fixed: the part "
    "of a count that does not grow with the image, the {text} text tokens'); the VAE decode and "
    "both text encoders (CLIP ViT-L/14, T5-v1.1-XXL encoder) are in vae/{repo_id}.yaml; "
    "torch {torch}"
)


@dataclass
class Net:
    build: Callable[[], nn.Module]
    inputs: Callable[[], tuple[Any, dict[str, Any]]]
    input_doc: dict[str, int]
    source: str
    prepare: Callable[[nn.Module], object] | None = None  # after .eval()
    # the width the network is traced at: None = fp32 (the CNN and UNet tables, whose every
    # tensor the engine prices at the job's width); a 16-bit dtype = as its pipeline runs it,
    # the tensors wider than that counted apart (``_words``)
    dtype: torch.dtype | None = None
    # the inputs at another image size and its pixels ÷ the first's: the second trace that
    # splits each op's counts into what grows with the image and what does not (split_fixed)
    resized: tuple[Callable[[], tuple[Any, dict[str, Any]]], Fraction] | None = None
    # the submodule whose parameters the header counts (a pipeline table's VAE), and the other
    # submodules the header lists with their own counts (its text encoders)
    params_module: str | None = None
    listed: tuple[str, ...] = ()


DLE_RESNEXT = (
    "torchvision {torchvision} ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=4)"
    "{se}: NVIDIA DeepLearningExamples' ResNeXt101-32x4d architecture (https://github.com/NVIDIA/"
    "DeepLearningExamples/blob/0c4310bf175a0ee3003e4f31a78b55644348114f/PyTorch/Classification/"
    "ConvNets/image_classification/models/resnet.py), torch {torch}"
)
TV = "torchvision {torchvision} (torchvision.models.{fn}, default constructor), torch {torch}"
NETS: dict[str, Net] = {
    "resnet-50": Net(_tv("resnet50"), _image(224), {"channels": 3, "height": 224, "width": 224},
                     TV.replace("{fn}", "resnet50")),
    "vgg16": Net(_tv("vgg16"), _image(224), {"channels": 3, "height": 224, "width": 224},
                 TV.replace("{fn}", "vgg16")),
    "efficientnet-b0": Net(_tv("efficientnet_b0"), _image(224),
                           {"channels": 3, "height": 224, "width": 224},
                           TV.replace("{fn}", "efficientnet_b0")),
    "convnext-tiny": Net(_tv("convnext_tiny"), _image(224),
                         {"channels": 3, "height": 224, "width": 224},
                         TV.replace("{fn}", "convnext_tiny")),
    "vit-b-16": Net(_tv("vit_b_16"), _image(224), {"channels": 3, "height": 224, "width": 224},
                    TV.replace("{fn}", "vit_b_16")),
    "resnext101-32x4d": Net(
        _resnext101_32x4d(se=False), _image(224), {"channels": 3, "height": 224, "width": 224},
        DLE_RESNEXT.replace("{se}", "")),
    "se-resnext101-32x4d": Net(
        _resnext101_32x4d(se=True), _image(224), {"channels": 3, "height": 224, "width": 224},
        DLE_RESNEXT.replace("{se}", " with squeeze-and-excitation (reduction 16, "
                            "dense FC layers as DLE's) on each block")),
    "ssd300": Net(_ssd300, _image(300), {"channels": 3, "height": 300, "width": 300},
                  "GPU Advisor benchmarks/activation_memory.py SSD300 (NVIDIA DeepLearningExamples "
                  "PyTorch SSD300 v1.1 architecture: ResNet-50 to conv4_x with stride 1, five "
                  "extra layers, 3x3 loc/conf heads, 81 classes), torch {torch}; https://github.com/"
                  "NVIDIA/DeepLearningExamples/tree/master/PyTorch/Detection/SSD"),
    "yolov8m": Net(_yolov8m, _image(640), {"channels": 3, "height": 640, "width": 640},
                   "ultralytics {ultralytics} DetectionModel('yolov8m.yaml', nc=80) (the model "
                   "definition shipped in the package, no weights); the Detect head in training "
                   "mode (raw box/class maps, the anchor decoding and NMS post-processing left "
                   "out), torch {torch}",
                   prepare=_raw_detect_head),
    "stable-diffusion-1.5": Net(
        _unet(SD15_UNET), _unet_inputs(SD15_UNET),
        {"channels": 4, "height": 64, "width": 64, "context_len": 77, "context_dim": 768},
        "diffusers {diffusers} UNet2DConditionModel with AttnProcessor2_0 (SDPA), built from "
        "https://huggingface.co/stable-diffusion-v1-5/stable-diffusion-v1-5/blob/main/unet/"
        "config.json; one UNet pass, batch 1 (classifier-free guidance runs two per step); the "
        "VAE decode and the CLIP text encoder are not in this table; torch {torch}"),
    "sdxl": Net(
        _unet(SDXL_UNET), _unet_inputs(SDXL_UNET),
        {"channels": 4, "height": 128, "width": 128, "context_len": 77, "context_dim": 2048},
        "diffusers {diffusers} UNet2DConditionModel with AttnProcessor2_0 (SDPA), built from "
        "https://huggingface.co/stabilityai/stable-diffusion-xl-base-1.0/blob/main/unet/"
        "config.json (text_time conditioning: pooled text embeds 1280 + 6 time ids); one UNet "
        "pass, batch 1; the VAE decode and both text encoders are not in this table; "
        "torch {torch}"),
    "flux-1-dev": Net(
        _flux(FLUX_DEV), _flux_inputs(FLUX_DEV, 512),
        {"channels": 64, "image_tokens": FLUX_IMAGE_TOKENS, "height": 1024, "width": 1024,
         "context_len": 512, "context_dim": 4096},
        FLUX_SOURCE.replace("{repo}", "FLUX.1-dev").replace("{guidance}", "true")
        .replace("{text}", "512").replace("{repo_id}", "flux-1-dev"),
        dtype=FLUX_DTYPE,
        resized=(_flux_inputs(FLUX_DEV, 512, FLUX_RESIZED_TOKENS),
                 Fraction(FLUX_RESIZED_TOKENS, FLUX_IMAGE_TOKENS))),
    "flux-1-schnell": Net(
        _flux(FLUX_SCHNELL), _flux_inputs(FLUX_SCHNELL, 256),
        {"channels": 64, "image_tokens": FLUX_IMAGE_TOKENS, "height": 1024, "width": 1024,
         "context_len": 256, "context_dim": 4096},
        FLUX_SOURCE.replace("{repo}", "FLUX.1-schnell").replace("{guidance}", "false")
        .replace("{text}", "256").replace("{repo_id}", "flux-1-schnell"),
        dtype=FLUX_DTYPE,
        resized=(_flux_inputs(FLUX_SCHNELL, 256, FLUX_RESIZED_TOKENS),
                 Fraction(FLUX_RESIZED_TOKENS, FLUX_IMAGE_TOKENS))),
}  # fmt: skip


# diffusers AutoencoderKL config of both presets (stable-diffusion-v1-5 and
# stable-diffusion-xl-base-1.0 vae/config.json: the same network; SDXL differs only in
# sample_size and scaling_factor, which do not change the operators at a given latent size).
VAE = {
    "act_fn": "silu", "block_out_channels": [128, 256, 512, 512],
    "down_block_types": ["DownEncoderBlock2D"] * 4, "in_channels": 3, "latent_channels": 4,
    "layers_per_block": 2, "norm_num_groups": 32, "out_channels": 3,
    "up_block_types": ["UpDecoderBlock2D"] * 4,
}  # fmt: skip


# FLUX.1's AutoencoderKL (black-forest-labs/FLUX.1-dev and FLUX.1-schnell vae/config.json):
# the SD network's blocks with 16 latent channels and no quant / post-quant convolutions.
FLUX_VAE = {
    **VAE, "latent_channels": 16, "use_quant_conv": False, "use_post_quant_conv": False,
}  # fmt: skip


class _Decode(nn.Module):
    """The pipeline's last step: latents to pixels (post_quant_conv + decoder)."""

    def __init__(self, vae: nn.Module) -> None:
        super().__init__()
        self.vae = vae

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.vae.decode(z).sample  # type: ignore[operator]


def _vae_decoder(sample_size: int, config: dict[str, Any] = VAE) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from diffusers import AutoencoderKL
        from diffusers.models.attention_processor import AttnProcessor2_0

        with torch.device("meta"):
            vae = AutoencoderKL(**config, sample_size=sample_size)
        vae.set_attn_processor(AttnProcessor2_0())
        return _Decode(vae)

    return build


def _latent(side: int, channels: int = 4) -> Callable[[], tuple[Any, dict[str, Any]]]:
    return lambda: ((torch.zeros(1, channels, side, side, device="meta"),), {})


# FLUX.1's prompt encoders, copied from the published text_encoder/config.json (CLIPTextModel,
# openai/clip-vit-large-patch14's text tower) and text_encoder_2/config.json (T5EncoderModel,
# google/t5-v1_1-xxl's encoder) of black-forest-labs/FLUX.1-dev (FLUX.1-schnell ships the same).
FLUX_CLIP_TEXT = {
    "vocab_size": 49408, "hidden_size": 768, "intermediate_size": 3072, "projection_dim": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 77,
    "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5,
}  # fmt: skip
FLUX_T5_XXL = {
    "vocab_size": 32128, "d_model": 4096, "d_kv": 64, "d_ff": 10240, "num_layers": 24,
    "num_heads": 64, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
    "feed_forward_proj": "gated-gelu", "layer_norm_epsilon": 1e-6, "is_encoder_decoder": False,
    "tie_word_embeddings": False,
}  # fmt: skip
CLIP_TOKENS = 77  # FluxPipeline's tokenizer_max_length: CLIPTokenizer pads to 77


class _FluxOncePerImage(nn.Module):
    """What FluxPipeline runs once per image beside its denoising loop (pipeline_flux.py,
    diffusers 0.42.1): ``encode_prompt`` — the CLIP text model over 77 tokens (its pooled
    output) and the T5 encoder over ``max_sequence_length`` tokens, both with
    ``output_hidden_states=False`` and no attention mask — then the VAE decode of the latents.
    The scheduler's step and the latents' unpacking (a few MB a step) are not in it."""

    def __init__(self, clip: nn.Module, t5: nn.Module, vae: nn.Module) -> None:
        super().__init__()
        self.text_encoder = clip
        self.text_encoder_2 = t5
        self.vae = vae

    def forward(self, clip_ids: torch.Tensor, t5_ids: torch.Tensor, z: torch.Tensor) -> Any:
        self.text_encoder(clip_ids, output_hidden_states=False)
        self.text_encoder_2(t5_ids, output_hidden_states=False)
        return self.vae.decode(z).sample  # type: ignore[operator]


def _flux_once_per_image() -> nn.Module:
    from diffusers import AutoencoderKL
    from diffusers.models.attention_processor import AttnProcessor2_0
    from transformers import CLIPTextConfig, CLIPTextModel, T5Config, T5EncoderModel

    with torch.device("meta"):
        clip = CLIPTextModel(CLIPTextConfig(**FLUX_CLIP_TEXT))
        t5 = T5EncoderModel(T5Config(**FLUX_T5_XXL))
        vae = AutoencoderKL(**FLUX_VAE, sample_size=1024)
    vae.set_attn_processor(AttnProcessor2_0())
    return _FluxOncePerImage(clip, t5, vae)


def _flux_once_inputs(t5_tokens: int, side: int) -> Callable[[], tuple[Any, dict[str, Any]]]:
    def make() -> tuple[Any, dict[str, Any]]:
        meta = torch.device("meta")
        clip_ids = torch.zeros(1, CLIP_TOKENS, dtype=torch.long, device=meta)
        t5_ids = torch.zeros(1, t5_tokens, dtype=torch.long, device=meta)
        z = torch.zeros(1, 16, side, side, device=meta, dtype=FLUX_DTYPE)
        return (clip_ids, t5_ids, z), {}

    return make


VAE_SOURCE = (
    "diffusers {diffusers} AutoencoderKL.decode with AttnProcessor2_0 (SDPA), built from {url} "
    "(block_out_channels 128/256/512/512, layers_per_block 2); one image's decode, batch 1; "
    "torch {torch}"
)
FLUX_VAE_SOURCE = (
    "FluxPipeline's once-per-image work (diffusers {diffusers}, transformers {transformers}), "
    "traced in bf16 as the pipeline runs it: encode_prompt's CLIPTextModel over 77 tokens "
    "(text_encoder/config.json: 12 layers, 768 wide, SDPA) and T5EncoderModel over {text} "
    "tokens (text_encoder_2/config.json: T5-v1.1-XXL, 24 layers, d_model 4096, d_ff 10240 "
    "gated-GELU, 64 heads of 64, SDPA with the relative position bias as its mask), both with "
    "every count fixed (they do not see the image); then AutoencoderKL.decode with "
    "AttnProcessor2_0 (SDPA), built from {url} (block_out_channels 128/256/512/512, "
    "layers_per_block 2, latent_channels 16, no post_quant_conv); one image, batch 1; the "
    "header counts the VAE's parameters; torch {torch}"
)


def _flux_once_net(repo: str, t5_tokens: int) -> Net:
    """FLUX.1's once-per-image table (data/operators/vae/): the prompt encoders and the VAE
    decode at 1024 x 1024, traced again at 512 x 512 for the fixed parts."""
    url = f"https://huggingface.co/black-forest-labs/{repo}/blob/main/vae/config.json"
    return Net(
        _flux_once_per_image,
        _flux_once_inputs(t5_tokens, 128),
        {"channels": 16, "height": 128, "width": 128, "clip_tokens": CLIP_TOKENS,
         "t5_tokens": t5_tokens},
        FLUX_VAE_SOURCE.replace("{url}", url).replace("{text}", str(t5_tokens)),
        dtype=FLUX_DTYPE,
        resized=(_flux_once_inputs(t5_tokens, 64), Fraction(1, 4)),
        params_module="vae",
        listed=("text_encoder", "text_encoder_2"),
    )  # fmt: skip


VAE_NETS: dict[str, Net] = {
    "stable-diffusion-1.5": Net(
        _vae_decoder(512), _latent(64), {"channels": 4, "height": 64, "width": 64},
        VAE_SOURCE.replace("{url}", "https://huggingface.co/stable-diffusion-v1-5/"
                           "stable-diffusion-v1-5/blob/main/vae/config.json")),
    "sdxl": Net(
        _vae_decoder(1024), _latent(128), {"channels": 4, "height": 128, "width": 128},
        VAE_SOURCE.replace("{url}", "https://huggingface.co/stabilityai/"
                           "stable-diffusion-xl-base-1.0/blob/main/vae/config.json")),
    "flux-1-dev": _flux_once_net("FLUX.1-dev", 512),
    "flux-1-schnell": _flux_once_net("FLUX.1-schnell", 256),
}  # fmt: skip


def _versions() -> dict[str, str]:
    out = {"torch": str(torch.__version__)}
    for mod in ("torchvision", "diffusers", "ultralytics", "transformers"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # a missing optional package only blanks its version
            out[mod] = "?"
    return out


KEY_ORDER = ("kind", "name", "count")


def _yaml_op(op: dict[str, Any]) -> str:
    keys = [k for k in KEY_ORDER if k in op] + [k for k in op if k not in KEY_ORDER]
    parts = []
    for k in keys:
        v = op[k]
        if isinstance(v, dict):
            v = "{" + ", ".join(f"{a}: {b}" for a, b in v.items()) + "}"
        parts.append(f"{k}: {_q(v) if k == 'name' else v}")
    return "  - {" + ", ".join(parts) + "}"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _listed_counts(model: nn.Module, names: tuple[str, ...]) -> list[str]:
    """The header line naming a pipeline table's other traced modules with their parameters."""
    if not names:
        return []
    counts = (f"{n} {sum(p.numel() for p in model.get_submodule(n).parameters())}" for n in names)
    return ["# Also traced (once per image), parameters: " + ", ".join(counts) + "."]


def generate(key: str, vae: bool = False) -> tuple[str, float, float, float]:
    net = VAE_NETS[key] if vae else NETS[key]
    model = net.build().eval()
    if net.dtype is not None:
        model = model.to(net.dtype)
    if net.prepare is not None:
        net.prepare(model)
    wide = net.dtype in (torch.bfloat16, torch.float16)
    rec = Recorder(wide=wide)
    ops = trace(model, net.inputs, rec)
    total = sum(op_flops(o) for o in ops) / 1e9
    reference = counted_gflops(model, net.inputs)
    if abs(total - reference) > 0.005 * reference:
        raise SystemExit(f"{key}: table {total:.3f} GFLOPs vs FlopCounterMode {reference:.3f}")
    if net.resized is not None:
        other, area = net.resized
        rec2 = Recorder(wide=wide)
        split_fixed(ops, trace(model, other, rec2), area)
        if rec2.calls != rec.calls:
            raise SystemExit(f"{key}: {rec.calls} ATen calls, {rec2.calls} at the other size")
    folded = fold(ops)
    assert abs(sum(op_flops(o) * o["count"] for o in folded) / 1e9 - total) < 1e-6 * total
    counted = model.get_submodule(net.params_module) if net.params_module else model
    params = sum(p.numel() for p in counted.parameters())
    v = _versions()
    source = net.source.format(**v)
    lines = [
        "# Generated by benchmarks/gen_operator_tables.py: do not edit by hand.",
        f"# {len(ops)} operators traced on the meta device at batch 1, folded to {len(folded)}"
        f" entries; {params} parameters; FlopCounterMode {reference:.3f} GFLOPs.",
        *_listed_counts(model, net.listed),
        f"model: {key}",
        f"source: {_q(source)}",
        "input: {" + ", ".join(f"{k}: {x}" for k, x in net.input_doc.items()) + "}",
        f"gflops_forward: {round(total, 3)}",
        f"aten_calls: {rec.calls}",
        "ops:",
        *(_yaml_op(o) for o in folded),
    ]
    out = OUT_DIR / "vae" if vae else OUT_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{key}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return key, total, reference, params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="preset keys (default: all)")
    args = ap.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    _lenient_torchvision()  # diffusers and ultralytics import torchvision too
    jobs = [(k, False) for k in NETS] + [(k, True) for k in VAE_NETS]
    for key, vae in jobs:
        if args.only and key not in args.only:
            continue
        name, total, ref, params = generate(key, vae)
        once = "once per image" if VAE_NETS[key].listed else "VAE decode"
        label = f"{name} ({once})" if vae else name
        print(
            f"{label:34} {total:10.3f} GFLOPs (FlopCounterMode {ref:10.3f})  {params:>12,} params"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
