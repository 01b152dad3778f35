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
   source's rows scored against the band bands.band draws: per (regime, source) unit. The
   new-source term is refitted on the rest's tuning sources' residuals today
   (accuracy.new_source_units), the held-out source's rows scored as today. (Since issue 23's
   held-out calibration the shipped term adds the held-out sets' units: band_crossfit.py,
   which scores that rule cross-fitted; these checks stay on the tuning sets.)

3. What widens each band (issue 23, second pass): per band class its rows' plain 80 %, each
   leave-one-unit-out check alone (and the steps it took past the conformal ranks), the shipped
   envelope, and that with the new-source term.
4. Alternatives to the shipped base band and new-source term (ALTERNATIVES), each scored by
   check 2 and by holding out each GPU of a band with fewer than nine GPUs (gpu_cv):
     checks≥9  a leave-one-unit-out check only where it has nine units (conformal.unit_rank),
               else the check with more units (three GPUs no longer set TensorFlow's band)
     per-kind  the new-source term per regime kind (LLM: train-llm, decode, prefill, serving;
               batch: the rest), each over its own source units
     joint     one new-source half-width for both sides at the 80 % rank over each unit's
               larger need, where the shipped term takes each side's 90 % rank
   None is shipped: each met fewer (regime, source) units at 80 % and ≤ ×2.5 than the shipped
   rule (docs/methodology.md, "Calibrated bands").

5. (``--third [-v] [rule ...]``, issue 23's third pass) the candidates for the regimes still
   missing: a regime's own new-source term against the pooled one (nested), a vendor term from
   cross-vendor units (AMD's vLLM serving tuning rows among them), and the rules THIRD_PASS
   names, each with every GPU and every source held out of everything and refitted. None is
   shipped (docs/methodology.md, "Calibrated bands", "Third pass").

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

import bisect
import contextlib
import functools
import math
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any
from unittest import mock

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


Sources = dict[str, Pair]  # regime, or "all", -> the new-source term (EfficiencyTable.new_source)
SourceFn = Callable[[list[conformal.Held]], Sources]


def pooled_source(held: list[conformal.Held]) -> Sources:
    """The shipped rule: one term over every regime's source units (a regime's own needs nine)."""
    pair = _source_pair(held)
    return {"all": pair} if pair else {}


def _regime(h: conformal.Held) -> str:
    return h.unit.split()[0]


# Regime kinds for the per-kind alternative: LLM token work against batch (CNN, BERT, diffusion)
LLM_REGIMES = frozenset({"train-llm", "decode", "prefill", "serving"})


def per_kind_source(held: list[conformal.Held]) -> Sources:
    """Alternative: one term per regime kind (LLM, batch), each over its own source units (the
    pooled term where a kind has too few for the rank)."""
    out = pooled_source(held)
    for kind in (True, False):
        pair = _source_pair([h for h in held if (_regime(h).split("/")[0] in LLM_REGIMES) == kind])
        for regime in dict.fromkeys(_regime(h) for h in held):
            if pair and (regime.split("/")[0] in LLM_REGIMES) == kind:
                out[regime] = pair
    return out


def joint_source(held: list[conformal.Held]) -> Sources:
    """Alternative: one half-width for both sides, each unit's larger need, at the 80 % rank
    ⌈(G+1)·0.8⌉ (exact for both sides at once, where the shipped per-side 90 % rank is the
    union bound)."""
    held = [h for h in held if h.ratios]
    k = conformal.unit_rank(len(held), conformal.TARGET_COVERAGE)
    if k is None:
        return {}
    t = sorted(max(conformal.unit_need(h)) for h in held)[k - 1]
    return {"all": (math.exp(-t), math.exp(t))}


def _of(sources: Sources, regime: str) -> Pair | None:
    return sources.get(regime) or sources.get("all")


def _old_source_units(rows: list[acc.CalRow], extrap: dict[str, Pair]) -> list[conformal.Held]:
    """The source units before: every row, scored with the extrapolation terms it needs."""
    out: list[conformal.Held] = []
    for regime in dict.fromkeys(r.regime for r in rows):
        sub = [r for r in rows if r.regime == regime]
        for source in dict.fromkeys(r.source for r in sub):
            rest = [r for r in sub if r.source != source]
            if not acc._enough(rest):
                continue
            table = _table(rest, extrap, {})
            held = [r for r in sub if r.source == source]
            bases = tuple(bands.spread(acc._inputs(r), table) for r in held)
            ratios = tuple(r.ratio for r in held)
            out.append(conformal.Held(f"{regime} {source}", bases[0], ratios, bases))
    return out


def _table(rows: list[acc.CalRow], extrap: dict[str, Pair], sources: Sources) -> EfficiencyTable:
    t = acc._table_of(rows, [])
    return EfficiencyTable(
        bands=t.bands, centres=t.centres, covered=t.covered, covered_pairs=t.covered_pairs,
        multi_gpu=t.multi_gpu,
        multi_gpu_spans=t.multi_gpu_spans,
        extrapolation=extrap, new_source=dict(sources),
    )  # fmt: skip


def _widened(
    units: dict[str, list[conformal.Held]], sources: Sources
) -> dict[str, list[conformal.Held]]:
    def one(h: conformal.Held) -> conformal.Held:
        pair = _of(sources, _regime(h))
        return conformal.Held(h.unit, h.base.widened([pair]), h.ratios) if pair else h

    return {k: [one(h) for h in v] for k, v in units.items()}


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
    rows: list[acc.CalRow], v: Variant, source_fn: SourceFn = pooled_source
) -> tuple[dict[str, list[conformal.Held]], dict[str, Pair], Sources]:
    """(extrapolation units as scored, terms, new-source terms) of ``rows`` under ``v``."""
    units = acc.extrapolation_units(rows)  # bare bases
    if v.nested:
        sources = source_fn(acc.new_source_units(rows))
        units = _widened(units, sources)
        return units, _terms(units, v), sources
    terms = _terms(units, v)
    return units, terms, source_fn(_old_source_units(rows, terms))


Scored = tuple[str, int, float, float]  # unit, rows, share inside, median width


def _score(h: conformal.Held, terms: list[Pair]) -> Scored:
    lo, hi = h.base.widened(terms).band()
    inside = sum(lo * (1 - 1e-9) <= r <= hi * (1 + 1e-9) for r in h.ratios)
    return h.unit, len(h.ratios), inside / len(h.ratios), hi / lo


def term_cv(rows: list[acc.CalRow], v: Variant) -> dict[str, list[Scored]]:
    """Check 1: each extrapolation unit against base ⊕ new source ⊕ the term refitted without
    it. The new-source term is the full-data one (it rests on other units: sources)."""
    units, _, sources = fit(rows, v)
    out: dict[str, list[Scored]] = {}
    for name, held in units.items():
        res = []
        for h in held:
            term = _terms(units, v, skip=h).get(name)
            source = _of(sources, _regime(h))
            extra = [source] if source and not v.nested else []  # nested: in the base already
            res.append(_score(h, [t for t in (term, *extra) if t]))
        out[name] = res
    return out


def source_cv(
    rows: list[acc.CalRow], v: Variant, source_fn: SourceFn = pooled_source
) -> list[Scored]:
    """Check 2: each source held out of every regime, everything refitted on the rest."""
    return _held_out_cv(rows, v, source_fn, attrgetter("source"), [r.source for r in rows])


def _held_out_cv(
    rows: list[acc.CalRow],
    v: Variant,
    source_fn: SourceFn,
    unit: Callable[[acc.CalRow], str],
    units: Iterable[str],
    per_runtime: dict[str, list[tuple[bool, float]]] | None = None,
) -> list[Scored]:
    """Each unit (``unit(row)`` in ``units``) held out of every regime, everything refitted on
    the rest: per (regime, unit), its rows against the band bands.band draws (and, into
    ``per_runtime`` where given, each row's (inside, width) under "regime runtime")."""
    out: list[Scored] = []
    for u in dict.fromkeys(units):
        rest = [r for r in rows if unit(r) != u]
        held = [r for r in rows if unit(r) == u]
        regimes = [g for g in dict.fromkeys(r.regime for r in held)
                   if acc._enough([r for r in rest if r.regime == g])]  # fmt: skip
        if not regimes:
            continue
        _, terms, sources = fit(rest, v, source_fn)
        table = _table(rest, terms, sources)
        for g in regimes:
            mine = [r for r in held if r.regime == g]
            inside, widths = 0, []
            for r in mine:
                lo, hi, _ = bands.band(acc._inputs(r), table)
                ok = lo * (1 - 1e-9) <= r.ratio <= hi * (1 + 1e-9)
                inside += ok
                widths.append(hi / lo)
                if per_runtime is not None:
                    per_runtime.setdefault(f"{g} {r.runtime}", []).append((ok, hi / lo))
            out.append((f"{g} {u}", len(mine), inside / len(mine), statistics.median(widths)))
    return out


def _line(res: list[Scored]) -> str:
    covs = [c for _, _, c, _ in res]
    met = sum(c >= conformal.TARGET_COVERAGE for c in covs)
    both = sum(c >= conformal.TARGET_COVERAGE and w <= 2.5 for _, _, c, w in res)
    width = statistics.median(w for *_, w in res)
    return (f"{statistics.mean(covs):4.0%} met {met:2d}/{len(res):<2d} (≤×2.5 too: {both:2d})"
            f" width ×{width:.2f}")  # fmt: skip


# ------------------------------------------------- issue 23, second pass: what widens a band

Check = tuple[float, float, int]  # low, high, order statistics stepped outward


def class_rows(rows: list[acc.CalRow], key: str, vendor: str) -> list[acc.CalRow]:
    """The rows behind one band of ``acc.bands_of``: "regime" or "regime/runtime", a vendor or
    "all" (dense, standard-format rows only, as bands_of fits them)."""
    regime, _, runtime = key.partition("/")
    rs = [
        r for r in rows
        if r.regime == regime and not (r.moe or r.four_bit) and vendor in ("all", r.vendor)
    ]  # fmt: skip
    return acc.runtime_band_rows(rs, regime, runtime) if runtime else rs


@dataclass(frozen=True)
class Parts:
    """One band class taken apart: its rows' plain split-conformal 80 % (no unit held out),
    each leave-one-unit-out check alone, the shipped envelope, and that with the new-source
    term in quadrature about the centre (what a row with no other widening gets)."""

    key: str
    vendor: str
    rows: int
    gpus: int
    workloads: int
    plain: tuple[float, float]
    gpu: Check | None
    workload: Check | None
    shipped: tuple[float, float]
    with_source: tuple[float, float]


def parts(rows: list[acc.CalRow]) -> list[Parts]:
    sources = pooled_source(acc.new_source_units(rows))
    out = []
    for b in acc.bands_of(rows):
        sub = class_rows(rows, b.regime, b.vendor)
        ratios = [r.ratio for r in sub]
        checks: dict[str, Check | None] = {"GPU": None, "workload": None}
        for unit, of in (("GPU", lambda r: r.slug), ("workload", lambda r: r.workload)):
            if unit in b.unit.split("+"):
                f = conformal.fit([(of(r), r.ratio) for r in sub])
                checks[unit] = (f.low, f.high, f.step)
        spread = conformal.Spread.of(b.low, b.high, b.bias)
        source = _of(sources, b.regime.split("/")[0])
        out.append(Parts(
            b.regime, b.vendor, b.n, b.gpus, b.workloads, conformal.conformal_band(ratios),
            checks["GPU"], checks["workload"], (b.low, b.high),
            spread.widened([source] if source else []).band(),
        ))  # fmt: skip
    return out


@dataclass(frozen=True)
class Alternative:
    """A base-band or new-source rule weighed against the shipped one (issue 23, second pass)."""

    name: str
    min_check_units: int  # acc._band_score's min_units: 0 keeps both checks (shipped)
    source: SourceFn


ALTERNATIVES = (
    Alternative("shipped", 0, pooled_source),
    # a leave-one-unit-out check with G units cannot hold a new unit at 80 % under G = 9
    # (conformal.unit_rank): below that, only the check with more units
    Alternative("checks≥9", 9, pooled_source),
    Alternative("per-kind", 0, per_kind_source),
    Alternative("joint", 0, joint_source),
)


def gpu_cv(
    rows: list[acc.CalRow], v: Variant, source_fn: SourceFn, slugs: Sequence[str]
) -> list[Scored]:
    """Each GPU in ``slugs`` held out of every regime, everything refitted on the rest: per
    (regime, GPU), its rows against the band bands.band draws (a card the tuning sets lack)."""
    return _held_out_cv(rows, v, source_fn, attrgetter("slug"), slugs)


def few_gpu_slugs(rows: list[acc.CalRow]) -> list[str]:
    """The GPUs of band classes with fewer than nine GPUs: where checks≥9 changes a band."""
    slugs: dict[str, None] = {}
    for b in acc.bands_of(rows):
        if b.gpus < 9:
            slugs.update(dict.fromkeys(r.slug for r in class_rows(rows, b.regime, b.vendor)))
    return list(slugs)


def by_regime(res: list[Scored]) -> dict[str, list[Scored]]:
    out: dict[str, list[Scored]] = {}
    for s in res:
        out.setdefault(s[0].split()[0], []).append(s)
    return out


def weigh(
    rows: list[acc.CalRow], alt: Alternative, slugs: Sequence[str]
) -> dict[str, list[Scored]]:
    """Checks 2 (sources held out) and 3 (GPUs held out) under ``alt``."""
    v = next(v for v in VARIANTS if v.name == "chosen")
    score = functools.partial(acc._band_score, min_units=alt.min_check_units)
    with mock.patch.object(acc, "_band_score", score):
        return {
            "source": source_cv(rows, v, alt.source),
            "GPU": gpu_cv(rows, v, alt.source, slugs),
        }


def _w(pair: tuple[float, float] | Check | None) -> str:
    return "" if pair is None else f"×{pair[1] / pair[0]:.2f}"


# ------------------------------------------ issue 23, third pass: where the misses' width lies


def trimmed_fit(
    rows: Sequence[conformal.Row],
    target: float = conformal.TARGET_COVERAGE,
    margins_only: bool = False,
) -> conformal.Fit:
    """Alternative (d): the shipped fit, then each side pulled in on its own (fewer order
    statistics stepped, or a smaller margin past the extreme, on that side only) while the
    leave-one-unit-out coverage stays at the target: never wider than the shipped band on
    either side, narrower on a side its held-out units never crossed. The narrowest such
    band (log width), ties to fewer steps."""
    sym = _SHIPPED_FIT(rows, target)
    units = sorted({u for u, _ in rows})
    if len(units) < 2:
        return sym
    n = len(rows)
    ratios = sorted(r for _, r in rows)
    held = {u: sorted(r for v, r in rows if v == u) for u in units}
    rests = {u: sorted(r for v, r in rows if v != u) for u in units}

    def band(xs: Sequence[float], s_lo: int, s_hi: int, m_lo: float, m_hi: float) -> Pair:
        m = len(xs)
        j = math.floor((m + 1) * conformal.ALPHA / 2 + 1e-9) - s_lo
        k = math.ceil((m + 1) * (1 - conformal.ALPHA / 2) - 1e-9) + s_hi
        return min(1.0, xs[max(j, 1) - 1] / m_lo), max(1.0, xs[min(k, m) - 1] * m_hi)

    def cov(s_lo: int, s_hi: int, m_lo: float, m_hi: float) -> float:
        inside = 0
        for u in units:
            lo, hi = band(rests[u], s_lo, s_hi, m_lo, m_hi)
            inside += bisect.bisect_right(held[u], hi) - bisect.bisect_left(held[u], lo)
        return inside / n

    tries: list[tuple[int, int, float, float]] = []
    if sym.margin == 1.0 and margins_only:
        return sym
    if sym.margin == 1.0:
        s_hi = sym.step
        for s_lo in range(sym.step + 1):  # the frontier: fewest upper steps for each lower
            while s_hi > 0 and cov(s_lo, s_hi - 1, 1.0, 1.0) >= target - 1e-9:
                s_hi -= 1
            tries.append((s_lo, s_hi, 1.0, 1.0))
    else:
        ms = [m for m in conformal.MARGINS if m <= sym.margin]
        tries = [(sym.step, sym.step, a, b) for a in ms for b in ms]
    ok = [t for t in tries if cov(*t) >= target - 1e-9]
    if not ok:
        return sym
    best = min(ok, key=lambda t: (round(math.log((lambda b: b[1] / b[0])(band(ratios, *t))), 12),
                                  t[0] + t[1]))  # fmt: skip
    return conformal.Fit(*band(ratios, *best), cov(*best), len(units), sym.step, sym.margin)


_SHIPPED_FIT = conformal.fit


def vendor_units(rows: list[acc.CalRow], amd_serving: list[acc.CalRow]) -> list[conformal.Held]:
    """Alternative (c)'s units: each vendor of a regime-runtime with several (llama.cpp decode
    and prefill: AMD, Apple, Intel, NVIDIA), held out against the other vendors' band ⊕ new
    source; and AMD's vLLM serving tuning rows (held back from the bands) against the serving
    band. What a row on a vendor its regime's set lacks would need."""
    source = _of(pooled_source(acc.new_source_units(rows)), "all")
    dense = [r for r in rows if not (r.moe or r.four_bit)]
    out = []
    for regime in ("decode", "prefill"):
        sub = [r for r in dense if r.regime == regime and r.runtime == "llama.cpp"]
        for vendor in sorted({r.vendor for r in sub}):
            rest = [r for r in sub if r.vendor != vendor]
            held = [r for r in sub if r.vendor == vendor]
            out.append(acc._held(f"{regime} llama.cpp {vendor}", held, rest, source))
    if amd_serving:
        rest = [r for r in dense if r.regime == "serving"]
        out.append(acc._held("serving vllm amd", amd_serving, rest, source))
    return out


def amd_serving_rows() -> list[acc.CalRow]:
    """AMD's vLLM serving tuning rows (accuracy.SERVING_BAND_HELD_BACK) as calibration rows."""
    from benchmarks import serving_accuracy

    files = [p for p in serving_accuracy.DEFAULT_FILES if p.name in acc.SERVING_BAND_HELD_BACK]
    return [
        acc.CalRow("serving", "vllm", f"{r.model} {r.precision} tp{r.tp}", r.gpu, "amd",
                   "CDNA 3", r.measured / r.predicted, multi_gpu=r.tp > 1,
                   source=Path(r.source).stem)
        for r in serving_accuracy.predict(acc.ROOT / "data", files) if r.predicted > 0
    ]  # fmt: skip


def source_term_choice(rows: list[acc.CalRow]) -> list[tuple[str, int, float, float]]:
    """Per regime with a new-source term of its own: (regime, units, its nested
    leave-one-unit-out share of sources met, the pooled term's on the same units)."""
    units = acc.new_source_units(rows)
    out = []
    for regime in dict.fromkeys(_regime(h) for h in units):
        mine = [h for h in units if _regime(h) == regime]
        term = conformal.source_term(mine)
        if term is not None:
            out.append((regime, len(mine), term.cv_met, pooled_cv_met(mine, units)))
    return out


def own_at_rank_source(held: list[conformal.Held]) -> Sources:
    """The shipped rule (accuracy.source_scores): a regime's own new-source term wherever its
    units reach the rank (nine or more), else the pooled one. (pooled_source, which checks 1-4
    use, leaves the regime's own out: no regime had nine sources when they were written.)"""
    out = pooled_source(held)
    for regime in dict.fromkeys(_regime(h) for h in held):
        pair = _source_pair([h for h in held if _regime(h) == regime])
        if pair:
            out[regime] = pair
    return out


def pooled_cv_met(held: Sequence[conformal.Held], pool: Sequence[conformal.Held]) -> float:
    """The share of ``held`` units (one regime's sources) whose central 80 % the term from
    ``pool`` (every regime's, ``held`` among them) covers when that term is rebuilt without
    the unit (nested leave-one-unit-out, at the rest's own rank): SourceTerm.cv_met for the
    pooled term, so a regime's own term and the pooled one are weighed on the same units."""
    held = [h for h in held if h.ratios]
    pool = [h for h in pool if h.ratios]
    if not held:
        return math.nan
    met = 0
    for h in held:
        others = [conformal.unit_need(o) for o in pool if o is not h]
        k = conformal.unit_rank(len(others)) or len(others)
        met += conformal.source_met(h, conformal._order_term(others, k))
    return met / len(held)


def selected_source(held: list[conformal.Held]) -> Sources:
    """Alternative (e), not shipped: a regime's own term only where, nested, it meets more of
    its held-out sources than the pooled term does (a tie to the pooled term, more units)."""
    out = pooled_source(held)
    for regime in dict.fromkeys(_regime(h) for h in held):
        mine = [h for h in held if _regime(h) == regime]
        term = conformal.source_term(mine)
        if term is not None and term.cv_met > pooled_cv_met(mine, held) + 1e-9:
            out[regime] = (term.low, term.high)
    return out


THIRD_PASS = (
    "shipped", "own term if nested-better", "runtime-gpus≥4", "trimmed", "trimmed margins"
)  # fmt: skip


def _margins_only(
    rows: Sequence[conformal.Row], target: float = conformal.TARGET_COVERAGE
) -> conformal.Fit:
    """Alternative (d'): trimmed_fit on the margin side only (steps as shipped)."""
    return trimmed_fit(rows, target, margins_only=True)


PerRuntime = dict[str, list[tuple[bool, float]]]


def third_pass(
    rows: list[acc.CalRow], rule: str, per_runtime: dict[str, PerRuntime] | None = None
) -> dict[str, list[Scored]]:
    """Each GPU, then each source, held out of everything (every regime), refitted under
    ``rule``: per (regime, unit), its rows against the band bands.band draws; per check, each
    row's (inside, width) by "regime runtime" into ``per_runtime`` where given."""
    v = next(v for v in VARIANTS if v.name == "chosen")
    slugs = [r.slug for r in rows]
    source_fn = selected_source if rule == "own term if nested-better" else own_at_rank_source
    patching: dict[str, list[Any]] = {
        "own term if nested-better": [],
        "shipped": [],
        "runtime-gpus≥4": [mock.patch.object(acc, "RUNTIME_BAND_MIN_GPUS", 4)],
        "trimmed": [mock.patch.object(conformal, "fit", trimmed_fit)],
        "trimmed margins": [mock.patch.object(conformal, "fit", _margins_only)],
    }
    patches = patching[rule]
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        if per_runtime is None:
            per_runtime = {}
        by_slug, by_source = per_runtime.setdefault("GPU", {}), per_runtime.setdefault("source", {})
        return {
            "GPU": _held_out_cv(rows, v, source_fn, attrgetter("slug"), slugs, by_slug),
            "source": _held_out_cv(
                rows, v, source_fn, attrgetter("source"), [r.source for r in rows], by_source
            ),
        }


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    if "--third" in argv:
        return main_third(verbose, [a for a in argv if not a.startswith("-")])
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    rows = acc.calibration_rows(acc.ROOT / "data", train, acc.INFERENCE_FILE)
    print(
        "1. nested leave-one-unit-out over extrapolation units"
        " (whole band: base ⊕ new source ⊕ term)"
    )
    for v in VARIANTS:
        cv = term_cv(rows, v)
        _, terms, sources = fit(rows, v)
        print(f"  {v.name:10} " + " | ".join(f"{k} {_line(r)}" for k, r in cv.items() if r))
        shown = ", ".join(f"{k} ×{lo:.2f}/×{hi:.2f}" for k, (lo, hi) in terms.items())
        source = sources.get("all")
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
    print("3. what widens each band (widths: high ÷ low; steps past the conformal ranks)")
    print(f"  {'band':26} {'vendor':7} {'rows':>4} {'GPUs':>4} {'wl':>3} {'plain':>6}"
          f" {'GPU out':>11} {'wl out':>11} {'shipped':>7} {'⊕ source':>8}")  # fmt: skip
    for p in parts(rows):
        gs = f"{_w(p.gpu)} +{p.gpu[2]}" if p.gpu else ""
        ws = f"{_w(p.workload)} +{p.workload[2]}" if p.workload else ""
        print(f"  {p.key:26} {p.vendor:7} {p.rows:4d} {p.gpus:4d} {p.workloads:3d}"
              f" {_w(p.plain):>6} {gs:>11} {ws:>11} {_w(p.shipped):>7}"
              f" {_w(p.with_source):>8}")  # fmt: skip
    slugs = few_gpu_slugs(rows)
    print(f"4. alternatives: sources held out (2.), and each GPU of a band with < 9 GPUs held out"
          f" of everything ({len(slugs)} GPUs); per regime: units, mean share inside, units ≥ 80 %,"
          f" median width")  # fmt: skip
    for alt in ALTERNATIVES:
        for check, res in weigh(rows, alt, slugs).items():
            print(f"  {alt.name:9} {check:6} {_line(res)}")
            for g, sub in by_regime(res).items():
                covs = [c for _, _, c, _ in sub]
                print(
                    f"      {g:16} {len(sub):3d} {statistics.mean(covs):5.0%}"
                    f" {sum(c >= conformal.TARGET_COVERAGE for c in covs):3d}"
                    f" ×{statistics.median(w for *_, w in sub):.2f}"
                )
    return 0


def main_third(verbose: bool, only: Sequence[str] = ()) -> int:
    """Issue 23, third pass (docs/methodology.md, "Calibrated bands"): the candidates weighed."""
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    rows = acc.calibration_rows(acc.ROOT / "data", train, acc.INFERENCE_FILE)
    print("5a. a regime's own new-source term against the pooled one (nested leave-one-unit-out:"
          " its units whose central 80 % the term rebuilt without them covers)")  # fmt: skip
    for regime, count, own, pooled in source_term_choice(rows):
        print(f"  {regime:16} {count:3d} units: own {own:4.0%}, pooled {pooled:4.0%}")
    print("5b. a vendor its regime's set lacks: each vendor held out (the term, nested)")
    held = vendor_units(rows, amd_serving_rows())
    for h in held:
        lo, hi = h.base.band()
        inside = sum(lo <= r <= hi for r in h.ratios) / len(h.ratios)
        need = math.exp(max(conformal.unit_need(h)))
        print(
            f"  {h.unit:28} n={len(h.ratios):3d} inside base ⊕ new source {inside:4.0%},"
            f" its central 80 % needs ×{need:.2f}"
        )
    t = conformal.calibrate_term(held)
    print(
        f"  term ×{t.low:.2f}/×{t.high:.2f}: in-sample {t.coverage:.0%}, nested {t.cv_coverage:.0%}"
    )
    print("5c. rules held out by GPU (every GPU) and by source, everything refitted")
    for rule in [r for r in THIRD_PASS if not only or r in only]:
        per_runtime: dict[str, PerRuntime] = {}
        for check, res in third_pass(rows, rule, per_runtime).items():
            print(f"  {rule:15} {check:6} {_line(res)}")
            if verbose:
                for g, sub in by_regime(res).items():
                    covs = [c for _, _, c, _ in sub]
                    print(f"      {g:16} {len(sub):3d} {statistics.mean(covs):5.0%}"
                          f" {sum(c >= conformal.TARGET_COVERAGE for c in covs):3d}"
                          f" ×{statistics.median(w for *_, w in sub):.2f}")  # fmt: skip
                for key, got in sorted(per_runtime[check].items()) if check == "GPU" else ():
                    share = sum(ok for ok, _ in got) / len(got)
                    width = statistics.median(w for _, w in got)
                    print(f"        rows {key:30} n={len(got):4d} inside {share:4.0%} ×{width:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
