"""PyTorch rows on Intel GPUs need to say how PyTorch is installed there (review 4, #9): the
`pytorch_install` rule (data/frameworks.yaml) read through compat.install_note, the way the
ROCm-on-Windows note is read for AMD rows, a tip rather than a caveat of the answer."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def test_an_intel_gpu_names_pytorchs_xpu_wheels() -> None:
    rules = load_rules(DATA)
    for slug in ("arc-b580", "arc-a770-16gb", "max-1100"):
        note = compat.install_note(GPUS[slug], rules, "xpu")
        assert note is not None, slug
        assert "https://download.pytorch.org/whl/xpu" in note
        assert "2.5" in note and "'xpu'" in note


def test_no_note_where_pip_default_wheel_or_another_stack_applies() -> None:
    rules = load_rules(DATA)
    assert compat.install_note(GPUS["rtx-4090"], rules, "cuda") is None
    assert compat.install_note(GPUS["rx-7900-xtx"], rules, "rocm") is None
    assert compat.install_note(GPUS["gaudi2"], rules, "hpu") is None  # Intel's own Gaudi builds
    # not a row warning: the framework rule's caveat is PyTorch's Prototype label, never the
    # install note (issue #23: a note as a warning led every such answer's verdict)
    caveat = compat.framework_support(GPUS["arc-b580"], "pytorch", rules).caveat
    assert caveat is not None and "'Prototype'" in caveat
    assert "download.pytorch.org" not in caveat
