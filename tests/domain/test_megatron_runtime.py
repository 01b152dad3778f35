"""Megatron-LM / NeMo on Transformer Engine as an execution policy (data/efficiency.yaml's
megatron rows): which passes of the eager step it fuses away, the FP8 cast-transpose passes it
adds, its attention kernel and host dispatch, against eager PyTorch on the same job."""

from __future__ import annotations

import pytest

from app.domain import operators as ops_mod
from app.domain import perf
from app.domain.gpu import GpuSpec
from app.domain.kernels import prepare
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, LLAMA3_8B

TABLE = load_efficiency()
# the passes eager Llama-style code runs that TE / Megatron's fused kernels do not
EAGER_ONLY = {
    "rmsnorm.fp32",
    "rmsnorm.fp32.final",
    "rotary.fp32",
    "swiglu.silu",
    "repeat_kv",
    "attention.out_copy",
    "loss.cast",
    "autocast.weights",
}
# the fused kernels Megatron still launches (norm, RoPE, SwiGLU, residual adds, loss, embedding)
KEPT = {"rmsnorm.attn", "rmsnorm.mlp", "rotary", "swiglu", "residual.attn", "loss.log_softmax"}


def _work(runtime: str, precision: str = "bf16") -> WorkloadSpec:
    return WorkloadSpec(
        task="training",
        model=LLAMA3_8B,
        precision=precision,
        batch_size=2,
        seq_len=4096,
        runtime=runtime,
        efficiency=TABLE,
    )


def _names(work: WorkloadSpec, gpu: GpuSpec = H100) -> set[str]:
    """The ops of the step that launch a kernel under the runtime's fusion policy."""
    prof = TABLE.profile(gpu, "cuda", work.runtime, work.precision, perf.phase_regime(work))
    ops = perf.step_ops(work, True, 2.0) or []
    fused = set(prof.fuse)
    return {o.name.removesuffix(".bwd") for o in ops if not (o.role and o.role in fused)}


def test_megatron_fuses_the_eager_only_passes_and_keeps_its_fused_kernels() -> None:
    eager, megatron = _names(_work("pytorch")), _names(_work("megatron"))
    assert EAGER_ONLY.issubset(eager)
    assert not EAGER_ONLY & megatron
    assert KEPT.issubset(megatron) and KEPT.issubset(eager)


def test_megatron_fp8_adds_transformer_engines_cast_transpose_passes() -> None:
    # eager PyTorch and torch.compile run them too since 2026-12-06 (test_r35tr_fp8_casts.py)
    def fp8_ops(runtime: str, precision: str) -> list[ops_mod.Op]:
        ops = perf.step_ops(_work(runtime, precision), True, 2.0) or []
        return [o for o in ops if o.role == "fp8"]

    assert not fp8_ops("pytorch", "bf16")
    assert not fp8_ops("megatron", "bf16")
    casts = {o.name: o for o in fp8_ops("megatron", "fp8")}
    t, layers = 2 * 4096, 32
    h, kv, inter = 4096, 8 * 128, 14336
    # forward: the attention output (the projection's input); 2 B in, FP8 copy + transpose out
    attn = casts["fp8.cast_transpose.attn_out"]
    assert (attn.count, attn.bytes_read, attn.bytes_written) == (layers, 2 * t * h, 2 * t * h)
    # backward: the output gradients of QKV, projection, FC1 (gate + up) and FC2
    grad = casts["fp8.cast_transpose.grad_out"]
    grads = t * ((h + 2 * kv) + h + 2 * inter + h)
    assert grad.count == 4 * layers and grad.bytes_read * grad.count / layers == pytest.approx(
        2 * grads
    )
    # the weights once per step
    assert casts["fp8.cast_transpose.weights"].bytes_read == pytest.approx(2 * LLAMA3_8B.params)
    # no runtime fuses them away
    prof = TABLE.profile(H100, "cuda", "megatron", "fp8", "train-llm")
    assert "fp8" not in prof.fuse
    launched = prepare(list(casts.values()), prof.fuse).kernels
    assert launched == pytest.approx(layers + 4 * layers + 1)


def test_megatron_attention_is_not_held_to_flashattention2s_hopper_ceiling() -> None:
    eager = TABLE.profile(H100, "cuda", "pytorch", "bf16", "train-llm")
    megatron = TABLE.profile(H100, "cuda", "megatron", "bf16", "train-llm")
    assert eager.flash_peak_share == pytest.approx(0.35)
    assert megatron.flash_peak_share is None
    assert megatron.attention == "fused"


def test_megatron_dispatches_from_the_host_like_eager_pytorch_without_hf_overheads() -> None:
    eager = TABLE.profile(A100, "cuda", "pytorch", "bf16", "train-llm")
    megatron = TABLE.profile(A100, "cuda", "megatron", "bf16", "train-llm")
    assert megatron.host_us_per_op == pytest.approx(10.0)
    assert 0 < megatron.host_us_per_op < eager.host_us_per_op
    assert megatron.kernel_us == eager.kernel_us  # no CUDA graphs by default


@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_the_same_llm_training_step_is_faster_under_megatron(precision: str) -> None:
    eager = perf.estimate(H100, _work("pytorch", precision), backend="cuda")
    megatron = perf.estimate(H100, _work("megatron", precision), backend="cuda")
    assert megatron.runtime == "megatron"
    assert megatron.throughput > eager.throughput
    # fusion moves memory time and launches; the GEMM FLOPs are the same
    assert megatron.memory_s < eager.memory_s


def test_the_fusing_runtimes_drop_the_split_activation_too() -> None:
    # torch.compile and XLA fused the eager SiLU before it had its own role: they still do
    for runtime in ("torch-compile", "tensorflow-xla", "jax"):
        assert "split" in TABLE.profile(A100, "cuda", runtime, "bf16", "train-llm").fuse
    assert "split" not in TABLE.profile(A100, "cuda", "pytorch", "bf16", "train-llm").fuse
