"""Eager PyTorch's CUDA group norm on a channels-last diffusion model (issue 21, session 36 dg).

ATen's ``group_norm`` hands the CUDA kernel ``input.contiguous()``: a channels-last input is
copied to NCHW and the output comes back NCHW (pytorch/pytorch#111824, PyTorch 2.1; still so in
PR #191945, 2026-08), and the next convolution, whose weights are channels-last, copies it back.
So each group norm of a channels-last eager job moves its input and output twice more (one op
of role "relayout"); an NCHW job (its convolutions pay cuDNN's transforms instead), a
torch.compile job (Inductor lowers the norm itself) and a TensorRT job do not.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import operators, perf
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)


def _work(runtime: str = "pytorch", channels_last: bool = True, batch: int = 16) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision="fp16",
        batch_size=batch,
        runtime=runtime,
        efficiency=TABLE,
        channels_last=channels_last,
    )


def _relayouts(work: WorkloadSpec) -> list[operators.Op]:
    ops = perf.step_ops(work, True, 2.0) or []
    return [o for o in ops if o.role == "relayout"]


def test_op_moves_input_and_output_twice() -> None:
    op = operators.group_norm_relayout_op("gn", 1000.0, 1000.0, 3.0, 2.0, "fp16")
    assert op.role == "relayout" and op.klass == operators.MEMORY
    assert op.bytes_read == pytest.approx(4000.0)
    assert op.bytes_written == pytest.approx(4000.0)
    assert op.count == 3.0 and op.flops == 0.0
    assert "relayout" in operators.ROLES


def test_one_relayout_per_group_norm_in_both_tables() -> None:
    work = _work()
    model = work.model
    assert model.operators is not None and model.decoder_operators is not None
    norms = [o for o in _relayouts(work) if o.phase != operators.DECODE_PHASE]
    unet_groups = sum(
        float(o.get("count") or 1)
        for o in model.operators.ops
        if o["kind"] == "norm" and o.get("groups")
    )
    passes = max(1, model.passes_per_sample or 1)
    # one UNet call per step on 2 x batch latents: counts scale by the passes over guidance
    assert sum(o.count for o in norms) == pytest.approx(unet_groups * passes / 2.0)
    assert any(o.phase == operators.DECODE_PHASE for o in _relayouts(work))


@pytest.mark.parametrize(
    ("runtime", "channels_last"),
    [("pytorch", False), ("torch-compile", True), ("tensorrt", True)],
)
def test_only_eager_channels_last_pays(runtime: str, channels_last: bool) -> None:
    assert _relayouts(_work(runtime, channels_last)) == []


def test_training_does_not_pay() -> None:
    assert _relayouts(replace(_work(), task="training")) == []


def test_channels_last_saves_less_but_still_saves() -> None:
    gpu = GPUS["a100-sxm4-40gb"]
    nchw = perf.single_gpu(gpu, _work(channels_last=False), backend="cuda").step_s
    nhwc = perf.single_gpu(gpu, _work(), backend="cuda").step_s
    # GPU-bound at 32 latents: channels-last still drops cuDNN's transforms around every
    # convolution, but the group norms' copies take back part of that saving
    assert nhwc < nchw
    relayout_bytes = sum(o.count * o.bytes for o in _relayouts(_work()))
    bandwidth_s = relayout_bytes / (gpu.memory_bandwidth_gbs * 1e9)
    assert nhwc > nchw - 0.2 * nchw
    assert bandwidth_s > 0.01 * nhwc
