"""Shared fixtures for the benchmark tests (CPU only unless marked gpu)."""

from __future__ import annotations

from typing import Any

import pytest

from app.bench.report import (
    BenchReport,
    Environment,
    Figure,
    MatmulRow,
    MatmulSuite,
    MatmulSummary,
    MemorySuite,
)
from app.bench.suites.common import CnnConfig, ConvLayer, KernelConfig, Profile, TransformerConfig
from app.bench.timing import TimingConfig

TINY_KERNELS = KernelConfig(
    gemm_shapes=((1, 64, 64), (16, 64, 64), (64, 64, 64)),
    gemm_precisions=("fp32",),
    attention_bhd=(1, 2, 16),
    prefill_contexts=(16, 32),
    decode_contexts=(64,),
    dtypes=("fp32",),
    elementwise_numel=(1 << 12,),
    norm_shapes=((16, 64),),
    embedding_shapes=((128, 32, 16),),
    graph_kernels=10,
    collective_bytes=(1 << 12,),
)


def make_tiny_profile() -> Profile:
    """Every suite at toy sizes: a full run takes a few seconds on a 2-core CPU."""
    fast = TimingConfig(
        warmup_s=0.002,
        min_warmup_calls=3,
        block_s=0.004,
        n_blocks=3,
        min_blocks=3,
        max_total_s=0.05,
    )
    return Profile(
        name="tiny",
        timing=fast,
        global_warmup_s=0.01,
        matmul_reference=(128, 128, 128),
        matmul_search=((64, 64, 64),),
        matmul_emulated=(32, 32, 32),
        conv_batch=1,
        conv_layers=(ConvLayer("tiny_3x3", 8, 8, 8, 3, 1, 1),),
        conv_precisions=("fp32",),
        memory_min_bytes=1 << 20,
        memory_llc_multiple=0,
        transfer_sizes=(1 << 12, 1 << 16),
        transfer_headline=1 << 16,
        cnn=CnnConfig(channels=8, bottleneck=4, hw=4),
        transformer=TransformerConfig(d_model=16, heads=2, ff=32, seq=8),
        batches=(1, 2, 4),
        batch_precisions=("auto",),
        batch_step_cap_s=1.0,
        batch_timing=fast,
        peak_memory_batches=(1, 4),
        kernels=TINY_KERNELS,
    )


@pytest.fixture
def tiny_profile() -> Profile:
    return make_tiny_profile()


def fig(value: float, unit: Any = "TFLOPS") -> Figure:
    return Figure(
        value=value,
        unit=unit,
        p10=value * 0.98,
        p90=value * 1.01,
        n_blocks=5,
        iters_per_block=1,
        median_time_s=0.01,
    )


def env() -> Environment:
    return Environment(
        backend="cuda",
        device="cuda:0",
        device_name="Test GPU",
        os="Linux",
        python_version="3.11",
        torch_version="2.13.0",
    )


def make_report() -> BenchReport:
    summaries = {
        "fp32": MatmulSummary(
            precision="fp32",
            native=True,
            reference=fig(40.0),
            best=fig(50.0),
            best_shape=(8192, 8192, 8192),
        ),
        "bf16": MatmulSummary(
            precision="bf16",
            native=True,
            reference=fig(700.0),
            best=fig(790.0),
            best_shape=(8192, 8192, 8192),
        ),
        "fp16": MatmulSummary(
            precision="fp16", native=False, note="emulated", reference=fig(1.0), best=fig(1.0)
        ),
    }
    rows = [
        MatmulRow(
            precision="bf16",
            m=8192,
            n=8192,
            k=8192,
            flops=2 * 8192**3,
            role="reference",
            figure=fig(790.0),
        )
    ]
    return BenchReport(
        profile="quick",
        environment=env(),
        matmul=MatmulSuite(reference_shape=(8192, 8192, 8192), rows=rows, by_precision=summaries),
        memory=MemorySuite(
            array_bytes=1 << 30,
            rows=[],
            best=fig(4300.0, "GB/s"),
            best_kernel="copy",
            triad=fig(4100.0, "GB/s"),
        ),
    )
