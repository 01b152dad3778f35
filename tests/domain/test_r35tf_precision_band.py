"""A runtime's band split by precision class (bands.PRECISION_BANDS, issue #23): a TensorFlow CNN
inference row takes its precision class's band where the tuning sets gave it one, its runtime's
band otherwise; every other runtime's rows keep one band whatever their precision."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import bands
from app.domain.efficiency import EfficiencyTable
from app.shipped.rules import load_efficiency
from tests.support import ROOT

TABLE = EfficiencyTable(
    bands={
        ("infer-cnn", "all"): (0.70, 1.40),
        ("infer-cnn/tensorflow", "all"): (0.65, 1.38),
        ("infer-cnn/tensorflow/16-bit", "all"): (0.92, 1.54),
        ("infer-cnn/pytorch", "all"): (0.87, 1.47),
    },
    centres={
        ("infer-cnn", "all"): 1.0,
        ("infer-cnn/tensorflow", "all"): 0.98,
        ("infer-cnn/tensorflow/16-bit", "all"): 1.25,
        ("infer-cnn/pytorch", "all"): 1.01,
    },
    covered={
        "infer-cnn": (frozenset({"tensorflow", "pytorch"}), frozenset({"Ampere", "Turing"})),
    },
)
TF_AMP = bands.BandInputs(
    regime="infer-cnn", vendor="nvidia", architecture="Turing", runtime="tensorflow",
    efficiency_source="prior", precision="fp16",
)  # fmt: skip


@pytest.mark.parametrize(
    ("regime", "runtime", "precision", "cls"),
    [
        ("infer-cnn", "tensorflow", "fp16", "16-bit"),
        ("infer-cnn", "tensorflow", "bf16", "16-bit"),
        ("infer-cnn", "tensorflow-xla", "tf32", "32-bit"),
        ("infer-cnn", "tensorflow", "fp32", "32-bit"),
        ("infer-cnn", "tensorflow", "int8", ""),  # no split cell holds it
        ("infer-cnn", "pytorch", "fp16", ""),  # eager PyTorch is not split
        ("train", "tensorflow", "fp16", ""),  # nor TensorFlow training
        ("infer-cnn", "tensorflow", "", ""),
    ],
)
def test_the_class_is_only_for_the_split_runtimes(
    regime: str, runtime: str, precision: str, cls: str
) -> None:
    assert bands.precision_class(regime, runtime, precision) == cls
    x = replace(TF_AMP, regime=regime, runtime=runtime, precision=precision)
    assert x.precision_class == cls


def test_a_class_with_its_own_band_takes_it_about_its_own_centre() -> None:
    lo, hi, basis = bands.band(TF_AMP, TABLE)
    assert (lo, hi) == (0.92, 1.54)
    assert "infer-cnn tensorflow 16-bit results" in basis and "(1.25)" in basis


def test_a_class_without_a_band_falls_back_to_its_runtime_then_regime() -> None:
    lo, hi, basis = bands.band(replace(TF_AMP, precision="fp32"), TABLE)
    assert (lo, hi) == (0.65, 1.38)
    assert "32-bit" not in basis
    assert TABLE.band("infer-cnn", "nvidia", "tensorflow-xla", "", "16-bit") == (0.70, 1.40)


def test_another_runtimes_rows_ignore_their_precision() -> None:
    got = {bands.band(replace(TF_AMP, runtime="pytorch", precision=p), TABLE)[:2] for p in
           ("fp16", "fp32", "tf32")}  # fmt: skip
    assert got == {(0.87, 1.47)}


def test_a_kind_banded_apart_still_comes_before_a_precision_class() -> None:
    table = replace(TABLE, bands={**TABLE.bands, ("infer-cnn/k", "all"): (0.5, 2.0)})
    assert table.band("infer-cnn", "nvidia", "tensorflow", "k", "16-bit") == (0.5, 2.0)
    assert table.band_of_precision("infer-cnn", "tensorflow", "16-bit")
    assert not table.band_of_precision("infer-cnn", "tensorflow", "32-bit")


def test_the_shipped_table_splits_both_tensorflow_runtimes_and_the_classes_sit_apart() -> None:
    """data/efficiency.yaml as accuracy.py --write-bands wrote it: each TensorFlow runtime has a
    16-bit and a 32-bit band, the 16-bit centre above the 32-bit one (the engine reads 16-bit
    TensorFlow rows faster than 32-bit ones, relative to what it predicts), and no other
    runtime or regime has a class band."""
    table = load_efficiency(ROOT / "data")
    split = {k for k, _ in table.bands if k.count("/") == 2}
    assert split == {
        f"infer-cnn/{rt}/{c}"
        for rt in ("tensorflow", "tensorflow-xla")
        for c in ("16-bit", "32-bit")
    }
    for rt in ("tensorflow", "tensorflow-xla"):
        hi16 = table.centres[(f"infer-cnn/{rt}/16-bit", "all")]
        lo32 = table.centres[(f"infer-cnn/{rt}/32-bit", "all")]
        assert hi16 > 1.0 > lo32
