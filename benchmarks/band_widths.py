"""What makes a held-out regime's band wide (issue 23): its runtime's base band, a widening,
or the new-source term.

    PYTHONPATH=. python benchmarks/band_widths.py [--rows] [REGIME ...]

A row's band is its base band (the tuning rows' split-conformal band for its regime, runtime
or vendor, about their median) with each widening and the new-source term added in quadrature
in log space (conformal.Spread). Per held-out regime this prints the median width after each
step — base alone, with the widenings, with the cross-fitted new-source term (the figure
accuracy.py reports last) — and, for every base band a regime's rows draw, the tuning rows
behind it: their count, GPUs and workloads, the band with each GPU held out and with each
workload held out (the shipped band is the envelope of the two), and the rows' own central
80 % in sample (the narrowest band those rows could honestly carry; `floor`). A base band at
or above ×2.5 cannot meet the goal whatever the terms on top; the floor says whether any fit
of the same tuning rows could.

With --rows, every held-out row of those regimes term by term (row_terms): its base band and
centre, each widening it draws (a term of ×1 included, named), the new-source term it is scored
under (cross-fitted), the band, its width, measured ÷ predicted and whether it is inside.

Held-out rows are only scored here (band_crossfit's folds), never calibrated on.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.domain import bands, conformal
from app.domain.efficiency import EfficiencyTable
from app.shipped.rules import load_efficiency
from benchmarks import accuracy as acc
from benchmarks import band_crossfit as bc

Pair = tuple[float, float]


@dataclass(frozen=True)
class Steps:
    """One row's band, step by step: widths (high ÷ low) of the base band, the base with the
    row's widenings, and with the new-source term too; the base band's key and vendor."""

    key: str
    vendor: str
    base: float
    widened: float
    total: float
    widenings: tuple[str, ...]  # "reason-head ×low/×high" of each non-nil widening


def _width(pair: Pair) -> float:
    return pair[1] / pair[0]


def steps(x: bands.BandInputs, table: EfficiencyTable, term: Pair | None) -> Steps:
    """``x``'s band as bands.band builds it (``table`` without its new-source term, ``term``
    in its place: the cross-fitted one), one step at a time."""
    bare = replace(table, new_source={})
    lo, hi, centre, _, calibrated = bands._base(x, bare)
    ws = [w for w in bands.widenings(x, bare, calibrated) if (w.low, w.high) != (1.0, 1.0)]
    base = conformal.Spread.of(lo, hi, centre)
    widened = base.widened([(w.low, w.high) for w in ws])
    total = widened.widened([term] if term else [])
    key = (
        bare._band_key(x.regime, x.vendor, x.runtime, x.kind, x.precision_class)
        if calibrated
        else None
    )
    return Steps(
        key[0] if key else "(uncalibrated)",
        key[1] if key else "",
        _width(base.band()),
        _width(widened.band()),
        _width(total.band()),
        tuple(f"{w.reason.split(':')[0][:40]} ×{w.low:.2f}/×{w.high:.2f}" for w in ws),
    )


def band_rows(rows: Sequence[acc.CalRow], key: str, vendor: str) -> list[acc.CalRow]:
    """The tuning rows behind the shipped band ``key`` ("infer-cnn/tensorflow") for ``vendor``
    ("all" or one), chosen as accuracy.bands_of chooses them: dense standard-format rows of the
    regime; a kind banded apart ("train-llm/fine-tuning") alone, else the regime without such
    kinds; a runtime's rows for "regime/runtime"; its precision class's rows for
    "regime/runtime/class" (bands.PRECISION_BANDS)."""
    regime, _, sub = key.partition("/")
    sub, _, bits = sub.partition("/")
    rs = [r for r in rows if r.regime == regime and not (r.moe or r.four_bit)]
    apart = {
        k for k in {r.kind for r in rs if r.kind} if acc._enough([r for r in rs if r.kind == k])
    }
    if sub in apart:
        rs = [r for r in rs if r.kind == sub]
    else:
        rs = [r for r in rs if r.kind not in apart]
        if sub:
            rs = acc.runtime_band_rows(rs, regime, sub)
        if bits:
            rs = [r for r in rs if r.precision_class == bits]
    return rs if vendor == "all" else [r for r in rs if r.vendor == vendor]


@dataclass(frozen=True)
class Record:
    """The tuning record behind a base band: rows, GPUs, workloads, the band with each GPU and
    with each workload held out (None where that check is not run), and the rows' own central
    80 % in sample (conformal_band, nothing held out)."""

    n: int
    gpus: int
    workloads: int
    gpu_out: Pair | None
    workload_out: Pair | None
    floor: Pair
    centre: float  # the rows' median: the band's centre

    def floor_with(self, term: Pair | None) -> float:
        """The width of the in-sample band about the centre with ``term`` in quadrature: the
        narrowest a row drawing this band (and no widening) could get from these rows."""
        base = conformal.Spread.of(*self.floor, self.centre)
        return _width(base.widened([term] if term else []).band())


def record(rows: Sequence[acc.CalRow]) -> Record:
    gpus, workloads = len({r.slug for r in rows}), len({r.workload for r in rows})
    gpu_out = workload_out = None
    if gpus >= 2:
        f = conformal.fit([(r.slug, r.ratio) for r in rows])
        gpu_out = (f.low, f.high)
    if workloads >= acc.MIN_WORKLOADS:
        f = conformal.fit([(r.workload, r.ratio) for r in rows])
        workload_out = (f.low, f.high)
    floor = conformal.conformal_band([r.ratio for r in rows])
    centre = statistics.median(r.ratio for r in rows)
    return Record(len(rows), gpus, workloads, gpu_out, workload_out, floor, centre)


@dataclass(frozen=True)
class RowTerms:
    """One held-out row's band term by term, as bands.band composes it (the new-source term in
    its place the one it is scored under)."""

    key: str  # the base band's key ("infer-cnn/tensorflow") and vendor, or "(uncalibrated)"
    base: Pair
    centre: float
    widenings: tuple[tuple[str, float, float], ...]  # (reason head, low, high), ×1 ones too
    term: Pair | None
    band: Pair
    ratio: float

    @property
    def inside(self) -> bool:
        return self.band[0] * (1 - 1e-9) <= self.ratio <= self.band[1] * (1 + 1e-9)


def row_terms(s: bc.Scored, table: EfficiencyTable, term: Pair | None) -> RowTerms:
    """``s``'s band, each step named: ``table`` without its new-source term, ``term`` added."""
    bare = replace(table, new_source={})
    x = s.row.inputs
    assert x is not None
    lo, hi, centre, _, calibrated = bands._base(x, bare)
    ws = bands.widenings(x, bare, calibrated)
    key = (
        bare._band_key(x.regime, x.vendor, x.runtime, x.kind, x.precision_class)
        if calibrated
        else None
    )
    return RowTerms(
        f"{key[0]} {key[1]}" if key else "(uncalibrated)",
        (lo, hi),
        centre,
        tuple((w.reason.split(":")[0][:32], w.low, w.high) for w in ws),
        term,
        s.band({"all": term} if term else {}),
        s.row.ratio,
    )


def print_rows(banded: Sequence[tuple[bc.Scored, Pair | None]], table: EfficiencyTable) -> None:
    print()
    print("Every row, term by term (base band about its centre; widenings, ×1 ones named; the")
    print("new-source term it is scored under; the band; measured ÷ predicted):")
    for s, t in banded:
        rt = row_terms(s, table, t)
        ws = "; ".join(f"{r} ×{lo:.2f}/×{hi:.2f}" for r, lo, hi in rt.widenings) or "none"
        src = f"×{t[0]:.2f}/×{t[1]:.2f}" if t else "none"
        print(
            f"  {s.row.regime:22} {s.row.slug:16} {s.row.group[:44]:44} {rt.key:30}"
            f" {rt.base[0]:.2f}–{rt.base[1]:.2f} c{rt.centre:.2f} | {ws} | source {src}"
            f" -> {rt.band[0]:.2f}–{rt.band[1]:.2f} ×{_width(rt.band):.2f}"
            f" r={rt.ratio:.2f} {'in' if rt.inside else 'OUT'}"
        )


def _pair(p: Pair | None) -> str:
    return "—" if p is None else f"{p[0]:.2f}–{p[1]:.2f} ×{_width(p):.2f}"


def main(argv: list[str]) -> int:
    data = acc.ROOT / "data"
    table = load_efficiency(data)
    scored = bc.heldout_rows(data, table)
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    cal = acc.calibration_rows(data, train, acc.INFERENCE_FILE)
    tuning = acc.source_units(cal)
    fs = bc.folds(scored)
    terms = conformal.cross_fitted(
        {f: bc.units(ss) for f, ss in fs.items()}, bc.shipped_rule, tuning
    )
    spot = bc.scored_rows(acc.evaluate_heldout(data, [acc.SPOTCHECK_FILE])[0], table)
    full = bc.shipped_rule([*tuning, *bc.units(scored)])
    banded: list[tuple[bc.Scored, Pair | None]] = []
    for f, ss in fs.items():
        banded.extend((s, terms[f].get(s.regime) or terms[f].get("all")) for s in ss)
    banded.extend((s, full.get(s.regime) or full.get("all")) for s in spot)
    per_row = "--rows" in argv
    only = {a for a in argv if a != "--rows"}
    regimes = [g for g in dict.fromkeys(s.row.regime for s, _ in banded) if not only or g in only]
    keys: dict[tuple[str, str], None] = {}
    print("Median band width per held-out regime, step by step (cross-fitted new-source term;")
    print("the spot-check set under the shipped one):")
    print(f"{'regime':24} {'n':>4} {'base':>6} {'+widen':>7} {'+source':>8}  base bands drawn")
    for g in regimes:
        st = [
            steps(s.row.inputs, table, t) for s, t in banded if s.row.regime == g and s.row.inputs
        ]
        med = [statistics.median(getattr(x, a) for x in st) for a in ("base", "widened", "total")]
        drawn = sorted({(x.key, x.vendor) for x in st})
        keys.update(dict.fromkeys(drawn))
        said = ", ".join(
            f"{k} {v} ({sum((x.key, x.vendor) == (k, v) for x in st)})" for k, v in drawn
        )
        print(f"{g:24} {len(st):4d} ×{med[0]:5.2f} ×{med[1]:6.2f} ×{med[2]:7.2f}  {said}")
        for w in sorted({w for x in st for w in x.widenings}):
            print(f"{'':24}      widening: {w} ({sum(w in x.widenings for x in st)} rows)")
    print()
    print("The tuning record behind each base band (rows, GPUs, workloads; the band with each GPU")
    print("held out and with each workload held out, the shipped one their envelope; the rows'")
    print("own central 80 % in sample, nothing held out, and that with the shipped new-source")
    print("term in quadrature, the narrowest such a row could honestly get from these rows):")
    for key, vendor in keys:
        if key == "(uncalibrated)":
            continue
        rec = record(band_rows(cal, key, vendor))
        shipped = table.bands.get((key, vendor))
        print(
            f"  {key:30} {vendor:7} n={rec.n:3d} GPUs {rec.gpus:2d} workloads {rec.workloads:3d}"
            f"  shipped {_pair(shipped)}; GPU out {_pair(rec.gpu_out)};"
            f" workload out {_pair(rec.workload_out)}; in sample {_pair(rec.floor)},"
            f" ⊕ new source ×{rec.floor_with(table.source_term(_family(key, table))):.2f}"
        )
    if per_row:
        print_rows([(s, t) for s, t in banded if s.row.regime in regimes], table)
    return 0


def _family(key: str, table: EfficiencyTable) -> str:
    """The band family a base band's key sizes its new-source term in (bands.term_family): a
    kind banded apart ("train-llm/fine-tuning") its own, else the key's regime. A runtime's
    cell ("decode/llama.cpp") is its regime's family: band_of_kind holds for any key under
    the regime, so the part after the slash must be the one workload kind banded apart
    (bands.FINE_TUNING) to be its own family."""
    regime, _, sub = key.partition("/")
    kind = sub if sub == bands.FINE_TUNING else ""
    return bands.term_family(bands.BandInputs(regime, "", "", "", "", kind=kind), table)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
