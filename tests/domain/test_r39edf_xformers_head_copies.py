"""Diffusers' xFormers attention processor copies q, k and v before the kernel (issue 21, r39 edf).

``XFormersCrossAttnProcessor`` (diffusers models/cross_attention.py, the 0.11-0.13 releases;
``XFormersAttnProcessor`` after) hands ``xformers.ops.memory_efficient_attention`` its inputs in
the (batch x heads, tokens, head dim) layout, ``attn.head_to_batch_dim(x).contiguous()`` for
query, key and value: the ``reshape`` after the ``permute`` copies each. PyTorch's SDPA
(``AttnProcessor2_0``, what the shipped tables trace) takes strided views. So an eager job that
states the xFormers stack moves each attention's q, k and v once more; SDPA, compiled and
TensorRT jobs do not, and the host's call count is not recounted.
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


def _work(runtime: str = "pytorch", copies: bool = True, batch: int = 16) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision="fp16",
        batch_size=batch,
        runtime=runtime,
        efficiency=TABLE,
        attention_kernel="flash1",
        head_batch_copies=copies,
    )


def _copies(work: WorkloadSpec) -> list[operators.Op]:
    ops = perf.step_ops(work, True, 2.0) or []
    return [o for o in ops if o.name.endswith(".head_to_batch")]


def test_op_moves_q_k_and_v_once() -> None:
    # self-attention at 64² latents: 4096 tokens, 320 wide; two latents (guidance)
    op = operators.head_batch_copy_op("attn1", 2.0, 4096.0, 4096.0, 320.0, 5.0, 2.0, "fp16")
    moved = 2.0 * 3.0 * 4096.0 * 320.0 * 2.0
    assert op.bytes_read == pytest.approx(moved) and op.bytes_written == pytest.approx(moved)
    assert op.klass == operators.MEMORY and op.role == "copy" and op.flops == 0.0
    assert op.count == 5.0
    # cross-attention: the 77 text tokens' k and v are small beside the image queries
    cross = operators.head_batch_copy_op("attn2", 2.0, 4096.0, 77.0, 320.0, 1.0, 2.0, "fp16")
    assert cross.bytes_read == pytest.approx(2.0 * (4096.0 + 154.0) * 320.0 * 2.0)


def test_one_copy_per_unet_attention_none_in_the_decode() -> None:
    work = _work()
    table = work.model.operators
    assert table is not None
    attentions = sum(float(o.get("count") or 1) for o in table.ops if o["kind"] == "attention")
    copies = _copies(work)
    assert copies and all(o.phase != operators.DECODE_PHASE for o in copies)
    passes = max(1, work.model.passes_per_sample or 1)
    # one UNet call per step on 2 x batch latents: counts scale by the passes over guidance
    assert sum(o.count for o in copies) == pytest.approx(attentions * passes / 2.0)


@pytest.mark.parametrize(
    ("runtime", "copies"),
    [("pytorch", False), ("torch-compile", True), ("tensorrt", True)],
)
def test_only_eager_xformers_pays(runtime: str, copies: bool) -> None:
    assert _copies(_work(runtime, copies)) == []


def test_gpu_bound_step_slows_by_the_copies_bandwidth_host_unchanged() -> None:
    gpu = GPUS["a100-sxm4-40gb"]
    sdpa = perf.single_gpu(gpu, _work(copies=False), backend="cuda")
    xf = perf.single_gpu(gpu, _work(), backend="cuda")
    moved = sum(o.count * o.bytes for o in _copies(_work()))
    at_peak = moved / (gpu.memory_bandwidth_gbs * 1e9)
    # GPU-bound at 32 latents: the step grows by the copies' bytes at the achieved bandwidth
    # (no faster than the datasheet's), a few per cent of it
    assert xf.step_s - sdpa.step_s >= at_peak
    assert 0.01 * sdpa.step_s < xf.step_s - sdpa.step_s < 0.05 * sdpa.step_s
    # the host's ATen calls are not recounted (the per-call figure was read off these stacks)
    assert perf.table_host_calls(_work()) == perf.table_host_calls(_work(copies=False))


def test_host_bound_batch_one_does_not_move() -> None:
    # two latents on an A100: the loop is bound by the host's dispatch, not the copies
    gpu = GPUS["a100-sxm4-40gb"]
    sdpa = perf.single_gpu(gpu, _work(copies=False, batch=1), backend="cuda").step_s
    xf = perf.single_gpu(gpu, _work(batch=1), backend="cuda").step_s
    assert xf == pytest.approx(sdpa, rel=0.01)


def test_no_table_no_copies() -> None:
    # a job without a table (no operators) ignores the field
    model = replace(PRESETS["stable-diffusion-1.5"].model, operators=None)
    work = replace(_work(), model=model)
    assert _copies(work) == []
