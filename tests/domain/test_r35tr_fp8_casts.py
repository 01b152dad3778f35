"""fp8 training in a PyTorch program pays its FP8 cast passes (thirty-fifth session, "tr").

torchao's Float8Linear (torchtitan docs/float8.md: "we cast input and weight into float8 inside
forward before calling torch._scaled_mm") and Transformer Engine's te.Linear under
te.fp8_autocast (Composer's amp_fp8) cast the GEMM operands to FP8 with kernels of their own;
until 2026-12-06 only the megatron runtime charged them, so an fp8 job on eager PyTorch or
torch.compile ran its GEMMs at the FP8 peak with no cast traffic. The passes charged are
Megatron's (operators.fp8_cast_ops), plus (f8) a pass over each GEMM input that no fused
producer writes in FP8 outside Megatron."""

from __future__ import annotations

import pytest

from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_8B

TABLE = load_efficiency()
CASTS = {"fp8.cast_transpose.attn_out", "fp8.cast_transpose.grad_out", "fp8.cast_transpose.weights"}


def _work(runtime: str, precision: str = "fp8", task: str = "training") -> WorkloadSpec:
    return WorkloadSpec(
        task=task,
        model=LLAMA3_8B,
        precision=precision,
        batch_size=2,
        seq_len=4096,
        runtime=runtime,
        efficiency=TABLE,
    )


def _casts(work: WorkloadSpec) -> dict[str, float]:
    """Each cast pass of the step: its bytes moved over the whole step."""
    ops = perf.step_ops(work, True, 2.0) or []
    return {o.name: o.count * (o.bytes_read + o.bytes_written) for o in ops if o.role == "fp8"}


@pytest.mark.parametrize("runtime", ["pytorch", "torch-compile"])
def test_fp8_training_in_a_pytorch_program_casts_its_gemm_operands(runtime: str) -> None:
    casts = _casts(_work(runtime))
    assert set(casts) >= CASTS
    # Megatron's passes with their bytes (plus the GEMM inputs no fused producer writes in
    # FP8 here: tests/domain/test_r35f8_fp8_input_casts.py)
    assert {k: casts[k] for k in CASTS} == pytest.approx(_casts(_work("megatron")))


@pytest.mark.parametrize("runtime", ["pytorch", "torch-compile"])
def test_no_cast_passes_at_bf16_or_when_serving(runtime: str) -> None:
    assert not _casts(_work(runtime, precision="bf16"))
    assert not _casts(_work(runtime, task="inference"))


def test_the_cast_passes_slow_the_step_by_less_than_fp8_gains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An 8B fp8 step of 8192 tokens on an H100: the casts (a few activation-sized tensors per
    layer, 2 B in and 2 B out per element) cost time, but far less than the FP8 GEMMs gain."""
    bf16 = perf.estimate(H100, _work("pytorch", precision="bf16"), backend="cuda").throughput
    with_casts = perf.estimate(H100, _work("pytorch"), backend="cuda").throughput
    monkeypatch.setattr(perf, "_fp8_casts", lambda w: False)
    # a job of its own: estimates are memoised per job object
    without = perf.estimate(H100, _work("pytorch"), backend="cuda").throughput
    assert bf16 < with_casts < without
    assert with_casts > 0.85 * without
