"""benchmarks/band_widths.py: a band taken apart step by step (issue 23). The tuning rows it
finds behind a shipped band must be the ones that band was fitted on, and its steps must add
up to the band bands.band draws."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

import pytest

from app.domain import bands
from app.shipped.rules import load_efficiency
from tests.support import ROOT, load_benchmark

TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
TABLE = load_efficiency(ROOT / "data")


@pytest.fixture(scope="module")
def widths() -> ModuleType:
    return load_benchmark("band_widths.py", "bench_band_widths")


@pytest.fixture(scope="module")
def cal(widths) -> list:
    return widths.acc.calibration_rows(ROOT / "data", TRAIN, widths.acc.INFERENCE_FILE)


# a runtime's band, a kind banded apart, the regime without that kind, a vendor's band, and the
# bands of the regimes that missed the goal on width (tf-cnn-inference, diffusion-compiled, timm
# torch.compile)
KEYS = [
    ("infer-cnn/tensorflow", "nvidia"),
    ("infer-cnn/tensorflow-xla", "all"),
    ("infer-cnn/torch-compile", "nvidia"),
    ("infer-diffusion/tensorrt", "all"),
    ("train-llm/fine-tuning", "all"),
    ("train-llm", "all"),
    ("decode/llama.cpp", "apple"),
]


@pytest.mark.parametrize(("key", "vendor"), KEYS)
def test_rows_behind_a_band_refit_to_the_shipped_band(widths, cal, key, vendor) -> None:
    rows = widths.band_rows(cal, key, vendor)
    fit = widths.acc._band_score(key, vendor, rows)
    assert (round(fit.low, 2), round(fit.high, 2)) == TABLE.bands[(key, vendor)]
    rec = widths.record(rows)
    # the shipped band is the envelope of the checks; the in-sample band sits inside it
    lo, hi = TABLE.bands[(key, vendor)]
    assert lo - 0.005 <= rec.floor[0] and rec.floor[1] <= hi + 0.005


def test_steps_add_up_to_the_band_a_row_draws(widths) -> None:
    """A TensorFlow CNN row on a derived-peak card: base, then the widening, then the term,
    each step no narrower, the last the band bands.band draws with that term."""
    x = bands.BandInputs("infer-cnn", "nvidia", "Turing", "tensorflow", "prior", derived_peak=True)
    term = (0.8, 1.3)
    st = widths.steps(x, TABLE, term)
    assert (st.key, st.vendor) == ("infer-cnn/tensorflow", "nvidia")
    assert st.base <= st.widened <= st.total
    assert len(st.widenings) == 1 and "derived" in st.widenings[0]
    lo, hi, _ = bands.band(x, replace(TABLE, new_source={"all": term}))
    assert st.total == pytest.approx(hi / lo)
    base_lo, base_hi = TABLE.bands[("infer-cnn/tensorflow", "nvidia")]
    assert st.base == pytest.approx(base_hi / base_lo)
