"""Issue 23, "honest bands" (seventh pass): a held-out fold is every file citing one source, a
source being its `source` key *or the document it cites* (benchmarks/band_crossfit.py
``publication``), and band_widths.py takes one row's band apart term by term."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

import pytest

from app.domain import bands, conformal
from app.shipped.rules import load_efficiency
from tests.support import ROOT, load_benchmark

BAND = conformal.Spread.of(0.9, 1.1)
TABLE = load_efficiency(ROOT / "data")


@pytest.fixture(scope="module")
def crossfit() -> ModuleType:
    return load_benchmark("band_crossfit.py", "bench_band_crossfit_r27")


@pytest.fixture(scope="module")
def widths() -> ModuleType:
    return load_benchmark("band_widths.py", "bench_band_widths_r27")


def _row(crossfit: ModuleType, file: str, source: str, ratio: float = 1.0, regime: str = "x"):
    inputs = bands.BandInputs("infer-diffusion", "nvidia", "Ampere", "pytorch", "prior")
    row = crossfit.acc.HeldoutRow(
        regime, "g", "a100-sxm4-80gb", "seconds_per_batch", ratio, 1.0, source=source,
        inputs=inputs, file=file,
    )  # fmt: skip
    return crossfit.Scored(row, "infer-diffusion", BAND)


def test_a_document_is_its_url_without_the_revision(crossfit) -> None:
    at_commit = (
        "https://github.com/huggingface/diffusers/blob/06d6b30cafce8f59c89efca4582ad19ec64814da/"
        "docs/source/en/tutorials/fast_diffusion.md"
    )
    on_main = "https://github.com/huggingface/diffusers/blob/main/docs/source/en/tutorials/fast_diffusion.md#x"
    assert crossfit.document(at_commit) == crossfit.document(on_main)
    # another file of the same repository is another document
    other = on_main.replace("fast_diffusion", "other")
    assert crossfit.document(other) != crossfit.document(on_main)


def test_two_keys_citing_one_document_are_one_source(crossfit) -> None:
    """Diffusers' fast_diffusion tutorial times SDXL on one 400 W A100 with and without
    torch.compile ("2.54 s (3.31 s without compile)"); the compiled and eager diffusion sets
    file the two under two keys. They are one source, so the two files are one fold."""
    eager = crossfit.publication("heldout_diffusion_eager", "diffusers-fast-diffusion")
    compiled = crossfit.publication(
        "heldout_diffusion_compiled", "diffusers-fast-diffusion-compile"
    )
    assert eager == compiled
    other = crossfit.publication("heldout_diffusion_eager", "diffusers-torch2-benchmark")
    assert other != eager
    rows = [
        _row(crossfit, "heldout_diffusion_eager", "diffusers-torch2-benchmark"),
        _row(crossfit, "heldout_diffusion_eager", "diffusers-fast-diffusion"),
        _row(crossfit, "heldout_diffusion_compiled", "sdxl-trt-readme"),
        _row(crossfit, "heldout_diffusion_compiled", "diffusers-fast-diffusion-compile"),
        _row(crossfit, "heldout_flux", "benchmarkflux-readme"),
    ]
    folds = crossfit.folds(rows)
    assert {f: len(ss) for f, ss in folds.items()} == {
        "heldout_diffusion_compiled+heldout_diffusion_eager": 4,
        "heldout_flux": 1,
    }


def test_a_file_without_sources_folds_by_its_keys(crossfit) -> None:
    """Files the held-out directory does not hold (hand-built rows) keep the key rule."""
    assert crossfit.publication("no_such_file", "s1") == "key:s1"
    rows = [_row(crossfit, "f1", "s1"), _row(crossfit, "f2", "s2"), _row(crossfit, "f3", "s1")]
    assert set(crossfit.folds(rows)) == {"f1+f3", "f2"}


def test_the_compiled_fold_is_scored_without_the_eager_files_units(crossfit) -> None:
    """Cross-fitted, a compiled row's term is built without its publication's eager unit: a
    need far above (×2 from the eager row at 2.2) that would widen the compiled row's band
    when the two files were separate folds no longer reaches it."""
    extra = [conformal.Held(f"infer-diffusion t{i} -", BAND, (1.0,) * 3) for i in range(9)]
    rows = [
        _row(crossfit, "heldout_diffusion_eager", "diffusers-fast-diffusion", 2.2, "eager"),
        _row(crossfit, "heldout_diffusion_compiled", "diffusers-fast-diffusion-compile", 1.0),
    ]
    banded = {s.row.regime: b for s, b in crossfit.crossfit(rows, crossfit.shipped_rule, extra)}
    assert banded["x"] == pytest.approx(BAND.band())  # nothing of the eager need reaches it


def test_a_rows_terms_compose_to_its_band(widths) -> None:
    """A layer-split llama.cpp prompt row on a derived-peak card: the base band about its
    centre, both widenings named (the layer split's ×1 term too), the new-source term, and the
    band bands.band draws with that term."""
    x = bands.BandInputs(
        "prefill", "nvidia", "Ada Lovelace", "llama.cpp", "prior", derived_peak=True,
        num_gpus=2, span="layers",
    )  # fmt: skip
    bare = replace(TABLE, new_source={})
    row = widths.acc.HeldoutRow(
        "llamacpp-split-prefill", "g", "rtx-4000-ada", "prompt_tokens_per_s", 0.8, 1.0,
        source="s", inputs=x, file="f",
    )  # fmt: skip
    scored = widths.bc.Scored(row, "prefill", bands.spread(x, bare))
    term = (0.75, 1.33)
    rt = widths.row_terms(scored, TABLE, term)
    assert rt.key == "prefill/llama.cpp nvidia"
    assert rt.base == TABLE.bands[("prefill/llama.cpp", "nvidia")]
    reasons = [r for r, _, _ in rt.widenings]
    assert any("derived" in r for r in reasons) and any("layer split" in r for r in reasons)
    lo, hi, _ = bands.band(x, replace(TABLE, new_source={"all": term}))
    assert rt.band == pytest.approx((lo, hi))
    assert rt.inside == (lo <= 0.8 <= hi)
