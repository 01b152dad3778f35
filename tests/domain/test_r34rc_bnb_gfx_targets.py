"""bitsandbytes on AMD, per gfx target, and on Intel XPU, as bitsandbytes 0.50.2 ships them.

The AMD rule had read "supported" for every ROCm card. The 0.50.2 wheels carry kernels for a
list of gfx targets (read from the wheels' HIP offload bundles; the README's accelerator table
names the same): gfx908 (MI100) is among them since PR #2046, Vega gfx906 (Radeon Pro VII,
MI50) is not, so a pip install gives it no kernel to load. The wheels' ROCm 7.14 library had
also been read as "ROCm 7.1.4"."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import yaml

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules

FEATURES = ("bitsandbytes_4bit", "bitsandbytes_8bit_optim")


@functools.cache
def _specs() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA_DIR)}


@functools.cache
def _rules() -> compat.Rules:
    return load_rules(DATA_DIR)


def _status(gpu: GpuSpec, feature: str, backend: str) -> compat.FeatureStatus:
    st = compat.feature_status(gpu, feature, _rules(), backend)
    assert st is not None
    return st


@pytest.mark.parametrize("feature", FEATURES)
def test_the_mi100_is_in_the_wheels_targets(feature: str) -> None:
    mi100 = _specs()["mi100"]
    assert mi100.compute_capability == "gfx908"
    st = _status(mi100, feature, "rocm")
    assert st.status == "supported"
    # the note says where gfx908 comes from: a wheel before PR #2046 may not carry it
    if feature == "bitsandbytes_4bit":
        assert st.note is not None and "gfx908" in st.note and "#2046" in st.note


@pytest.mark.parametrize("feature", FEATURES)
def test_a_vega_card_outside_the_targets_is_experimental_and_says_why(feature: str) -> None:
    vii = _specs()["radeon-pro-vii"]
    assert vii.compute_capability == "gfx906"
    st = _status(vii, feature, "rocm")
    assert st.status == "experimental"
    assert st.note is not None and "0.50.2" in st.note and "-DBNB_ROCM_ARCH" in st.note


@pytest.mark.parametrize(
    ("gfx", "status"),
    [
        ("gfx900", "experimental"),  # Vega 10 (MI25, Vega 64): in no wheel
        ("gfx1030", "supported"),  # RDNA2: added to every Linux build by PR #2046
        ("gfx1031", "supported"),  # RDNA2: in the ROCm 7.14 and 7.15 libraries
        ("gfx1012", "supported"),  # RDNA1: ROCm 7.14 and 7.15 libraries
        ("gfx950", "supported"),
        ("gfx1250", "supported"),
    ],
)
def test_status_follows_the_gfx_target(gfx: str, status: str) -> None:
    gpu = dataclasses.replace(_specs()["radeon-pro-vii"], compute_capability=gfx)
    for feature in FEATURES:
        assert _status(gpu, feature, "rocm").status == status, (feature, gfx)


def test_a_qlora_job_on_a_vega_card_is_ranked_with_the_caveat_not_refused() -> None:
    vii = _specs()["radeon-pro-vii"]
    why, caveats = compat.job_support(
        vii, compat.job_features("qlora", "adam8bit"), _rules(), "rocm"
    )
    assert why is None
    assert len(caveats) == 2
    assert caveats[0].startswith("QLoRA (bitsandbytes 4-bit) on AMD GPUs (ROCm) is experimental: ")
    assert caveats[1].startswith("8-bit AdamW (bitsandbytes) on AMD GPUs (ROCm) is experimental: ")
    # on the MI100 the same job carries none
    mi100 = _specs()["mi100"]
    assert compat.job_support(
        mi100, compat.job_features("qlora", "adam8bit"), _rules(), "rocm"
    ) == (
        None,
        (),
    )


def test_the_wheel_source_reads_rocm_7_14_not_7_1_4() -> None:
    """build-rocm.sh names a library by ROCm major+minor: rocm714 is ROCm 7.14 (TheRock)."""
    doc = yaml.safe_load((DATA_DIR / "frameworks.yaml").read_text(encoding="utf-8"))
    bnb = [r for r in doc["features"] if str(r["feature"]).startswith("bitsandbytes_")]
    said = (
        " ".join(str(r.get("notes")) for r in bnb) + doc["sources"]["bnb-pypi-050-wheels"]["title"]
    )
    assert "7.1.4" not in said
    assert "ROCm 7.14" in doc["sources"]["bnb-pypi-050-wheels"]["title"]
    for r in bnb:
        assert r["source"] in doc["sources"], r["source"]


@pytest.mark.parametrize("feature", FEATURES)
def test_the_arc_b580_follows_the_readme_table(feature: str) -> None:
    """Intel XPU: official since 0.48.1, Arc B-Series marked supported for QLoRA 4-bit and
    8-bit optimizers in 0.50.2's accelerator table; the note says what its kernels need."""
    st = _status(_specs()["arc-b580"], feature, "xpu")
    assert st.status == "supported"
    assert st.note is not None and "Arc" in st.note and "Triton" in st.note
