"""Compiled diffusion under TorchInductor: what it cannot fuse, and what cuDNN moves for NCHW.

Inductor fuses element-wise chains into Triton kernels but runs a diffusion UNet's convolutions
and linear layers as library calls (cuDNN, cuBLAS) and SDPA as its own kernel, and fuses
epilogues only into its own Triton templates. So a join after such a call (a residual add, a
GEGLU gate product, a skip connection's concatenation, a nearest upsampling) still reads its
operands from memory and writes its result: role "residual", which torch.compile's diffusion
row keeps while TensorRT (which fuses adds into its epilogues) and the other regimes drop it. A
norm or a second join that takes a join's output runs in the join's kernel and reads that
tensor once less. cuDNN converts an NCHW convolution's filter to NHWC on every call, as it does
the activations."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain import perf
from app.domain.efficiency import EfficiencyTable
from app.domain.gpu import GpuSpec
from app.domain.operators import ForwardTable, nchw_transposes, parse_table, table_ops
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)
EFF = load_efficiency(DATA)


def _table(raw: list[dict]) -> ForwardTable:
    return parse_table({"model": "t", "source": "s", "gflops_forward": None, "ops": raw})


def _el(name: str, el_in: int, el_out: int) -> dict:
    return {"kind": "elementwise", "name": name, "count": 1, "elements_in": el_in,
            "elements_out": el_out}  # fmt: skip


CONV = {"kind": "conv", "name": "c", "count": 1, "c_in": 8, "c_out": 8, "h_in": 4, "w_in": 4,
        "h_out": 4, "w_out": 4, "r": 3, "s": 3, "stride": 1, "groups": 1}  # fmt: skip
GN = {"kind": "norm", "name": "n", "count": 1, "elements_in": 100, "elements_out": 100,
      "groups": 32}  # fmt: skip
LN = {"kind": "norm", "name": "ln", "count": 1, "elements_in": 100, "elements_out": 100}


def test_joins_take_role_residual_and_unary_ops_stay_act() -> None:
    ops = table_ops(
        _table(
            [
                _el("r:add", 200, 100),  # residual add: two full operands
                _el("ff:mul", 200, 100),  # GEGLU gate product
                _el("up:cat", 100, 100),  # skip connection
                _el("up:upsample_nearest2d", 25, 100),
                _el("r:div", 100, 100),  # scale division: folds into the chain
                _el("t:add", 101, 100),  # a broadcast time-embedding add
                _el("a:silu", 100, 100),
                _el("rope:_to_copy", 200, 100),  # a cast stays a cast
            ]
        ),
        1.0,
    )
    assert [o.role for o in ops] == ["residual"] * 4 + ["act"] * 3 + ["cast"]


def test_every_policy_that_fuses_activations_fuses_joins_but_compiled_diffusion() -> None:
    """The reclassification moves no other runtime: each fuse list with "act" has "residual"."""
    gpu = _gpu("a100-sxm4-40gb")
    for runtime in ("torch-compile", "tensorrt", "onnxruntime", "tensorflow-xla"):
        for regime in ("infer", "infer-cnn", "train"):
            fuse = EFF.profile(gpu, "cuda", runtime, "fp16", regime).fuse
            assert ("act" in fuse) == ("residual" in fuse), (runtime, regime)
    compiled = EFF.profile(gpu, "cuda", "torch-compile", "fp16", "infer-diffusion").fuse
    assert "act" in compiled and "residual" not in compiled
    assert "residual" in EFF.profile(gpu, "cuda", "tensorrt", "fp16", "infer-diffusion").fuse
    assert EFF.profile(gpu, "cuda", "pytorch", "fp16", "infer-diffusion").fuse == ()


def test_a_norm_after_a_join_reads_the_joined_tensor_once_less() -> None:
    raw = [_el("r:add", 200, 100), _el("r:div", 100, 100), GN, _el("x:add", 200, 100), LN]
    plain = table_ops(_table(raw), 2.0)
    fused = table_ops(_table(raw), 2.0, join_norm_fused=True)
    # group norm: two reads of its input (statistics, then normalise), one of them in registers
    assert plain[2].bytes_read == 2 * 200 * 2.0
    assert fused[2].bytes_read == 200 * 2.0
    # layer norm: its one read is the join's output
    assert fused[4].bytes_read == 0.0 < plain[4].bytes_read
    # a join itself, and what follows a library call, keep their bytes
    assert fused[0].bytes == plain[0].bytes
    after_conv = table_ops(_table([CONV, GN]), 1.0, join_norm_fused=True)[1]
    assert after_conv.bytes_read == 2 * 100 * 2.0


def test_a_join_after_a_join_reads_the_chained_operand_once_less() -> None:
    raw = [_el("a:add", 200, 100), _el("b:mul", 200, 100), _el("c:cat", 300, 300)]
    plain = table_ops(_table(raw), 1.0)
    fused = table_ops(_table(raw), 1.0, join_norm_fused=True)
    assert fused[0].bytes_read == plain[0].bytes_read == 400.0
    assert fused[1].bytes_read == plain[1].bytes_read - 200.0
    assert fused[2].bytes_read == plain[2].bytes_read - 200.0  # the product's 100 elements
    assert all(f.bytes_written == p.bytes_written for f, p in zip(fused, plain, strict=True))


def test_nchw_transforms_move_the_filter_too() -> None:
    (conv,) = table_ops(_table([CONV]), 1.0)
    (t,) = nchw_transposes([conv], w_b=2.0)
    weights = 8 * 8 * 9 * 2.0
    act = 8 * 16 * 2.0 * 2  # input and output, 16 pixels of 8 channels each
    assert t.bytes_read == t.bytes_written == pytest.approx(act + weights)
    # a training step converts it on each of its three calls
    (tt,) = nchw_transposes([conv, conv], w_b=2.0, training=True)[1:]
    assert tt.count == 3.0 and tt.bytes_read == t.bytes_read


def _gpu(slug: str) -> GpuSpec:
    from app.catalog.loader import read_gpu_specs

    return next(g for g in read_gpu_specs(DATA) if g.slug == slug)


def _work(runtime: str) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision="fp16",
        batch_size=4,
        runtime=runtime,
        efficiency=EFF,
        channels_last=True,
    )


def test_compiled_sd15_launches_its_joins_and_trt_does_not() -> None:
    """SD 1.5's UNet call under torch.compile: 119 joins on top of the 423 kernels the other
    folds leave; TensorRT's epilogues keep them out."""
    gpu = _gpu("a100-sxm4-40gb")
    launched = {}
    for runtime in ("torch-compile", "tensorrt"):
        w = _work(runtime)
        on = perf._on_gpu(gpu, w, "pytorch", None, "cuda")
        m = w.model
        assert m.operators is not None
        ops = table_ops(m.operators, 1.0, join_norm_fused=runtime == "torch-compile")
        launched[runtime] = [o for o in ops if not (o.role and o.role in on.drop)]
    joins = [o for o in launched["torch-compile"] if o.role == "residual"]
    assert sum(o.count for o in joins) == 119
    assert not [o for o in launched["tensorrt"] if o.role == "residual"]


def test_compiled_sd15_is_slower_with_its_joins_priced() -> None:
    gpu = _gpu("a100-sxm4-40gb")
    w = _work("torch-compile")
    priced = perf.single_gpu(gpu, w).step_s
    folded = perf.single_gpu(gpu, w.with_flags(efficiency=_without_joins())).step_s
    # the joins move ~0.7 GB a latent per UNet call: a few % to ~10 % of the step on an A100
    assert 1.03 < priced / folded < 1.15


def _without_joins() -> EfficiencyTable:
    from dataclasses import replace

    rows = tuple(
        r
        for r in EFF.rows
        if not (
            r.match.get("runtime") == "torch-compile" and r.match.get("regime") == "infer-diffusion"
        )
    )
    return replace(EFF, rows=rows)
