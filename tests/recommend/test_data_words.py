"""Words the shipped data shows on rows: each says what its own source says of its own case."""

from __future__ import annotations

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.recommend.quality import cost_note
from app.shipped.rules import DATA_DIR, load_rules

XPU_GPU = "max-1100"  # an Intel Data Center GPU Max (backend xpu)


def test_nvfp4_carries_the_caveat_fp4_carries() -> None:
    """Both cite NVIDIA's NVFP4 blog's large calibrated models; the nvfp4 words dropped the
    caveat that small models lose more."""
    fp4, nvfp4 = cost_note("fp4"), cost_note("fp4", "nvfp4")
    assert fp4 is not None and "small models lose more" in fp4
    assert nvfp4 is not None and "small models lose more" in nvfp4


def test_each_intel_backend_names_itself_in_the_bitsandbytes_notes() -> None:
    """One rule for [xpu, hpu] named only "Intel XPU": a Gaudi (HPU) row read "preview Intel
    XPU backend"."""
    rules = load_rules()
    specs = {g.slug: g for g in read_gpu_specs(DATA_DIR)}
    cases = (("gaudi2", "hpu", "Gaudi", "XPU"), (XPU_GPU, "xpu", "XPU", "Gaudi"))
    for feature in ("bitsandbytes_4bit", "bitsandbytes_8bit_optim"):
        for slug, backend, name, other in cases:
            status = compat.feature_status(specs[slug], feature, rules, backend)
            assert status is not None and status.note is not None, (feature, slug)
            assert name in status.note and other not in status.note, (feature, status.note)
