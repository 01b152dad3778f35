"""Single-card review fixes: Arc XMX peaks, Battlemage BF16, the added consumer cards, and the
bitsandbytes status per backend, each read from the shipped data the way the engine reads it."""

from __future__ import annotations

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec
from app.domain.perf import _half_peak
from app.shipped.rules import DATA_DIR, load_rules

SPECS: dict[str, GpuSpec] = {g.slug: g for g in read_gpu_specs(DATA_DIR)}

# (slug, Xe-cores): Intel's 16 XMX engines per Xe-core x 128 FP16/BF16 (256 INT8) ops per clock
ALCHEMIST = (("arc-a770-16gb", 32), ("arc-a750", 28))


@pytest.mark.parametrize(("slug", "xe_cores"), ALCHEMIST)
def test_alchemist_rows_price_16_bit_math_on_xmx_not_at_fp32(slug: str, xe_cores: int) -> None:
    """Both 16-bit formats had no figure, so a row ran its math at the FP32 rate."""
    gpu = SPECS[slug]
    assert gpu.fp16_tflops == pytest.approx(xe_cores * 16 * 128 * 2.4e9 / 1e12, abs=0.05)
    assert gpu.bf16_tflops == gpu.fp16_tflops
    assert gpu.int8_tops == pytest.approx(xe_cores * 16 * 256 * 2.4e9 / 1e12, abs=0.05)
    for precision in ("fp16", "bf16"):
        peak, mode = _half_peak(gpu, precision)
        assert mode == precision and peak == gpu.fp16_tflops
        assert peak is not None and gpu.fp32_tflops is not None
        assert peak > 7 * gpu.fp32_tflops


def test_arc_a750_fp32_uses_the_boost_clock_like_the_a770() -> None:
    a750, a770 = SPECS["arc-a750"], SPECS["arc-a770-16gb"]
    assert a750.fp32_tflops == pytest.approx(3584 * 2 * 2.4e9 / 1e12, abs=0.05)
    assert a770.fp32_tflops == pytest.approx(4096 * 2 * 2.4e9 / 1e12, abs=0.05)


def test_battlemage_bf16_runs_bf16_math_at_the_fp16_rate() -> None:
    """bf16 was empty, so a bf16 job silently ran as 'fp16 math'."""
    b580 = SPECS["arc-b580"]
    assert b580.bf16_tflops == b580.fp16_tflops == 117
    assert _half_peak(b580, "bf16") == (117, "bf16")


ADDED = {
    # slug: (memory GB, compute capability / gfx target, backend)
    "rx-7800-xt": (16, "gfx1101", "rocm"),
    "rx-7700-xt": (12, "gfx1101", "rocm"),
    "rx-9070": (16, "gfx1201", "rocm"),
    "rx-9060-xt-16gb": (16, "gfx1200", "rocm"),
    "rtx-3050-8gb": (8, "8.6", "cuda"),
    "rtx-5060": (8, "12.0", "cuda"),
}


@pytest.mark.parametrize("slug", sorted(ADDED))
def test_added_cards_carry_what_the_engine_needs(slug: str) -> None:
    gpu = SPECS[slug]
    memory_gb, target, backend = ADDED[slug]
    assert gpu.memory_gb == memory_gb and gpu.compute_capability == target
    assert gpu.backends == (backend,)
    assert gpu.memory_bandwidth_gbs and gpu.tdp_w and gpu.fp32_tflops
    assert gpu.fp16_tflops and gpu.bf16_tflops and gpu.fp16_tflops >= gpu.fp32_tflops
    # every added card runs PyTorch on its backend per the shipped rules
    support = compat.framework_support(gpu, "pytorch", load_rules())
    assert support.ok and support.backend == backend


@pytest.mark.parametrize(
    ("slug", "cus", "boost_ghz"), [("rx-9070", 56, 2.52), ("rx-9060-xt-16gb", 32, 3.13)]
)
def test_rdna4_additions_use_the_matrix_rate_not_the_packed_vector_rate(
    slug: str, cus: int, boost_ghz: float
) -> None:
    """AMD's GPUOpen table: RDNA 4 runs 1024 FP16/BF16 and 2048 INT8 ops per clock per CU."""
    gpu = SPECS[slug]
    assert gpu.fp16_tflops == pytest.approx(cus * 1024 * boost_ghz / 1e3, abs=0.05)
    assert gpu.int8_tops == pytest.approx(cus * 2048 * boost_ghz / 1e3, abs=0.1)
    assert gpu.fp16_tflops is not None and gpu.fp32_tflops is not None
    assert gpu.fp16_tflops > 2 * gpu.fp32_tflops


@pytest.mark.parametrize(
    ("slug", "backend", "status"),
    [
        ("arc-a770-16gb", "xpu", "supported"),
        ("arc-b580", "xpu", "supported"),
        ("rx-7800-xt", "rocm", "supported"),
        ("rx-9070", "rocm", "supported"),
        ("gaudi2", "hpu", "experimental"),
    ],
)
def test_bitsandbytes_status_follows_its_current_install_guide(
    slug: str, backend: str, status: str
) -> None:
    rules = load_rules()
    for feature in ("bitsandbytes_4bit", "bitsandbytes_8bit_optim"):
        st = compat.feature_status(SPECS[slug], feature, rules, backend)
        assert st is not None and st.status == status, (feature, slug)
