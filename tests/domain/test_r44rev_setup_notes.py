"""The verdict's setup notes come from the rules the request ran under (compat.setup_notes),
not from a data folder the summary read for itself."""

from __future__ import annotations

from app.domain.compat import FrameworkRule, Rules, setup_notes
from app.shipped.rules import load_rules


def test_setup_notes_are_the_rules_caveats_only() -> None:
    rules = Rules(
        frameworks=(
            FrameworkRule("tensorflow", "rocm", vendor="amd", caveat="use tensorflow-rocm"),
            FrameworkRule("pytorch", "cuda", vendor="nvidia"),
        )
    )
    assert setup_notes(rules) == frozenset({"use tensorflow-rocm"})
    assert setup_notes(Rules()) == frozenset()


def test_the_shipped_rules_name_the_rocm_tensorflow_build() -> None:
    notes = setup_notes(load_rules())
    assert any(n.startswith("TensorFlow on ROCm is AMD's tensorflow-rocm build") for n in notes)
