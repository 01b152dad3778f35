"""Issue #23: does splitting the TensorFlow CNN inference band earn its keep on the tuning rows?

    PYTHONPATH=. python benchmarks/band_split_cv.py

Decided on the tuning rows alone (tests/data/dle_cnn_inference.yaml's calibrating TensorFlow ±
XLA rows; no held-out file is read). Each rule of band_conditions.CONDITIONS (the runtime's one
band, or the runtime's band split by precision, batch, bound, precision and batch) is
cross-validated with whole groups held out: each GPU in turn (a new card: the unit the issue
names), then each model in turn (a new network: what a held-out model is). For a held-out
group, every cell is fitted on the other groups' rows as accuracy._band_score fits a shipped
band (its own leave-one-GPU and leave-one-workload-out steps inside), and a cell the other
groups lack falls back to the runtime's band (what the app draws when a cell is missing). The
held-out rows are scored against their cell's band about its centre, alone and widened by the
tuning units' infer-cnn new-source term (accuracy.source_terms over accuracy.source_units:
held-out sets take no part), as bands.band composes it.

Printed per rule: the share of held-out rows inside (pooled over folds, and the mean over
groups, every group weighing the same), the median width (high ÷ low), and the width at equal
coverage: every band's log half-widths scaled by one factor until the pooled held-out share is
80 %, then the median width. A rule that holds a new GPU's rows in a narrower band at the same
coverage knows something about them; one that only moves the centre by what the other GPUs
happened to read does not.
"""

from __future__ import annotations

import random
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.domain import conformal
from benchmarks import accuracy as acc
from benchmarks.band_conditions import CONDITIONS, TF, Condition, bounds

Key = tuple[str, str, str, str, int]  # (GPU, preset, runtime, precision, batch)
Row = tuple[Key, tuple[str, float]]  # key -> (engine bottleneck, measured ÷ predicted)
Pair = tuple[float, float]

# what a fold holds out: a GPU, or a model (its preset)
GROUPINGS: dict[str, Callable[[Key], str]] = {"GPU": lambda k: k[0], "model": lambda k: k[1]}


@dataclass(frozen=True)
class Scored:
    rule: str
    group: str  # the held-out group
    ratio: float
    spread: conformal.Spread  # the cell's band about its centre, before any term


@dataclass(frozen=True)
class RuleResult:
    rule: str
    n: int
    coverage: float  # pooled share of held-out rows inside
    group_coverage: float  # mean over held-out groups of their share inside
    width: float  # median high ÷ low
    equal_width: float  # median width with every band scaled to 80 % pooled coverage
    scale: float  # the factor on log half-widths that gives 80 %


def _cal(rows: Sequence[Row]) -> list[acc.CalRow]:
    return [acc.CalRow("infer-cnn", k[2], f"{k[1:]}", k[0], "nvidia", "", r) for k, (_, r) in rows]


def cell_spread(rows: Sequence[Row]) -> conformal.Spread:
    """The shipped fit of a cell (accuracy._band_score) as a spread about its centre."""
    s = acc._band_score("cell", "all", _cal(rows))
    return conformal.Spread.of(s.low, s.high, s.bias)


def crossval(rows: Sequence[Row], cond: Condition, group: Callable[[Key], str]) -> list[Scored]:
    """Each group held out in turn: its rows against the cell fitted on the other groups."""
    out: list[Scored] = []
    for held in sorted({group(k) for k, _ in rows}):
        rest = [(k, v) for k, v in rows if group(k) != held]
        cache: dict[tuple[object, ...], conformal.Spread] = {}
        for k, (bound, ratio) in rows:
            if group(k) != held:
                continue
            c = cond(k[2], k[3], k[4], bound)
            if c not in cache:
                sub = [(kk, vv) for kk, vv in rest if cond(kk[2], kk[3], kk[4], vv[0]) == c]
                if not acc._enough(_cal(sub)):
                    # the other groups lack enough of the cell for a band of its own (the rule
                    # accuracy.bands_of applies): the runtime's band, as the app falls back
                    sub = [(kk, vv) for kk, vv in rest if kk[2] == k[2]]
                cache[c] = cell_spread(sub)
            out.append(Scored("", held, ratio, cache[c]))
    return out


def _band(s: Scored, term: Pair | None, scale: float = 1.0) -> Pair:
    sp = conformal.Spread(s.spread.centre, s.spread.down * scale, s.spread.up * scale)
    return sp.widened([term] if term else []).band()


def _inside(s: Scored, band: Pair) -> bool:
    return band[0] * (1 - 1e-9) <= s.ratio <= band[1] * (1 + 1e-9)


def _coverage(scored: Sequence[Scored], term: Pair | None, scale: float = 1.0) -> float:
    return sum(_inside(s, _band(s, term, scale)) for s in scored) / len(scored)


def equal_scale(scored: Sequence[Scored], term: Pair | None) -> float:
    """The smallest factor on every band's log half-widths (the term kept) that puts 80 % of
    the held-out rows inside (bisection; coverage only grows with the factor)."""
    lo, hi = 0.0, 8.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if _coverage(scored, term, mid) >= conformal.TARGET_COVERAGE:
            hi = mid
        else:
            lo = mid
    return hi


def result(rule: str, scored: Sequence[Scored], term: Pair | None) -> RuleResult:
    groups = sorted({s.group for s in scored})
    per = [_coverage([s for s in scored if s.group == g], term) for g in groups]
    widths = [(lambda b: b[1] / b[0])(_band(s, term)) for s in scored]
    k = equal_scale(scored, term)
    eq = [(lambda b: b[1] / b[0])(_band(s, term, k)) for s in scored]
    return RuleResult(
        rule,
        len(scored),
        _coverage(scored, term),
        statistics.fmean(per),
        statistics.median(widths),
        statistics.median(eq),
        k,
    )


def tuning_term() -> Pair | None:
    """The infer-cnn new-source term from the tuning units alone (no held-out set)."""
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    rows = acc.calibration_rows(acc.ROOT / "data", train, acc.INFERENCE_FILE)
    terms = {x.regime: (x.term.low, x.term.high) for x in acc.source_terms(acc.source_units(rows))}
    return terms.get("infer-cnn") or terms.get("all")


def tuning_rows() -> list[Row]:
    """The calibrating TensorFlow ± XLA rows of the tuning file (bounds: superseded cells out)."""
    return [(k, v) for k, v in bounds(acc.DLE_CNN_FILE).items() if k[2] in TF]


def evaluate(
    rows: Sequence[Row], term: Pair | None, rules: Sequence[str] = tuple(CONDITIONS)
) -> dict[str, dict[str, dict[str, RuleResult]]]:
    """grouping -> runtime ("all" pooled) -> rule -> its cross-validated result."""
    out: dict[str, dict[str, dict[str, RuleResult]]] = {}
    for gname, group in GROUPINGS.items():
        per: dict[str, dict[str, RuleResult]] = {}
        for rt in (*TF, "all"):
            sub = [(k, v) for k, v in rows if rt in ("all", k[2])]
            per[rt] = {}
            for rule in rules:
                scored = []
                for runtime in TF if rt == "all" else (rt,):
                    scored += crossval(
                        [(k, v) for k, v in sub if k[2] == runtime], CONDITIONS[rule], group
                    )
                per[rt][rule] = result(rule, scored, term)
        out[gname] = per
    return out


def placebo(seed: int) -> Condition:
    """A split that knows nothing: each (precision, batch) cell of a runtime put in one of two
    halves at random (seeded), to weigh a real split against one with as many cells."""

    def cond(rt: str, p: str, b: int, bound: str) -> tuple[object, ...]:
        return (rt, random.Random(f"{seed} {rt} {p} {b}").random() < 0.5)

    return cond


def placebo_test(
    rows: Sequence[Row], term: Pair | None, rule: str = "+ precision", seeds: int = 40
) -> tuple[float, list[float], float]:
    """(the rule's width at 80 %, the placebo splits' widths at 80 %, the share of placebos at
    or under the rule's), each GPU held out, both runtimes pooled: a permutation test."""

    def width(cond: Condition) -> float:
        scored = []
        for rt in TF:
            scored += crossval([(k, v) for k, v in rows if k[2] == rt], cond, GROUPINGS["GPU"])
        return result("", scored, term).equal_width

    mine = width(CONDITIONS[rule])
    others = [width(placebo(s)) for s in range(seeds)]
    return mine, others, sum(o <= mine for o in others) / len(others)


def main(argv: Sequence[str] = ()) -> int:
    rows = tuning_rows()
    term = tuning_term()
    gpus = sorted({k[0] for k, _ in rows})
    print(f"{len(rows)} calibrating tuning rows (TensorFlow ± XLA) on {', '.join(gpus)}")
    said = f"×{term[0]:.2f} / ×{term[1]:.2f}" if term else "none"
    print(f"infer-cnn new-source term from the tuning units alone: {said}\n")
    for label, t in (("with the tuning term", term), ("band alone (no term)", None)):
        res = evaluate(rows, t)
        for gname, per in res.items():
            print(f"each {gname} held out, {label}:")
            print(
                f"  {'runtime':15} {'rule':18} {'n':>4} {'inside':>7} {'per-group':>9}"
                f" {'med.width':>9} {'at 80 %':>8} {'scale':>6}"
            )
            for rt, rules in per.items():
                for r in rules.values():
                    print(
                        f"  {rt:15} {r.rule:18} {r.n:4d} {r.coverage:7.0%} {r.group_coverage:9.0%}"
                        f" ×{r.width:8.2f} ×{r.equal_width:7.2f} {r.scale:6.2f}"
                    )
            print()
    print("medians per GPU and precision class (tuning rows):")
    by: dict[tuple[str, str, str], list[float]] = {}
    for k, (_, r) in rows:
        bits = "16-bit" if k[3] in ("fp16", "bf16") else "32-bit"
        by.setdefault((k[2], k[0], bits), []).append(r)
    for (rt, g, bits), rs in sorted(by.items()):
        lo, hi = conformal.unit_edges(rs)
        med = statistics.median(rs)
        print(
            f"  {rt:15} {g:16} {bits:7} n={len(rs):3d} median {med:.2f}"
            f" central 80 % {lo:.2f}-{hi:.2f}"
        )
    mine, others, share = placebo_test(rows, term)
    print(
        f"\nplacebo (each GPU held out, tuning term): '+ precision' at 80 % ×{mine:.2f};"
        f" {len(others)} random two-way splits median ×{statistics.median(others):.2f}, range"
        f" ×{min(others):.2f}-×{max(others):.2f}; at or under it: {share:.0%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
