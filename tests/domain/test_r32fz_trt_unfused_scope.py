"""The TensorRT Volta unfused-attention row (data/efficiency.yaml, trt-bert-mha-sm) rests on the
BERT attention plugin alone, yet it had matched every TensorRT job on Volta: a ViT, a diffusion
UNet or FLUX on a V100 was priced with the plugin's unfused runner. Since session 32 (fz) the row
names family encoder (a match key of its own) and regime infer."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
V100 = next(g for g in read_gpu_specs(DATA) if g.slug == "v100-sxm2-16gb")
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)


@pytest.mark.parametrize(
    ("family", "regime", "attention"),
    [("encoder", "infer", "unfused"), ("vit", "infer", "fused"),
     ("diffusion", "infer-diffusion", "fused"), ("decoder", "infer", "fused"),
     ("encoder", "train", "fused"), ("", "infer", "fused")],
)  # fmt: skip
def test_only_encoder_inference_reads_the_unfused_row(
    family: str, regime: str, attention: str
) -> None:
    prof = TABLE.profile(V100, "cuda", "tensorrt", "fp16", regime, family)
    assert prof.attention == attention


@pytest.mark.parametrize(("preset", "attention"), [("bert-base", "unfused"), ("vit-b-16", "fused"),
                                                   ("sdxl", "fused")])  # fmt: skip
def test_the_workload_passes_its_family(preset: str, attention: str) -> None:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS[preset].model,
        precision="fp16",
        runtime="tensorrt",
        efficiency=TABLE,
    )
    prof = perf.profile_for(V100, work, "cuda", perf.phase_regime(work))
    assert prof.attention == attention
