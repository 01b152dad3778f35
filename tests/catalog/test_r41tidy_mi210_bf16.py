"""Session 41 (tidy): the MI210 carries AMD's BF16 peak (its data sheet's "Peak FP16/BF16
181.0 TF"), cited; a bf16 job on it had been run as "bf16 (fp16 math)" at the same 181, its
rows naming an fp16 path the card does not take."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_catalog, read_gpu_specs
from app.domain import perf
from tests.domain.fixtures import llama31_8b_finetune

DATA = Path(__file__).resolve().parents[2] / "data"


def test_the_mi210_has_its_bf16_peak_with_its_source() -> None:
    entry = next(g for g in read_catalog(DATA) if g.slug == "mi210")
    assert entry.bf16_tflops == entry.fp16_tflops == 181
    cited = entry.field_sources["bf16_tflops"]
    source = next(s for s in entry.sources if s.id == cited)
    assert source.url and "MI210" in source.title and "BF16 181.0" in source.title


def test_bf16_on_the_mi210_is_bf16_math() -> None:
    gpu = next(g for g in read_gpu_specs(DATA) if g.slug == "mi210")
    est = perf.estimate(gpu, llama31_8b_finetune())
    assert est.compute_precision == "bf16"
