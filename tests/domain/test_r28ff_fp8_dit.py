"""fp8 follows the denoiser's layers, not the word "diffusion" (review rvA #2).

Stock PyTorch has no fp8 convolutions (data/frameworks.yaml fp8_convolution: torchao float8
and Transformer Engine convert Linear layers only), so a CNN and an SD/SDXL UNet run their
fp8 request at bf16. FLUX.1's denoiser is a rectified-flow transformer of Linear layers: its
traced table (data/operators/flux-1-dev.yaml) has GEMMs, attention and element-wise ops and no
convolution, so torchao float8 (https://huggingface.co/blog/flux-qlora trains it so on an
H100) and TensorRT's FP8 engines run its matmuls in fp8; the VAE's convolutions stay 16-bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.workload import ModelSpec
from app.recommend.presets import DATA_DIR, load_presets
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)
RULES = load_rules(DATA_DIR)
H100 = {g.slug: g for g in read_gpu_specs(DATA)}["h100-sxm"]


@pytest.mark.parametrize("preset", ["flux-1-dev", "flux-1-schnell"])
def test_a_dit_denoiser_has_no_convolutions(preset: str) -> None:
    assert PRESETS[preset].model.family == "diffusion"
    assert PRESETS[preset].model.conv_layers is False


@pytest.mark.parametrize("preset", ["sdxl", "stable-diffusion-1.5", "resnet-50"])
def test_unets_and_cnns_have_convolutions(preset: str) -> None:
    assert PRESETS[preset].model.conv_layers is True


def test_a_diffusion_model_with_no_table_counts_as_a_unet() -> None:
    # nothing says which denoiser it has: refused as before
    assert ModelSpec(family="diffusion", params=2.6e9).conv_layers is True
    assert ModelSpec(family="decoder", params=8e9).conv_layers is False


def test_fp8_runs_for_flux_and_stays_refused_for_unets() -> None:
    flux = PRESETS["flux-1-dev"].model
    sdxl = PRESETS["sdxl"].model
    assert compat.resolve_precision(
        H100, "fp8", RULES, "cuda", family=flux.family, convs=flux.conv_layers
    ) == ("fp8", None)
    prec, warn = compat.resolve_precision(
        H100, "fp8", RULES, "cuda", family=sdxl.family, convs=sdxl.conv_layers
    )
    assert prec == "bf16" and warn is not None and "no fp8 convolutions" in warn
    # a caller that gives the family alone keeps the old rule
    assert compat.resolve_precision(H100, "fp8", RULES, "cuda", family="diffusion")[0] == "bf16"
