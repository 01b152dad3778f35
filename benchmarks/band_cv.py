"""How the band method was chosen: variants of the widening terms scored by nested
cross-validation on the tuning sets only (never the held-out set).

    PYTHONPATH=. python benchmarks/band_cv.py [-v]

Two checks per variant, both on the calibration rows of benchmarks/accuracy.py:

1. Nested leave-one-unit-out over the extrapolation units (a regime's runtime, a runtime's
   architecture, an MoE or 4-bit workload): each unit held out, the term refitted on the other
   units, the unit's rows scored against the *whole* band a row like it gets — the rest's band
   ⊕ the new-source term (where the variant applies it) ⊕ the refitted term. Reported per kind:
   mean coverage over units, units with ≥ 80 % of their rows inside, median band width.
2. Leave-one-source-out over the whole pipeline: each tuning source held out of every regime
   (what a held-out file is), the bands, terms and new-source term refitted on the rest, the
   source's rows scored against the band bands.band draws: per (regime, source) unit.

Variants (issue 23):
  before     each term one-sided (its own 90th percentile of needs per side), calibrated
             against the rest's bare band; the new-source term calibrated on top of them
  symmetric  one half-width for both sides (the direction of a new runtime's error unknown)
  nested     the new-source term first (rows that need no other widening), each term then
             what a unit needs beyond it (no double count); still one-sided
  chosen     nested + symmetric + a term with under three units pooled (MoE with 4-bit):
             the method benchmarks/accuracy.py ships
  unit-level chosen, but each unit's own central-80 % need and the 80 % quantile over units
             (a per-unit guarantee instead of 80 % of the units' weight)
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.domain import bands, conformal
from app.domain.efficiency import EfficiencyTable
from benchmarks import accuracy as acc

Pair = tuple[float, float]
TermFn = Callable[[Sequence[conformal.Held]], Pair]


def one_sided(held: Sequence[conformal.Held]) -> Pair:
    """The method before issue 23's review: each side's own weighted 90th percentile."""
    downs: list[tuple[float, float]] = []
    ups: list[tuple[float, float]] = []
    for h in held:
        w = 1.0 / (len(held) * len(h.ratios))
        for base, r in h.pairs():
            d, u = conformal.needed(base, r)
            downs.append((d, w))
            ups.append((u, w))
    tail = conformal.ALPHA / 2
    return math.exp(-conformal._weighted_upper(downs, tail)), math.exp(
        conformal._weighted_upper(ups, tail)
    )


def unit_level(held: Sequence[conformal.Held]) -> Pair:
    """Each unit's central-80 % need (max of both sides), the 80 % quantile over units."""
    t = conformal._quantile([max(conformal.unit_need(h)) for h in held], 1 - conformal.ALPHA)
    return math.exp(-t), math.exp(t)


@dataclass(frozen=True)
class Variant:
    name: str
    term: TermFn
    nested: bool  # the new-source term first, every term on top of it
    pooled: bool  # a term with under MIN_TERM_UNITS units takes its pool's


VARIANTS = (
    Variant("before", one_sided, nested=False, pooled=False),
    Variant("symmetric", conformal.term_for, nested=False, pooled=False),
    Variant("nested", one_sided, nested=True, pooled=False),
    Variant("chosen", conformal.term_for, nested=True, pooled=True),
    Variant("unit-level", unit_level, nested=True, pooled=True),
)


def _source_pair(held: list[conformal.Held]) -> Pair | None:
    s = conformal.source_term(held)
    return None if s is None else (s.low, s.high)


def _old_source_units(rows: list[acc.CalRow], extrap: dict[str, Pair]) -> list[conformal.Held]:
    """The source units before: every row, scored with the extrapolation terms it needs."""
    out: list[conformal.Held] = []
    for regime in dict.fromkeys(r.regime for r in rows):
        sub = [r for r in rows if r.regime == regime]
        for source in dict.fromkeys(r.source for r in sub):
            rest = [r for r in sub if r.source != source]
            if not acc._enough(rest):
                continue
            table = _table(rest, extrap, None)
            held = [r for r in sub if r.source == source]
            bases = tuple(bands.spread(acc._inputs(r), table) for r in held)
            ratios = tuple(r.ratio for r in held)
            out.append(conformal.Held(f"{regime} {source}", bases[0], ratios, bases))
    return out


def _table(rows: list[acc.CalRow], extrap: dict[str, Pair], source: Pair | None) -> EfficiencyTable:
    t = acc._table_of(rows, [])
    return EfficiencyTable(
        bands=t.bands, centres=t.centres, covered=t.covered, multi_gpu=t.multi_gpu,
        extrapolation=extrap, new_source={"all": source} if source else {},
    )  # fmt: skip


def _widened(
    units: dict[str, list[conformal.Held]], source: Pair | None
) -> dict[str, list[conformal.Held]]:
    if source is None:
        return units
    return {
        k: [conformal.Held(h.unit, h.base.widened([source]), h.ratios) for h in v]
        for k, v in units.items()
    }


def _terms(
    units: dict[str, list[conformal.Held]], v: Variant, skip: object = None
) -> dict[str, Pair]:
    """Each kind's term from its units (``skip`` left out), pooled where the variant pools."""
    out: dict[str, Pair] = {}
    for name, held in units.items():
        mine = [h for h in held if h is not skip]
        pool = acc._POOLS.get(name, (name,)) if v.pooled else (name,)
        if v.pooled and len(held) < acc.MIN_TERM_UNITS and len(pool) > 1:
            mine = [h for k in pool for h in units.get(k, []) if h is not skip]
        if mine:
            out[name] = v.term(mine)
    return out


def fit(
    rows: list[acc.CalRow], v: Variant
) -> tuple[dict[str, list[conformal.Held]], dict[str, Pair], Pair | None]:
    """(extrapolation units as scored, terms, new-source term) of ``rows`` under ``v``."""
    units = acc.extrapolation_units(rows)  # bare bases
    if v.nested:
        source = _source_pair(acc.source_units(rows))
        units = _widened(units, source)
        return units, _terms(units, v), source
    terms = _terms(units, v)
    return units, terms, _source_pair(_old_source_units(rows, terms))


Scored = tuple[str, int, float, float]  # unit, rows, share inside, median width


def _score(h: conformal.Held, terms: list[Pair]) -> Scored:
    lo, hi = h.base.widened(terms).band()
    inside = sum(lo * (1 - 1e-9) <= r <= hi * (1 + 1e-9) for r in h.ratios)
    return h.unit, len(h.ratios), inside / len(h.ratios), hi / lo


def term_cv(rows: list[acc.CalRow], v: Variant) -> dict[str, list[Scored]]:
    """Check 1: each extrapolation unit against base ⊕ new source ⊕ the term refitted without
    it. The new-source term is the full-data one (it rests on other units: sources)."""
    units, _, source = fit(rows, v)
    out: dict[str, list[Scored]] = {}
    for name, held in units.items():
        res = []
        for h in held:
            term = _terms(units, v, skip=h).get(name)
            extra = [source] if source and not v.nested else []  # nested: in the base already
            res.append(_score(h, [t for t in (term, *extra) if t]))
        out[name] = res
    return out


def source_cv(rows: list[acc.CalRow], v: Variant) -> list[Scored]:
    """Check 2: each source held out of every regime, everything refitted on the rest."""
    out: list[Scored] = []
    for s in dict.fromkeys(r.source for r in rows):
        rest = [r for r in rows if r.source != s]
        held = [r for r in rows if r.source == s]
        regimes = [g for g in dict.fromkeys(r.regime for r in held)
                   if acc._enough([r for r in rest if r.regime == g])]  # fmt: skip
        if not regimes:
            continue
        _, terms, source = fit(rest, v)
        table = _table(rest, terms, source)
        for g in regimes:
            inside, widths = 0, []
            mine = [r for r in held if r.regime == g]
            for r in mine:
                lo, hi, _ = bands.band(acc._inputs(r), table)
                inside += lo * (1 - 1e-9) <= r.ratio <= hi * (1 + 1e-9)
                widths.append(hi / lo)
            out.append((f"{g} {s}", len(mine), inside / len(mine), statistics.median(widths)))
    return out


def _line(res: list[Scored]) -> str:
    covs = [c for _, _, c, _ in res]
    met = sum(c >= conformal.TARGET_COVERAGE for c in covs)
    both = sum(c >= conformal.TARGET_COVERAGE and w <= 2.5 for _, _, c, w in res)
    width = statistics.median(w for *_, w in res)
    return (f"{statistics.mean(covs):4.0%} met {met:2d}/{len(res):<2d} (≤×2.5 too: {both:2d})"
            f" width ×{width:.2f}")  # fmt: skip


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    rows = acc.calibration_rows(acc.ROOT / "data", train, acc.INFERENCE_FILE)
    print(
        "1. nested leave-one-unit-out over extrapolation units"
        " (whole band: base ⊕ new source ⊕ term)"
    )
    for v in VARIANTS:
        cv = term_cv(rows, v)
        _, terms, source = fit(rows, v)
        print(f"  {v.name:10} " + " | ".join(f"{k} {_line(r)}" for k, r in cv.items() if r))
        shown = ", ".join(f"{k} ×{lo:.2f}/×{hi:.2f}" for k, (lo, hi) in terms.items())
        src = f"×{source[0]:.2f}/×{source[1]:.2f}" if source else "none"
        print(f"  {'':10} terms on all units: {shown}; new source {src}")
        if verbose:
            for k, res in cv.items():
                for unit, n, c, w in res if k != "architecture" else ():
                    print(f"      {k:12} {unit:40} n={n:4d} inside {c:4.0%} width ×{w:.2f}")
    print("2. leave-one-source-out, whole pipeline refitted: per (regime, source)")
    for v in VARIANTS:
        res = source_cv(rows, v)
        print(f"  {v.name:10} {_line(res)}")
        if verbose:
            for unit, n, c, w in res:
                print(f"      {unit:48} n={n:4d} inside {c:4.0%} width ×{w:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
