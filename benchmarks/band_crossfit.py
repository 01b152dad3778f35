"""The new-source term calibrated on the held-out sets too, scored by cross-fitting (issue 23).

    PYTHONPATH=. python benchmarks/band_crossfit.py [-v]

The tuning sources' residuals are in sample for every constant read against them, so the term
sized on them alone (accuracy.source_scores) is optimistic for a new source; the held-out
sources' residuals are not (no engine constant was read against them). Each held-out row is
scored against the band the engine draws for it without the new-source term (its regime's
band, every extrapolation widening in: what the term must add to), and a unit is a (held-out
regime, source) pair whose need is the term that takes its central 80 % inside
(conformal.unit_need). The shipped term (accuracy.py --write-bands) is accuracy.source_terms
over the tuning units and these (split-conformal over units: the ⌈(G+1)·0.9⌉-th smallest need
per side, pooled, and a regime's own where its units reach that rank).

Scored by cross-fitting, never in sample: the held-out files fall in folds (files sharing a
source in one fold: a source's rows share their errors; one source is one `source` key, or one
document cited under two keys, its URL without the revision), and each fold's rows are scored
against the term built without that fold's units (conformal.cross_fitted). The files that
calibrate nothing (accuracy.NOT_CALIBRATING: the spot-check set heldout_spotcheck_2026_12.yaml,
the vLLM/SGLang NVIDIA sets, the MLPerf Llama 2 set) are in no fold: print_crossfit scores them
under the term from every fold, the shipped one, so each held-out regime has its honest figure
in one table (accuracy.outside_term_regimes marks them out of sample in the in-sample tables).

Rules compared, each cross-fitted the same way (per held-out regime: coverage, median width,
"+" where 80 % inside at ≤ ×2.5):
  shipped     the tuning units' term alone (data/efficiency.yaml before this change)
  heldout     the held-out units alone, pooled
  both        tuning and held-out units (the rule --write-bands ships)
  per-kind    the held-out units, one term per regime kind (LLM token work, batch work)
  weighted    the held-out units, one half-width at 80 % of the units' weight (term_for)
  joint       the held-out units, one half-width at the 80 % rank of each unit's larger need
  joint-both  joint over the tuning and held-out units
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.domain import bands, conformal
from app.domain.efficiency import EfficiencyTable
from app.shipped import yamlio
from app.shipped.rules import load_efficiency
from benchmarks import accuracy as acc

Pair = tuple[float, float]
Terms = dict[str, Pair]  # band regime, or "all" -> (low, high): EfficiencyTable.new_source
Rule = Callable[[list[conformal.Held]], Terms]

# The held-out files that calibrate the term: all but the spot-check set, kept out of everything,
# and the vLLM/SGLang NVIDIA and MLPerf Llama 2 sets, not yet taken in (accuracy.NOT_CALIBRATING)
CALIBRATING = "every held-out file but the spot-check, vLLM/SGLang NVIDIA and MLPerf sets"


def calibrating_files() -> list[Path]:
    every = sorted(acc.HELDOUT_DIR.glob(acc.HELDOUT_GLOB))
    return [f for f in every if f not in acc.NOT_CALIBRATING]


@dataclass(frozen=True)
class Scored:
    """A held-out row with the band the engine draws for it before the new-source term."""

    row: acc.HeldoutRow
    regime: str  # the band family (bands.term_family: the regime, or "train-llm/fine-tuning")
    spread: conformal.Spread

    @property
    def unit(self) -> str:
        """The unit's name, band family, source and held-out regime: accuracy.source_terms
        reads the band family and the source off the front."""
        return f"{self.regime} {self.row.source} {self.row.regime}"

    def band(self, terms: Terms) -> Pair:
        """The row's band with the term ``terms`` gives its family (EfficiencyTable.source_term),
        composed as bands.band composes it."""
        term = terms.get(self.regime) or terms.get("all")
        return self.spread.widened([term] if term else []).band()


def scored_rows(rows: Sequence[acc.HeldoutRow], table: EfficiencyTable) -> list[Scored]:
    """The held-out rows the benchmark path bands, each with its spread before the term."""
    bare = replace(table, new_source={})
    return [
        Scored(r, bands.term_family(r.inputs, bare), bands.spread(r.inputs, bare))
        for r in rows
        if r.inputs is not None
    ]


def heldout_rows(data_dir: Path, table: EfficiencyTable | None = None) -> list[Scored]:
    """The calibrating held-out rows (priors path), against ``table`` (default: the shipped)."""
    rows, _ = acc.evaluate_heldout(data_dir, calibrating_files())
    return scored_rows(rows, table or load_efficiency(data_dir))


# The document a source's URL cites, its revision dropped (accuracy.document: the tuning units
# take the same rule)
document = acc.document


@functools.cache
def _source_urls(file: str) -> dict[str, str]:
    """A held-out file's `sources` entries (tests/data/<file>.yaml): key -> URL; none where the
    file is not there."""
    path = acc.HELDOUT_DIR / f"{file}.yaml"
    if not path.exists():
        return {}
    doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    entries = doc.get("sources") or {}
    return {
        str(k): str(v["url"]) for k, v in entries.items() if isinstance(v, dict) and v.get("url")
    }


def publication(file: str, source: str) -> str:
    """The document a held-out row's source cites (its `sources` entry's URL without the
    revision), else the source's name: two keys citing one document are one source (Diffusers'
    fast_diffusion tutorial gives one A100's SDXL timing with and without torch.compile, filed
    in the compiled and the eager diffusion sets under two keys)."""
    url = _source_urls(file).get(source)
    return f"url:{document(url)}" if url else f"key:{source}"


def folds(rows: Sequence[Scored]) -> dict[str, list[Scored]]:
    """The rows by fold: one held-out file each, files sharing a source merged (a source's
    rows share their errors, so they must not calibrate each other; a source is its `source`
    key, or the document it cites: ``publication``), named by their files."""
    groups: list[tuple[set[str], set[str]]] = []  # (files, sources and the documents they cite)
    for s in rows:
        f = s.row.file
        src = {f"key:{s.row.source}", publication(f, s.row.source)}
        touching = [g for g in groups if f in g[0] or src & g[1]]
        merged = ({f}, src)
        for g in touching:
            groups.remove(g)
            merged = (merged[0] | g[0], merged[1] | g[1])
        groups.append(merged)
    name = {f: "+".join(sorted(g[0])) for g in groups for f in g[0]}
    out: dict[str, list[Scored]] = {}
    for s in rows:
        out.setdefault(name[s.row.file], []).append(s)
    return dict(sorted(out.items()))


def units(rows: Sequence[Scored]) -> list[conformal.Held]:
    """One unit per (held-out regime, source): its rows' ratios and the bases they draw."""
    by: dict[str, list[Scored]] = {}
    for s in rows:
        by.setdefault(s.unit, []).append(s)
    return [
        conformal.Held(u, ss[0].spread, tuple(s.row.ratio for s in ss), tuple(s.spread for s in ss))
        for u, ss in by.items()
    ]


def shipped_rule(held: list[conformal.Held]) -> Terms:
    """accuracy.source_terms as a table's new_source: pooled, and a regime's own where it can."""
    return {x.regime: (x.term.low, x.term.high) for x in acc.source_terms(held)}


def source_scores(
    data_dir: Path, measurements: Path, inference: Path, table: EfficiencyTable | None = None
) -> list[acc.SourceScore]:
    """The new-source term --write-bands ships: accuracy.source_terms over the tuning units
    (accuracy.source_units) and the calibrating held-out units, each held-out row against
    ``table``'s band for it without a new-source term (default: the shipped table)."""
    tuning = acc.source_units(acc.calibration_rows(data_dir, measurements, inference))
    return acc.source_terms([*tuning, *units(heldout_rows(data_dir, table))])


def crossfit(
    rows: Sequence[Scored], rule: Rule, extra: Sequence[conformal.Held] = ()
) -> list[tuple[Scored, Pair]]:
    """Each fold's rows under the term ``rule`` builds from ``extra`` (the tuning units) and
    the other folds' units, never its own."""
    fs = folds(rows)
    terms = conformal.cross_fitted({f: units(ss) for f, ss in fs.items()}, rule, extra)
    return [(s, s.band(terms[f])) for f, ss in fs.items() for s in ss]


@dataclass(frozen=True)
class Result:
    regime: str
    n: int
    coverage: float
    width: float

    @property
    def met(self) -> bool:
        return self.coverage >= conformal.TARGET_COVERAGE and self.width <= acc.BAND_GOAL_WIDTH


def _inside(s: Scored, band: Pair) -> bool:
    return band[0] * (1 - 1e-9) <= s.row.ratio <= band[1] * (1 + 1e-9)


def score(banded: Sequence[tuple[Scored, Pair]]) -> list[Result]:
    """Per held-out regime: share inside and median width (high ÷ low), in first-seen order."""
    out = []
    for regime in dict.fromkeys(s.row.regime for s, _ in banded):
        sub = [(s, b) for s, b in banded if s.row.regime == regime]
        inside = sum(_inside(s, b) for s, b in sub)
        width = statistics.median(hi / lo for _, (lo, hi) in sub)
        out.append(Result(regime, len(sub), inside / len(sub), width))
    return out


def outside_files() -> list[Path]:
    """The held-out files that size no term (accuracy.NOT_CALIBRATING: the spot-check set, the
    vLLM/SGLang NVIDIA and MLPerf Llama 2 sets) and are there: in no fold, so print_crossfit
    scores them under the term from every fold, out of sample as they stand."""
    return [f for f in acc.NOT_CALIBRATING if f.exists()]


def print_crossfit(data_dir: Path, measurements: Path, inference: Path) -> None:
    """The honest held-out figure for the shipped rule (accuracy.py prints it after the
    in-sample one): each fold's rows under the term built from the tuning units and the other
    folds, per held-out regime; then the files that calibrate nothing (``outside_files``: the
    spot-check, vLLM/SGLang NVIDIA and MLPerf sets) under the term from every fold, so every
    held-out regime the in-sample tables list has its figure here."""
    table = load_efficiency(data_dir)
    rows = heldout_rows(data_dir, table)
    tuning = acc.source_units(acc.calibration_rows(data_dir, measurements, inference))
    crossed = crossfit(rows, shipped_rule, tuning)
    results = score(crossed)
    spot = scored_rows(acc.evaluate_heldout(data_dir, outside_files())[0], table)
    full = shipped_rule([*tuning, *units(rows)])
    spot_results = score([(s, s.band(full)) for s in spot])
    print()
    print(
        "Bands on the held-out set, cross-fitted (benchmark path): the new-source term is sized"
        " on these rows too, so each held-out file (files sharing a source together) is scored"
        " under the term built without it; the files that calibrate nothing (spot-check,"
        " vLLM/SGLang NVIDIA, MLPerf: out of sample) under the shipped term"
    )
    print(f"{'regime':22} {'n':>4} {'coverage':>9} {'med.width':>9} {'goal':>5}")
    for r in [*results, *spot_results]:
        goal = "+" if r.met else "-"
        print(f"{r.regime:22} {r.n:4d} {r.coverage:9.0%} ×{r.width:8.2f} {goal:>5}")
    inside = sum(_inside(s, b) for s, b in crossed)
    outside = sum(_inside(s, s.band(full)) for s in spot)
    met = sum(r.met for r in results) + sum(r.met for r in spot_results)
    print(
        f"  cross-fitted: {inside} of {len(crossed)} rows inside; the files that calibrate"
        f" nothing, under the shipped term: {outside} of {len(spot)}; goal met in {met} of"
        f" {len(results) + len(spot_results)} regimes (theirs included)"
    )


# ------------------------------------------------------------------ the alternatives weighed


def _pair(t: conformal.SourceTerm | None) -> Terms:
    return {} if t is None else {"all": (t.low, t.high)}


def pooled(held: list[conformal.Held]) -> Terms:
    return _pair(conformal.source_term(held))


def per_kind(held: list[conformal.Held]) -> Terms:
    """A term per regime kind (band_cv.LLM_REGIMES against the rest), each over its units."""
    from benchmarks.band_cv import LLM_REGIMES

    out = pooled(held)
    for kind in (True, False):
        mine = [h for h in held if (h.unit.split()[0].split("/")[0] in LLM_REGIMES) == kind]
        t = conformal.source_term(mine)
        for regime in {h.unit.split()[0] for h in mine} if t else ():
            out[regime] = (t.low, t.high) if t else (1.0, 1.0)
    return out


def weighted(held: list[conformal.Held]) -> Terms:
    return {"all": conformal.term_for(held)} if held else {}


def joint(held: list[conformal.Held]) -> Terms:
    from benchmarks.band_cv import joint_source

    return joint_source(held)


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    data = acc.ROOT / "data"
    table = load_efficiency(data)
    rows = heldout_rows(data, table)
    spot_rows = scored_rows(acc.evaluate_heldout(data, [acc.SPOTCHECK_FILE])[0], table)
    before = {k: v for k, v in table.new_source.items()}
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    tuning = acc.source_units(acc.calibration_rows(data, train, acc.INFERENCE_FILE))
    tuning_terms = shipped_rule(tuning)
    if set(tuning_terms) != set(before) or any(
        not math.isclose(a, b, abs_tol=0.006)
        for k in before
        for a, b in zip(tuning_terms[k], before[k], strict=True)
    ):
        print("data/efficiency.yaml's new_source is not the tuning units' term alone: column")
        print("'shipped' below is the tuning units' term as computed now")
    fs = folds(rows)
    print(f"{len(units(rows))} held-out units (held-out regime, source) in {len(fs)} folds:")
    for name, ss in fs.items():
        print(f"  {name}: {len(ss)} rows, {len(units(ss))} units")
    if verbose:
        for h in units(rows):
            d, u = conformal.unit_need(h)
            need = f"×{math.exp(-d):.2f} / ×{math.exp(u):.2f}"
            print(f"    need {h.unit:64} {need} ({len(h.ratios)} rows)")
    rules: dict[str, tuple[Rule, Sequence[conformal.Held]]] = {
        "shipped": (lambda _: tuning_terms, ()),
        "heldout": (pooled, ()),
        "both": (shipped_rule, tuning),
        "per-kind": (per_kind, ()),
        "weighted": (weighted, ()),
        "joint": (joint, ()),
        "joint-both": (joint, tuning),
    }
    crossed = {k: crossfit(rows, rule, extra) for k, (rule, extra) in rules.items()}
    full = {k: rule([*extra, *units(rows)]) for k, (rule, extra) in rules.items()}
    results = {k: score(v) for k, v in crossed.items()}
    print()
    print("Cross-fitted (each fold's rows under the term built without it):")
    print(f"{'held-out regime':24} {'n':>4} " + " ".join(f"{k:>16}" for k in rules))
    for r in results["shipped"]:
        cells = []
        for k in rules:
            x = next(x for x in results[k] if x.regime == r.regime)
            cells.append(f"{x.coverage:4.0%} ×{x.width:4.2f} {'+' if x.met else '-'}")
        print(f"{r.regime:24} {r.n:4d} " + " ".join(f"{c:>16}" for c in cells))
    for k in rules:
        inside = sum(_inside(s, b) for s, b in crossed[k])
        met = sum(x.met for x in results[k])
        terms = ", ".join(f"{g} ×{lo:.2f}/×{hi:.2f}" for g, (lo, hi) in full[k].items())
        print(
            f"  {k:10} met {met} of {len(results[k])}; {inside} of {len(crossed[k])} rows"
            f" inside; from every fold: {terms}"
        )
    print()
    print("Spot-check set (calibrates nothing), under each rule's term from every fold:")
    for k in rules:
        res = score([(s, s.band(full[k])) for s in spot_rows])
        said = "; ".join(f"{x.regime} {x.n} {x.coverage:.0%} ×{x.width:.2f}" for x in res)
        print(f"  {k:10} {said}; met {sum(x.met for x in res)} of {len(res)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
