"""Shared fixtures for the benchmark tests (CPU only unless marked gpu)."""

from __future__ import annotations

import pytest

from app.bench.suites.common import CnnConfig, ConvLayer, Profile, TransformerConfig
from app.bench.timing import TimingConfig


def make_tiny_profile() -> Profile:
    """Every suite at toy sizes: a full run takes a few seconds on a 2-core CPU."""
    fast = TimingConfig(warmup_s=0.002, min_warmup_calls=3, block_s=0.004, n_blocks=3,
                        min_blocks=3, max_total_s=0.05)
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
    )


@pytest.fixture
def tiny_profile() -> Profile:
    return make_tiny_profile()
