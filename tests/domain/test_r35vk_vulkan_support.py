"""llama.cpp's Vulkan build: where the rules offer it (data/frameworks.yaml
`runtime:llama.cpp-vulkan`) and the matmul path each part gets (compat.vulkan_caveat, from
ggml_vk_khr_cooperative_matrix_support in ggml-org/llama.cpp's ggml-vulkan.cpp)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
FEATURE = "runtime:llama.cpp-vulkan"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _status(slug: str) -> compat.FeatureStatus | None:
    return compat.feature_status(_gpus()[slug], FEATURE, load_rules(DATA), "vulkan")


@pytest.mark.parametrize(
    "slug", ["rx-7900-xtx", "rx-9070-xt", "arc-a770-16gb", "arc-b580", "rtx-3090", "rtx-4090"]
)
def test_consumer_cards_of_every_gpu_vendor_run_it(slug: str) -> None:
    st = _status(slug)
    assert st is not None and st.status == "supported"


@pytest.mark.parametrize("slug", ["h100-sxm", "mi300x", "mi210", "gaudi3", "max-1550"])
def test_datacenter_parts_are_not_claimed_and_say_why(slug: str) -> None:
    st = _status(slug)
    assert st is not None and st.status == "unsupported" and st.note


def test_a_mac_is_experimental_through_a_translation_layer() -> None:
    mac = next(g for g in _gpus().values() if g.vendor == "apple")
    st = compat.feature_status(mac, FEATURE, load_rules(DATA), "vulkan")
    assert st is not None and st.status == "experimental" and "MoltenVK" in (st.note or "")


def test_llama_cpp_itself_lists_the_vulkan_backend() -> None:
    st = compat.runtime_status(_gpus()["rx-7900-xtx"], "llama.cpp", load_rules(DATA), "vulkan")
    assert st is not None and st.status == "supported"


def test_the_segment_key_holds_a_rule_to_its_segments() -> None:
    """A rule naming segments does not reach a part of another segment: the same RX 7900 XTX
    filed as a datacenter part falls to the vendor's unsupported rule."""
    xtx = replace(_gpus()["rx-7900-xtx"], segment="datacenter")
    st = compat.feature_status(xtx, FEATURE, load_rules(DATA), "vulkan")
    assert st is not None and st.status == "unsupported"


def test_cooperative_matrix_follows_ggml_s_vendor_gate() -> None:
    g = _gpus()
    # RDNA3: every driver; RDNA4: Mesa RADV only (AMD's drivers: RDNA3 alone)
    assert "on Mesa RADV and AMD's own drivers" in compat.vulkan_caveat(g["rx-7900-xtx"])
    assert "only under Mesa RADV" in compat.vulkan_caveat(g["rx-9070-xt"])
    # Intel: Xe2 yes, Alchemist (A770) off for its regressions
    assert "cooperative matrix (KHR_coopmat)" in compat.vulkan_caveat(g["arc-b580"])
    assert "scalar" in compat.vulkan_caveat(g["arc-a770-16gb"])
    # NVIDIA: from Turing (tensor cores); Pascal has none
    assert "KHR_coopmat" in compat.vulkan_caveat(g["rtx-3090"])
    pascal = next(x for x in g.values() if x.architecture == "Pascal")
    assert "scalar" in compat.vulkan_caveat(pascal)


def test_bf16_weights_run_on_vulkan_with_their_caveat() -> None:
    """PR #12554: mat-vec promotes bf16 to fp32 anywhere; matmul wants VK_KHR_shader_bfloat16.
    A GeForce with bf16 tensor cores is no 'no bf16 support' row on Vulkan."""
    rules = load_rules(DATA)
    gpu = _gpus()["rtx-3090"]
    precision, caveat = compat.resolve_precision(gpu, "bf16", rules, "vulkan")
    assert precision == "bf16" and caveat and "VK_KHR_shader_bfloat16" in caveat
