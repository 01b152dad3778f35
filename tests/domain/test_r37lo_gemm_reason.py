"""A convolution regime's vendor reason names what the row runs (issue 23, 2026-12-07): the
"train" regime holds BERT, T5 and ViT training beside CNNs, and "infer-diffusion" FLUX.1's DiT
beside UNets; an AMD or Intel row of a network without convolutions had read "its convolutions
run MIOpen … so it likely overstates that speed". Its band names the GEMM library it runs and
no lean; the factors stay the unmeasured vendor's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import bands, perf, rank
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import BERT_LARGE, MI300X, RESNET50

TABLE = load_efficiency()
ROW = bands.BandInputs(
    regime="train", vendor="amd", architecture="CDNA 3", runtime="pytorch",
    efficiency_source="prior",
)  # fmt: skip


def test_a_gemm_network_on_amd_names_its_blas_not_miopen() -> None:
    _, _, basis = bands.band(replace(ROW, convolutions=False), TABLE)
    assert "GEMMs and attention" in basis and "hipBLASLt or rocBLAS" in basis
    assert "MIOpen" not in basis and "convolutions run" not in basis
    assert bands.LEANS_HIGH not in basis


def test_a_gemm_network_on_intel_names_onednns_matmul_and_no_lean() -> None:
    _, _, basis = bands.band(
        replace(ROW, vendor="intel", architecture="Xe-HPG (Alchemist)", convolutions=False), TABLE
    )
    assert "oneDNN's matmul" in basis and "GEMMs and attention" in basis
    assert "5.75×" not in basis and bands.LEANS_HIGH not in basis


def test_a_convolution_network_keeps_its_librarys_reason_and_lean() -> None:
    _, _, basis = bands.band(ROW, TABLE)  # convolutions: True where the caller does not say
    assert "convolutions run MIOpen" in basis and bands.LEANS_HIGH in basis


@pytest.mark.parametrize("vendor", ["amd", "intel", "apple"])
def test_the_words_change_no_factor(vendor: str) -> None:
    gemm = bands.vendor_widening(vendor, None, convolutions=False)
    conv = bands.vendor_widening(vendor, None)
    assert (gemm.low, gemm.high) == (conv.low, conv.high)
    assert (gemm.low, gemm.high) == (bands.UNMEASURED_VENDOR.low, bands.UNMEASURED_VENDOR.high)
    assert bands.LEANS_HIGH not in gemm.reason


def _inputs(work: WorkloadSpec) -> bands.BandInputs:
    est = perf.estimate(MI300X, work, num_gpus=1)
    return rank.row_band_inputs(MI300X, work, est, False)


def test_a_rows_band_inputs_say_whether_its_network_convolves() -> None:
    """The row's key carries ModelSpec.conv_layers: BERT training on an MI300X reads the GEMM
    reason through the app's own path, ResNet-50 training the convolution library's."""
    bert = WorkloadSpec(
        model=BERT_LARGE, task="training", batch_size=32, seq_len=128, precision="fp16",
        efficiency=TABLE,
    )  # fmt: skip
    cnn = WorkloadSpec(
        model=RESNET50, task="training", batch_size=256, precision="fp16", efficiency=TABLE
    )
    assert _inputs(bert).convolutions is False and _inputs(cnn).convolutions is True
    assert _inputs(bert).regime == _inputs(cnn).regime == "train"
    _, _, bert_basis = bands.band(_inputs(bert), TABLE)
    _, _, cnn_basis = bands.band(_inputs(cnn), TABLE)
    assert "hipBLASLt" in bert_basis and "MIOpen" not in bert_basis
    assert "MIOpen" in cnn_basis and bands.LEANS_HIGH in cnn_basis
