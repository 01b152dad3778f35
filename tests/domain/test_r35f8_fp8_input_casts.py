"""fp8 training outside Megatron casts every GEMM input (thirty-fifth session, "f8").

Under Megatron, Transformer Engine's LayerNormLinear / LayerNormMLP write the QKV, FC1 and FC2
inputs in FP8 from the norm and activation kernels, so only the attention output is cast in the
forward (operators.fp8_cast_ops). In a PyTorch program nothing fuses them: an eager te.Linear
casts its own input, and torchao's Float8Linear charges every linear input its cast kernel —
"read in bf16, write twice in float8 (row-major and col-major)", 2 B in and 1 + 1 B out per
element, only the max-abs stage fused into the producer (pytorch/ao
torchao/float8/roofline_utils.py at 086ff72). The pytorch and torch-compile rows of
data/efficiency.yaml (fp8_unfused_inputs) pay those passes; the megatron row does not."""

from __future__ import annotations

import pytest

from app.domain import perf
from app.domain.operators import FP8_CAST_TRANSPOSE_B, Op, fp8_cast_ops
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_8B

TABLE = load_efficiency()
MODEL = LLAMA3_8B  # SwiGLU MLP, grouped-query attention (config.json)
INPUTS = {"fp8.cast_transpose.norm_out", "fp8.cast_transpose.act_out"}


def _bytes(ops: list[Op]) -> dict[str, float]:
    return {o.name: o.count * (o.bytes_read + o.bytes_written) for o in ops}


def test_unfused_inputs_add_one_cast_transpose_pass_per_gemm_input() -> None:
    t = 8192.0
    fused = _bytes(fp8_cast_ops(MODEL, t))
    unfused = _bytes(fp8_cast_ops(MODEL, t, unfused_inputs=True))
    assert not INPUTS & set(fused)
    # the Megatron passes stay as they were
    assert {k: unfused[k] for k in fused} == pytest.approx(fused)
    per_element = sum(FP8_CAST_TRANSPOSE_B)
    assert per_element == 4.0  # torchao's input cast kernel: 2 B in, 1 + 1 B out
    # per layer: the QKV and FC1 inputs (hidden wide) and FC2's (the intermediate width)
    assert unfused["fp8.cast_transpose.norm_out"] == pytest.approx(t * 4096 * 2 * 32 * per_element)
    assert unfused["fp8.cast_transpose.act_out"] == pytest.approx(t * 14336 * 32 * per_element)


def _work(runtime: str, precision: str = "fp8") -> WorkloadSpec:
    return WorkloadSpec(
        task="training",
        model=MODEL,
        precision=precision,
        batch_size=2,
        seq_len=4096,
        runtime=runtime,
        efficiency=TABLE,
    )


def _casts(work: WorkloadSpec) -> set[str]:
    return {o.name for o in perf.step_ops(work, True, 2.0) or [] if o.role == "fp8"}


@pytest.mark.parametrize("runtime", ["pytorch", "torch-compile"])
def test_pytorch_programs_cast_their_gemm_inputs(runtime: str) -> None:
    assert _casts(_work(runtime)) >= INPUTS
    assert not _casts(_work(runtime, precision="bf16"))


def test_megatron_keeps_its_fused_producers() -> None:
    casts = _casts(_work("megatron"))
    assert casts and not INPUTS & casts


def test_the_input_casts_lower_fp8s_gain_but_keep_it_above_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An 8B fp8 step on an H100 under torch.compile: the input passes cost time, a few
    per cent of the step, and fp8 still beats bf16."""
    bf16 = perf.estimate(H100, _work("torch-compile", "bf16"), backend="cuda").throughput
    now = perf.estimate(H100, _work("torch-compile"), backend="cuda").throughput
    monkeypatch.setattr(perf, "fp8_cast_ops", lambda m, t, unfused_inputs=False: fp8_cast_ops(m, t))
    # a job of its own: estimates are memoised per job object
    before = perf.estimate(H100, _work("torch-compile"), backend="cuda").throughput
    assert bf16 < now < before
    assert now > 0.95 * before
