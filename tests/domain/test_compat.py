"""Framework gating and precision fallback."""

from __future__ import annotations

from app.domain import compat
from app.domain.gpu import GpuSpec
from tests.domain.fixtures import A100, GTX1080TI, H100, M2, MI300X, RTX4090, RULES, T4


def test_fp8_on_ampere_falls_back_to_bf16() -> None:
    p, warn = compat.resolve_precision(A100, "fp8", RULES, "cuda")
    assert p == "bf16" and warn is not None and "fp8" in warn
    assert compat.resolve_precision(H100, "fp8", RULES, "cuda") == ("fp8", None)
    assert compat.resolve_precision(RTX4090, "fp8", RULES, "cuda")[0] == "fp8"


def test_bf16_on_turing_runs_fp16() -> None:
    p, warn = compat.resolve_precision(T4, "bf16", RULES, "cuda")
    assert p == "fp16" and warn


def test_tf32_unavailable_falls_back_to_fp32() -> None:
    assert compat.resolve_precision(T4, "tf32", RULES, "cuda")[0] == "fp32"
    assert compat.resolve_precision(A100, "tf32", RULES, "cuda") == ("tf32", None)


def test_weight_only_quantisation_runs_on_16_bit_parts() -> None:
    assert compat.resolve_precision(T4, "int4", RULES, "cuda") == ("int4", None)


def test_framework_min_compute_capability() -> None:
    kepler = GpuSpec(
        slug="k80",
        name="K80",
        vendor="nvidia",
        architecture="Kepler",
        segment="datacenter",
        memory_gb=12,
        memory_bandwidth_gbs=240,
        compute_capability="3.7",
        backends=("cuda",),
    )
    sup = compat.framework_support(kepler, "pytorch", RULES)
    assert not sup.ok and sup.reason and "5.0" in sup.reason
    assert compat.framework_support(GTX1080TI, "pytorch", RULES).ok


def test_rocm_gfx_targets_and_missing_backends() -> None:
    assert compat.framework_support(MI300X, "pytorch", RULES).backend == "rocm"
    rdna = GpuSpec(
        slug="rx",
        name="RX",
        vendor="amd",
        architecture="RDNA",
        segment="consumer",
        memory_gb=16,
        memory_bandwidth_gbs=500,
        compute_capability="gfx1012",
        backends=("rocm",),
    )
    assert not compat.framework_support(rdna, "pytorch", RULES).ok
    assert not compat.framework_support(MI300X, "jax", RULES).ok


def test_experimental_status_is_reported() -> None:
    sup = compat.framework_support(M2, "tensorflow", RULES)
    assert sup.ok and sup.status == "experimental"


def test_features_follow_compute_capability() -> None:
    assert compat.has_feature(A100, "flash_attention_2", RULES, "cuda") is True
    assert compat.has_feature(T4, "flash_attention_2", RULES, "cuda") is False
    assert compat.has_feature(M2, "flash_attention_2", RULES, "mps") is None


def test_tf32_default_share() -> None:
    assert compat.tf32_fraction(A100, "cnn", "pytorch", False) == 1.0
    assert compat.tf32_fraction(A100, "decoder", "pytorch", False) == 0.0
    assert compat.tf32_fraction(A100, "decoder", "jax", False) == 1.0
    assert compat.tf32_fraction(T4, "cnn", "pytorch", False) == 0.0
    assert compat.tf32_fraction(MI300X, "cnn", "pytorch", False) == 0.0
