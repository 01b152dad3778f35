"""Per-group rank checks on the TUNING sets (issue #21, "per-group Spearman >= 0.9").

A group is a set of rows that differ only in the GPU (same model, runtime, precision, batch,
sequence lengths, GPU count); the engine should order its GPUs as measured. For every group of
three GPUs or more this lists those whose Spearman is below the threshold, with each row's GPU,
measured and predicted figures (rates: a latency is inverted) and measured ÷ predicted, and
classes each failing group:

* tie  -- every pair of GPUs the engine orders against the measurement differs by less than
  ``--tie`` (default 5 %) in measured value: a swap inside measurement noise, which the plain
  Spearman punishes as hard as a real inversion;
* structural -- at least one mis-ordered pair is further apart than that.

It also prints the tie-aware Spearman (accuracy.tie_aware_spearman): measured values within
``--tie`` of each other count as one rank class, whose order the prediction may choose.

Held-out files (tests/data/heldout_*.yaml) are never read here: causes are looked for on the
tuning sets alone.

    python benchmarks/failing_groups.py [--threshold 0.9] [--tie 0.05] [--all]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import accuracy as acc  # noqa: E402
from benchmarks import serving_accuracy as sa  # noqa: E402
from benchmarks.finetune import evaluate_finetune  # noqa: E402
from benchmarks.llm_pretrain import evaluate_pretrain  # noqa: E402

DATA = ROOT / "data"
TUNING = ROOT / "tests" / "data"


@dataclass(frozen=True)
class Point:
    gpu: str  # what varies inside the group (a GPU; for fine-tuning, the sequence length)
    measured: float  # a rate: higher is better
    predicted: float

    @property
    def ratio(self) -> float:
        return self.measured / self.predicted


Groups = dict[str, list[Point]]


def swapped_pairs(points: list[Point]) -> list[tuple[Point, Point]]:
    """Pairs the prediction orders against the measurement (strictly)."""
    return [
        (a, b)
        for a, b in combinations(points, 2)
        if (a.measured - b.measured) * (a.predicted - b.predicted) < 0
    ]


def _gap(a: float, b: float) -> float:
    return max(a, b) / min(a, b) - 1


def flat_pairs(points: list[Point], tie: float, flat: float = 0.005) -> list[tuple[Point, Point]]:
    """Pairs the engine prices alike (within ``flat``) that were measured more than ``tie``
    apart: the prediction cannot order them (Spearman counts a predicted tie as half a swap)."""
    return [
        (a, b)
        for a, b in combinations(points, 2)
        if _gap(a.predicted, b.predicted) < flat and _gap(a.measured, b.measured) >= tie
    ]


def classify(points: list[Point], tie: float) -> tuple[str, float]:
    """The failing group's cause and the widest measured gap (relative) behind it:
    "engine-tie" when the engine prices alike GPUs measured more than ``tie`` apart,
    "structural" when it orders a pair the wrong way round that was measured more than
    ``tie`` apart, else "tie" (every swap inside ``tie``: measurement noise)."""
    swaps = [_gap(a.measured, b.measured) for a, b in swapped_pairs(points)]
    flats = [_gap(a.measured, b.measured) for a, b in flat_pairs(points, tie)]
    worst = max(swaps, default=0.0)
    if worst >= tie:
        return "structural", worst
    if flats:
        return "engine-tie", max(flats)
    return "tie", worst


# ---------------------------------------------------------------- the tuning sets, as groups


def _rate(metric: str, v: float) -> float:
    return 1.0 / v if metric in acc._LOWER_IS_BETTER else v


def heldout_style(path: Path) -> Groups:
    """A tuning file written as the held-out files are: their own ``group`` key."""
    rows, _ = acc.evaluate_heldout(DATA, [path])
    out: Groups = {}
    for r in rows:
        out.setdefault(f"{r.regime} | {r.group}", []).append(
            Point(r.slug, _rate(r.metric, r.measured), _rate(r.metric, r.predicted))
        )
    return out


def serving() -> Groups:
    """serving_trtllm.yaml: model, weights, TP, ISL/OSL and load point; per-GPU tokens/s."""
    out: Groups = {}
    for r in sa.predict(DATA, [TUNING / "serving_trtllm.yaml"]):
        conc = f"C={r.concurrency}" if r.concurrency else "sat"
        key = f"{r.model} {r.precision} tp{r.tp} {r.isl}/{r.osl} {conc}"
        out.setdefault(key, []).append(Point(r.gpu, r.measured / r.tp, r.predicted / r.tp))
    return out


def runtime_inference() -> Groups:
    """runtime_inference.yaml (BERT TensorRT, ResNet-50, SDXL): preset, runtime, precision,
    sequence length (every row of a label runs one batch size)."""
    out: Groups = {}
    for slug, label, m, p in acc.evaluate_runtime(DATA, acc.RUNTIME_FILE).rows:
        out.setdefault(label, []).append(Point(slug, m, p))
    return out


def llm_inference() -> Groups:
    """llm_inference.yaml (llama.cpp, Llama 2 7B Q4_0): one group per backend and metric."""
    out: Groups = {}
    for s in acc.evaluate_inference(DATA, acc.INFERENCE_FILE):
        if s.backend != "all":
            out[f"{s.backend} {s.metric}"] = [Point(g, m, p) for g, m, p in s.rows]
    return out


def llm_pretrain() -> Groups:
    out: Groups = {}
    for r in evaluate_pretrain(DATA)[0]:
        out.setdefault(r.group, []).append(Point(r.slug, r.measured, r.predicted))
    return out


def finetune() -> Groups:
    """finetune_throughput.yaml: one GPU, so a group is a model and method over its sequence
    lengths (the point's name is the row's label, not a GPU)."""
    out: Groups = {}
    for r in evaluate_finetune(DATA)[0]:
        out.setdefault(r.group, []).append(Point(r.label, r.measured, r.predicted))
    return out


def tuning_sets() -> dict[str, Groups]:
    return {
        "serving (serving_trtllm)": serving(),
        "runtime_inference": runtime_inference(),
        "dle_cnn_inference": heldout_style(acc.DLE_CNN_FILE),
        "llm_pretrain": llm_pretrain(),
        "finetune (over seq lengths)": finetune(),
        "llm_inference (llama.cpp)": llm_inference(),
        # other tuning files scored per group the same way
        "diffusion_eager": heldout_style(acc.DIFFUSION_FILE),
        "diffusion_compiled": heldout_style(acc.DIFFUSION_COMPILED_FILE),
        "trtllm_static": heldout_style(acc.TRTLLM_STATIC_FILE),
        "dle_cnn_training": heldout_style(acc.DLE_TRAIN_FILE),
        "tf_cnn_training": heldout_style(acc.TF_TRAIN_FILE),
    }


def gpu_bias(sets: dict[str, Groups]) -> dict[str, dict[str, list[float]]]:
    """Per GPU and set: each row's m/p over its group's geometric-mean m/p (groups of two GPUs
    or more) -- how far the engine rates a GPU off relative to the others it is ranked with.
    A GPU consistently below 1 is over-rated against its peers; above 1, under-rated."""
    out: dict[str, dict[str, list[float]]] = {}
    for name, groups in sets.items():
        for pts in groups.values():
            if len({p.gpu for p in pts}) < 2:
                continue
            gm = math.exp(sum(math.log(p.ratio) for p in pts) / len(pts))
            for p in pts:
                out.setdefault(p.gpu, {}).setdefault(name, []).append(p.ratio / gm)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--tie", type=float, default=0.05, help="relative measured gap of a tie")
    ap.add_argument("--all", action="store_true", help="list every scored group's rows")
    ap.add_argument("--by-gpu", action="store_true", help="each GPU's m/p against its peers")
    args = ap.parse_args(argv)
    summary = []
    sets = tuning_sets()
    if args.by_gpu:
        print("median m/p over its group's geometric mean (< 1: rated above its peers), per set")
        for gpu, per in sorted(gpu_bias(sets).items()):
            cells = "  ".join(
                f"{k.split()[0]} {statistics.median(v):.2f} (n{len(v)})" for k, v in per.items()
            )
            print(f"  {gpu:26} {cells}")
    for name, groups in sets.items():
        scored = {k: v for k, v in groups.items() if len({p.gpu for p in v}) >= 3}
        print(f"\n== {name}: {len(scored)} groups of >= 3")
        pairs = {k: v for k, v in groups.items() if len({p.gpu for p in v}) == 2}
        if pairs:
            wrong = [(k, v) for k, v in pairs.items() if swapped_pairs(v)]
            kinds = [classify(v, args.tie)[0] for _, v in wrong]
            print(
                f"   {len(pairs)} groups of two GPUs: {len(wrong)} ordered the wrong way round"
                f" ({kinds.count('tie')} within the tie)"
            )
            for key, pts in wrong:
                kind, gap = classify(pts, args.tie)
                print(f"  {key}: [{kind}, measured gap {gap:.1%}]")
                for p in pts:
                    print(
                        f"      {p.gpu:28} measured {p.measured:11.2f}"
                        f" predicted {p.predicted:11.2f}  m/p {p.ratio:5.2f}"
                    )
        n_fail = n_tie = n_flat = 0
        plain_all, aware_all = [], []
        for key, pts in scored.items():
            pred, meas = [p.predicted for p in pts], [p.measured for p in pts]
            rho = acc.spearman(pred, meas)
            aware = acc.tie_aware_spearman(pred, meas, args.tie)
            plain_all.append(rho)
            aware_all.append(aware)
            failing = rho < args.threshold - 1e-9  # a Spearman of exactly the bar passes
            if not (failing or args.all):
                continue
            kind, worst = classify(pts, args.tie)
            if failing:
                n_fail += 1
                n_tie += kind == "tie"
                n_flat += kind == "engine-tie"
            tag = f"{kind}, widest gap {worst:.1%}" if failing else "ok"
            print(f"  {key}: spearman {rho:.3f}  tie-aware {aware:.3f}  [{tag}]")
            for p in sorted(pts, key=lambda p: -p.measured):
                print(
                    f"      {p.gpu:28} measured {p.measured:11.2f} predicted {p.predicted:11.2f}"
                    f"  m/p {p.ratio:5.2f}"
                )
        summary.append((name, len(scored), n_fail, n_tie, n_flat, plain_all, aware_all))
    print(f"\nsummary (threshold {args.threshold}, tie = measured within {args.tie:.0%})")
    print(
        f"{'set':30} {'groups':>6} {'fail':>5} {'tie':>4} {'eng.tie':>7} {'struct':>6}"
        f" {'min':>6} {'min.ta':>6}"
    )
    for name, n, f, t, fl, plain, aware in summary:
        lo = min(plain, default=math.nan)
        lo_ta = min(aware, default=math.nan)
        print(f"{name:30} {n:6d} {f:5d} {t:4d} {fl:7d} {f - t - fl:6d} {lo:6.3f} {lo_ta:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
