"""Issue 23, "honest bands" (thirtieth session): what a band's calibration may pool.

- A workload kind banded apart (train-llm's fine-tuning) sizes its new-source term on its own
  sources only, and without a term of its own takes the pooled one, never its regime's
  (bands.term_family, EfficiencyTable.source_term, accuracy.source_unit_rows).
- A table filed from two revisions of one document under two keys is one source when the
  new-source term holds sources out (accuracy.source_names, tuning_documents).
- A llama.cpp backend no catalog GPU runs (Vulkan) calibrates no band
  (accuracy.BAND_BACKENDS_NOT_DRAWN)."""

from __future__ import annotations

import math
from dataclasses import replace
from types import ModuleType

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import bands, conformal
from app.domain.efficiency import EfficiencyTable
from tests.support import ROOT, load_benchmark

PRETRAIN = bands.BandInputs(
    regime="train-llm", vendor="nvidia", architecture="Hopper", runtime="pytorch",
    efficiency_source="prior",
)  # fmt: skip
FINETUNE = replace(PRETRAIN, kind=bands.FINE_TUNING)
POOLED, REGIME = (0.70, 1.33), (0.64, 1.88)
TABLE = EfficiencyTable(
    bands={("train-llm", "all"): (0.80, 1.07), ("train-llm/fine-tuning", "all"): (0.68, 1.28)},
    centres={("train-llm", "all"): 0.92, ("train-llm/fine-tuning", "all"): 0.97},
    new_source={"all": POOLED, "train-llm": REGIME},
)


@pytest.fixture(scope="module")
def acc() -> ModuleType:
    return load_benchmark("accuracy.py", "bench_accuracy_r30bd")


def _source_terms(x: bands.BandInputs, table: EfficiencyTable) -> list[tuple[float, float]]:
    calibrated = table.band(x.regime, x.vendor, x.runtime, x.kind) is not None
    return [
        (w.low, w.high)
        for w in bands.widenings(x, table, calibrated)
        if w.reason == bands.NEW_SOURCE_REASON
    ]


def test_a_kind_banded_apart_never_takes_its_regimes_new_source_term() -> None:
    assert bands.term_family(FINETUNE, TABLE) == "train-llm/fine-tuning"
    assert bands.term_family(PRETRAIN, TABLE) == "train-llm"
    # the regime's own term is its other kind's sources: the fine-tuning row takes the pooled
    assert _source_terms(PRETRAIN, TABLE) == [REGIME]
    assert _source_terms(FINETUNE, TABLE) == [POOLED]
    # with a term of its own it takes that one
    own = replace(TABLE, new_source={**TABLE.new_source, "train-llm/fine-tuning": (0.9, 1.1)})
    assert _source_terms(FINETUNE, own) == [(0.9, 1.1)]
    # a kind the table does not band apart is its regime's rows, term and all
    merged = replace(TABLE, bands={("train-llm", "all"): (0.80, 1.07)})
    assert bands.term_family(FINETUNE, merged) == "train-llm"
    assert _source_terms(FINETUNE, merged) == [REGIME]


def test_the_shipped_fine_tuning_band_is_not_widened_by_pretraining_sources() -> None:
    from app.shipped.rules import load_efficiency

    table = load_efficiency(ROOT / "data")
    assert table.band_of_kind("train-llm", bands.FINE_TUNING)
    # a fine-tuning row's band as the app draws it: the kind's band about its centre, widened
    # in quadrature by the kind's own term, else the pooled one (never "train-llm"'s)
    term = table.new_source.get("train-llm/fine-tuning") or table.new_source["all"]
    lo, hi = table.bands[("train-llm/fine-tuning", "all")]
    centre = table.centres[("train-llm/fine-tuning", "all")]
    want = conformal.Spread.of(lo, hi, centre).widened([term]).band()
    assert bands.band(FINETUNE, table)[:2] == pytest.approx(want)


def _unit(name: str, ratio: float) -> conformal.Held:
    return conformal.Held(name, conformal.Spread.of(0.9, 1.1), (ratio,))


def test_a_familys_term_is_sized_on_its_own_units_only(acc) -> None:
    """Nine units per family reach the rank (⌈10·0.9⌉ = 9): each family's term is the largest
    need of its own nine, whatever the other family's units need."""
    fine = [_unit(f"train-llm/fine-tuning f{i}", 0.5) for i in range(9)]
    pre = [_unit(f"train-llm p{i}", 1.0) for i in range(9)]
    terms = {x.regime: (x.term.low, x.term.high) for x in acc.source_terms([*fine, *pre])}
    assert terms["train-llm"] == (1.0, 1.0)  # its rows sit inside ±10 %: no need
    # 0.5 from a ±10 % band about 1: √(ln²0.5 − ln²0.9) below, nothing above
    need = math.sqrt(math.log(0.5) ** 2 - math.log(0.9) ** 2)
    assert terms["train-llm/fine-tuning"] == (pytest.approx(math.exp(-need)), 1.0)


def _cal(acc: ModuleType, source: str, gpu: int, ratio: float, kind: str = "") -> object:
    return acc.CalRow(
        "train-llm", "pytorch", f"{kind or 'pre'} w{gpu % 3}", f"g{gpu}", "nvidia", "Hopper",
        ratio, source=source, kind=kind,
    )  # fmt: skip


def test_a_source_unit_is_named_by_the_family_of_its_rows(acc) -> None:
    pre = [_cal(acc, s, g, 1.0) for s in ("a", "b", "c") for g in range(10)]
    fine = [_cal(acc, "ft", g, 0.9, bands.FINE_TUNING) for g in range(10)]
    assert acc.banded_kinds([*pre, *fine]) == {("train-llm", bands.FINE_TUNING)}
    units = {h.unit: rows for h, rows in acc.source_unit_rows([*pre, *fine], {})}
    assert set(units) == {"train-llm a", "train-llm b", "train-llm c", "train-llm/fine-tuning ft"}
    assert all(r.kind == bands.FINE_TUNING for r in units["train-llm/fine-tuning ft"])
    assert not any(r.kind for u, rows in units.items() if "/" not in u for r in rows)


def test_one_document_under_two_keys_is_one_source(acc) -> None:
    docs = {"s": "github.com/x/README.md", "s-next": "github.com/x/README.md", "t": "other"}
    assert acc.source_names(["s-next", "t", "s", "u"], docs) == {
        "s": "s+s-next",
        "s-next": "s+s-next",
        "t": "t",
        "u": "u",
    }
    # one host's table at two revisions, both 1.6× the engine; two other sources at 1.0
    rows = [_cal(acc, s, g, 1.0) for s in "ab" for g in range(10)]
    rows += [_cal(acc, s, g, 1.6) for s in ("s", "s-next") for g in range(10)]
    split = {h.unit: h for h, _ in acc.source_unit_rows(rows, {})}
    merged = {h.unit: h for h, _ in acc.source_unit_rows(rows, docs)}
    assert "train-llm s+s-next" in merged and "train-llm s" not in merged
    assert len(merged["train-llm s+s-next"].ratios) == 20
    # kept apart, each revision is scored against a band its twin's 1.6s are in: no need
    assert conformal.unit_need(split["train-llm s-next"]) == (0.0, 0.0)
    # held out together, against the other sources' band (1.0 about 1.0): what 1.6 needs
    held = merged["train-llm s+s-next"]
    assert held.base.band() == pytest.approx((1.0, 1.0))
    assert conformal.unit_need(held) == (0.0, pytest.approx(math.log(1.6)))


def test_the_stable_fast_readme_at_two_revisions_is_one_document(acc) -> None:
    docs = acc.tuning_documents()
    assert docs["stable-fast-readme"] == docs["stable-fast-readme-next"]
    assert docs["alexeigor-sd-benchmarks"] == docs["alexeigor-sd-benchmarks-next"]
    assert docs["lambda-xformers"] != docs["stable-fast-readme"]


def test_a_backend_no_catalog_gpu_runs_calibrates_no_band(acc) -> None:
    runs = {b for g in read_gpu_specs(ROOT / "data") for b in g.backends}
    assert "vulkan" in acc.BAND_BACKENDS_NOT_DRAWN
    assert not runs & acc.BAND_BACKENDS_NOT_DRAWN
    residuals = acc._llm_inference_residuals(ROOT / "data", acc.INFERENCE_FILE)
    assert residuals and not any(" vulkan " in label for _, _, label, *_ in residuals)
    assert any(" cuda " in label for _, _, label, *_ in residuals)
