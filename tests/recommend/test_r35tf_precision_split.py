"""The TensorFlow CNN inference band split by precision class (issue #23, docs/methodology.md
§6.7q "tf"): decided on the tuning rows by cross-validation with each GPU held out
(benchmarks/band_split_cv.py), fitted by accuracy.bands_of, drawn by the app's rows."""

from __future__ import annotations

import pathlib
from types import ModuleType
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import bands
from app.shipped import yamlio
from app.shipped.rules import load_efficiency
from benchmarks import accuracy as acc
from tests.support import ROOT, load_benchmark

DATA = ROOT / "data"
TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"


@pytest.fixture(scope="module")
def split_cv() -> ModuleType:
    return load_benchmark("band_split_cv.py", "bench_band_split_cv")


def _row(rt: str, precision: str, gpu: str, w: int, ratio: float) -> acc.CalRow:
    workload = f"dle m{w} {rt} {precision} {w} samples_per_s src"
    return acc.CalRow(
        "infer-cnn", rt, workload, gpu, "nvidia", "x", ratio,
        precision=acc._precision("infer-cnn", rt, workload),
    )  # fmt: skip


def test_a_tuning_rows_precision_is_read_off_its_workload_only_where_split() -> None:
    assert acc._precision("infer-cnn", "tensorflow", "dle rnx tensorflow tf32 128 s x") == "tf32"
    assert acc._precision("infer-cnn", "tensorflow-xla", "dle rnx tensorflow-xla fp16 8") == "fp16"
    assert acc._precision("infer-cnn", "pytorch", "dle rnx pytorch fp16 8") == ""
    assert acc._precision("train", "tensorflow", "lambda-tf resnet50 fp16 64") == ""


def test_bands_of_splits_a_tensorflow_runtime_by_class_where_each_has_enough_rows() -> None:
    gpus = ("a100", "t4", "v100")
    rows = [
        *(_row("tensorflow", "fp16", g, w, 1.2 + w / 100) for g in gpus for w in range(4)),
        *(_row("tensorflow", "fp32", g, w, 0.8 + w / 100) for g in gpus for w in range(4)),
        *(_row("pytorch", p, g, w, 1.0) for p in ("fp16", "fp32") for g in gpus for w in range(4)),
        # a class with too few rows (acc._enough) gets no band: its rows take the runtime's
        *(_row("tensorflow-xla", "fp16", g, w, 1.0) for g in gpus for w in range(4)),
        _row("tensorflow-xla", "fp32", "a100", 0, 0.7),
    ]
    got = {b.regime: b for b in acc.bands_of(rows) if b.vendor == "all"}
    assert {"infer-cnn/tensorflow/16-bit", "infer-cnn/tensorflow/32-bit"} <= set(got)
    assert "infer-cnn/tensorflow-xla/16-bit" in got
    assert "infer-cnn/tensorflow-xla/32-bit" not in got
    assert not any(k.startswith("infer-cnn/pytorch/") for k in got)
    assert got["infer-cnn/tensorflow/16-bit"].n == got["infer-cnn/tensorflow/32-bit"].n == 12
    assert got["infer-cnn/tensorflow"].n == 24  # the runtime's band keeps every row
    assert got["infer-cnn/tensorflow/16-bit"].bias > got["infer-cnn/tensorflow/32-bit"].bias


def test_the_shipped_class_bands_are_the_tuning_rows_refitted() -> None:
    """Each class band in data/efficiency.yaml is accuracy._band_score over the calibrating
    tuning rows of that runtime and class (superseded pre-release cells out)."""
    cal = acc.calibration_rows(DATA, TRAIN, acc.INFERENCE_FILE)
    table = load_efficiency(DATA)
    for rt in ("tensorflow", "tensorflow-xla"):
        mine = [r for r in cal if r.regime == "infer-cnn" and r.runtime == rt]
        assert all(r.precision_class for r in mine)
        for cls in ("16-bit", "32-bit"):
            sub = [r for r in mine if r.precision_class == cls]
            fit = acc._band_score("x", "all", sub)
            key = (f"infer-cnn/{rt}/{cls}", "all")
            assert (round(fit.low, 2), round(fit.high, 2)) == table.bands[key]
            assert round(fit.bias, 2) == table.centres[key]


def test_the_split_was_chosen_on_the_tuning_rows_with_each_gpu_held_out(split_cv) -> None:
    """The decision record: on the calibrating tuning rows alone, each GPU held out, the
    precision split holds a new card's rows in a narrower band at 80 % than the runtime's one
    band, on each runtime and pooled, with the tuning units' term and without; and no random
    two-way split of the same rows does as well (none of 20)."""
    rows = split_cv.tuning_rows()
    assert all(k[2] in ("tensorflow", "tensorflow-xla") for k, _ in rows)
    term = split_cv.tuning_term()
    for t in (term, None):
        res = split_cv.evaluate(rows, t, ("runtime", "+ precision"))["GPU"]
        for rt in ("tensorflow", "tensorflow-xla", "all"):
            one, split = res[rt]["runtime"], res[rt]["+ precision"]
            assert split.equal_width < one.equal_width
            assert split.coverage >= one.coverage
    mine, others, share = split_cv.placebo_test(rows, term, seeds=20)
    assert share == 0.0 and mine < min(others)


def test_the_split_reads_no_heldout_file(split_cv, monkeypatch) -> None:
    opened: list[str] = []
    real_read = pathlib.Path.read_text

    def read_text(self: pathlib.Path, *a: Any, **k: Any) -> str:
        opened.append(self.name)
        return real_read(self, *a, **k)

    monkeypatch.setattr(pathlib.Path, "read_text", read_text)
    split_cv.tuning_rows()
    split_cv.tuning_term()
    assert "dle_cnn_inference.yaml" in opened
    assert not any(n.startswith("heldout_") for n in opened)


def test_an_app_row_of_tensorflow_amp_draws_its_class_band() -> None:
    """The row the service builds for a TensorFlow AMP job carries its precision into its band
    inputs (rank.row_band_inputs) and draws the 16-bit band; the same job in FP32 the 32-bit
    one; accuracy's benchmark path builds the same inputs."""
    gpu = next(g for g in read_gpu_specs(DATA) if g.slug == "t4")
    doc = yamlio.safe_load((ROOT / "tests" / "data" / "dle_cnn_inference.yaml").read_text())
    row = next(
        r
        for r in doc["measurements"]
        if r["runtime"] == "tensorflow" and r["gpu_slug"] == "t4" and r["precision"] == "fp16"
    )
    table = load_efficiency(DATA)
    for precision, cls in (("fp16", "16-bit"), ("fp32", "32-bit")):
        r = {**row, "precision": precision}
        _, inputs, app = acc.heldout_estimate(r, gpu, DATA, doc.get("models") or {})
        assert inputs.precision == precision and inputs.precision_class == cls
        lo, hi, basis = bands.band(inputs, table)
        assert f"tensorflow {cls}" in basis
        key = (f"infer-cnn/tensorflow/{cls}", "nvidia")
        assert lo <= table.bands[key][0] and hi >= table.bands[key][1]  # the new-source term on top
        assert app is not None and f"tensorflow {cls}" in app[2]
