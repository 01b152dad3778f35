"""TensorRT's BERT attention plugin on Volta (session 32, vo): the plugin has fused MHA kernels
for Xavier, Turing, Ampere and later only, so on a V100 it runs its UnfusedMHARunner — two batched
cuBLAS GEMMs around the whole score matrix and one masked scaled softmax kernel between them —
where every later GPU runs the fused kernel (data/efficiency.yaml, trt-bert-mha-sm)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.gpu import GpuSpec
from app.domain.kernels import MEGATRON_SOFTMAX
from app.domain.operators import ATTN_FLASH
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)


def _bert(seq: int, runtime: str = "tensorrt") -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS["bert-base"].model,
        precision="fp16",
        batch_size=1,
        seq_len=seq,
        runtime=runtime,
        efficiency=TABLE,
    )


@pytest.mark.parametrize(
    ("slug", "attention"),
    [("v100-sxm2-16gb", "unfused"), ("v100-pcie-16gb", "unfused"), ("t4", "fused"),
     ("a100-sxm4-40gb", "fused")],
)  # fmt: skip
def test_tensorrt_attention_is_unfused_on_volta_alone(slug: str, attention: str) -> None:
    prof = TABLE.profile(GPUS[slug], "cuda", "tensorrt", "fp16", "infer", "encoder")
    assert prof.attention == attention
    # the rest of TensorRT's row stands on Volta too
    assert "act" in prof.fuse and prof.kernel_us == 2.0


def test_unfused_runtime_keeps_its_softmax_kernel() -> None:
    on = perf._on_gpu(GPUS["v100-sxm2-16gb"], _bert(384), "pytorch", None, "cuda")
    assert "softmax" not in on.drop and "copy" in on.drop
    fused = perf._on_gpu(GPUS["t4"], _bert(384), "pytorch", None, "cuda")
    assert "softmax" in fused.drop


def test_unfused_attention_prices_the_score_matrix() -> None:
    work = _bert(384)
    unfused = perf._unfused_attention(work)
    assert unfused.attention_kernel == MEGATRON_SOFTMAX
    assert perf._unfused_attention(work) is unfused  # one variant per spec
    ops = perf._step_job(unfused, False, 2.0).ops
    assert ops is not None
    names = {o.name for o in ops}
    assert {"attention.qk", "attention.softmax", "attention.av"} <= names
    assert not any(o.klass == ATTN_FLASH for o in ops)
    # 12 heads × 384² scores, read and written once by the softmax kernel
    soft = next(o for o in ops if o.name == "attention.softmax")
    assert soft.bytes == pytest.approx(2 * 12 * 384 * 384 * 2.0)


def test_volta_tensorrt_bert_pays_for_its_unfused_attention() -> None:
    """The same V100 priced as if the plugin had its fused kernel there (compute capability
    7.5 reads the fused row): the unfused attention costs more, and more at 384 tokens,
    whose score matrix is 9× the 128-token one, than at 128."""
    v100 = GPUS["v100-sxm2-16gb"]
    fused_v100 = replace(v100, compute_capability="7.5")

    def step(gpu: GpuSpec, seq: int) -> float:
        return perf.single_gpu(gpu, _bert(seq)).step_s

    slow128 = step(v100, 128) / step(fused_v100, 128)
    slow384 = step(v100, 384) / step(fused_v100, 384)
    assert slow128 > 1.0
    assert slow384 > slow128
