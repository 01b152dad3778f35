"""Issue #23: can the TensorFlow CNN inference band be conditioned to ×2.5 honestly?

    PYTHONPATH=. python benchmarks/band_conditions.py

The held-out `tf-cnn-inference` rows draw `infer-cnn/tensorflow` or `/tensorflow-xla`, each
widened by the infer-cnn new-source term. This scores them, cross-fitted (the term built
without their fold: band_crossfit.crossfit's), under bands conditioned on what the engine
knows, each band fitted as accuracy._band_score fits a shipped one, on tuning rows only
(tests/data/dle_cnn_inference.yaml: the held-out rows calibrate nothing here):

  runtime            the shipped cell (the runtime's band)
  + precision        16-bit (AMP) apart from 32-bit (FP32, TF32)
  + batch            batch ≤ band_tails.HOST_BATCH apart from larger batches
  + bound            host-bound steps (the engine's bottleneck: host overhead or transfer)
                     apart from GPU-bound ones
  + precision+batch  both

Then the floor no new-source rule can go under (the runtime band alone, no term), and the
per-GPU central 80 % of the runtime's tuning rows (a rule counting each GPU once), with the
rank a split-conformal band over GPUs needs (conformal.unit_rank: none under nine units).

With --preview: the rule weighed and not shipped, every source on NGC's TensorFlow 20.06
container (cuDNN 8.0.1, a Preview release: PREVIEW_STACK in its title), tuning and held-out,
inference and training, kept out of every band, term and unit it would calibrate, and still
scored; accuracy.py --write-bands --priors-only is run so on a copy of data/ (the shipped
tables are not touched) and its held-out band tables printed.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.catalog.loader import read_gpu_specs
from app.domain import conformal, perf
from app.shipped import yamlio
from app.shipped.rules import load_efficiency
from benchmarks import accuracy as acc
from benchmarks import band_crossfit as bc
from benchmarks.band_tails import HOST_BATCH

DATA = acc.ROOT / "data"
HELDOUT = "tf-cnn-inference"
TF = ("tensorflow", "tensorflow-xla")
HOST = frozenset({"host overhead", "host transfer"})

# (runtime, precision, batch, engine bottleneck) -> the condition's key within the runtime
Condition = Callable[[str, str, int, str], tuple[object, ...]]


def _bits(p: str) -> str:
    return "16-bit" if p in ("fp16", "bf16") else "32-bit"


def _batch(b: int) -> str:
    return f"batch<={HOST_BATCH}" if b <= HOST_BATCH else f"batch>{HOST_BATCH}"


CONDITIONS: dict[str, Condition] = {
    "runtime": lambda rt, p, b, bound: (rt,),
    "+ precision": lambda rt, p, b, bound: (rt, _bits(p)),
    "+ batch": lambda rt, p, b, bound: (rt, _batch(b)),
    "+ bound": lambda rt, p, b, bound: (rt, "host" if bound in HOST else "GPU"),
    "+ precision+batch": lambda rt, p, b, bound: (rt, _bits(p), _batch(b)),
}


def bounds(path: Path) -> dict[tuple[str, str, str, str, int], tuple[str, float]]:
    """(GPU, preset, runtime, precision, batch) -> (the engine's bottleneck, measured ÷
    predicted) for every row of ``path`` the catalog prices (scoring only: nothing is fitted)."""
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    seen: list[perf.PerfEstimate] = []
    real = perf.estimate

    def spy(*args: Any, **kwargs: Any) -> perf.PerfEstimate:
        est = real(*args, **kwargs)
        seen.append(est)
        return est

    out: dict[tuple[str, str, str, str, int], tuple[str, float]] = {}
    # the rows the shipped bands calibrate on: a pre-release cell a released revision of the
    # same document re-measured is left out, as accuracy's calibration leaves it (§6.7p "tf")
    stale = acc.superseded_cells(doc)
    perf.estimate = spy  # the step's bound, not only its figure
    try:
        for raw in doc["measurements"]:
            row = {**acc.source_stack(doc, raw), **raw}
            gpu = gpus.get(row.get("gpu_slug") or "")
            if gpu is None or row["runtime"] not in TF:
                continue
            if (str(row.get("source")), gpu.slug, acc._heldout_group(row)) in stale:
                continue
            seen.clear()
            pred = acc.heldout_estimate(row, gpu, DATA, doc.get("models") or {})[0]
            if not (pred > 0 and seen):
                continue
            value = float(row["value"])
            lower = row["metric"] in acc._LOWER_IS_BETTER
            ratio = pred / value if lower else value / pred
            key = (gpu.slug, str(row["preset"]), row["runtime"], row["precision"])
            out[(*key, int(row.get("batch_size") or 1))] = (seen[-1].bottleneck, ratio)
    finally:
        perf.estimate = real
    return out


# NGC's TensorFlow 20.06 container, as the sources' titles name it: CUDA 11.0.167 with cuDNN
# 8.0.1, a Preview release (8.0.2 the first GA; docs/methodology.md §6.7m "tf", §6.7n "tb")
PREVIEW_STACK = "20.06-tf1"


def preview_sources(data: Path = acc.HELDOUT_DIR) -> set[tuple[str, str]]:
    """(file stem, source key) of every `sources` entry in ``data`` whose title names
    PREVIEW_STACK: every such source, tuning and held-out (the rule is the stack's)."""
    out: set[tuple[str, str]] = set()
    for path in sorted(data.glob("*.yaml")):
        doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
        entries = doc.get("sources") if isinstance(doc, dict) else None
        for key, v in (entries or {}).items() if isinstance(entries, dict) else ():
            if isinstance(v, dict) and PREVIEW_STACK in str(v.get("title") or ""):
                out.add((path.stem, str(key)))
    return out


def preview_rule() -> str:
    """accuracy.py's report with the preview stack calibrating nothing (a copy of data/)."""
    pv = preview_sources()
    tuning = {k for f, k in pv if not f.startswith("heldout_")}
    held = {(f, k) for f, k in pv if f.startswith("heldout_")}
    real_cal, real_units = acc.calibration_rows, bc.units

    def cal(data_dir: Path, measurements: Path, inference: Path) -> list[acc.CalRow]:
        return [r for r in real_cal(data_dir, measurements, inference) if r.source not in tuning]

    def units(rows: Sequence[bc.Scored]) -> list[conformal.Held]:
        return real_units([s for s in rows if (s.row.file, s.row.source) not in held])

    out = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(DATA, data)
        with (
            mock.patch.object(acc, "calibration_rows", cal),
            mock.patch.object(bc, "units", units),
            contextlib.redirect_stdout(out),
        ):
            acc.main(["--data", str(data), "--write-bands", "--priors-only"])
    return out.getvalue()


def main(argv: Sequence[str] = ()) -> int:
    if "--preview" in argv:
        print(f"sources on {PREVIEW_STACK}: {sorted(preview_sources())}")
        text = preview_rule()
        start = text.index("Bands on the held-out set: share")
        print(text[start:])
        return 0
    table = load_efficiency(DATA)
    rows = bc.heldout_rows(DATA, table)
    train = acc.ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
    tuning = acc.source_units(acc.calibration_rows(DATA, train, acc.INFERENCE_FILE))
    folds = bc.folds(rows)
    terms = conformal.cross_fitted(
        {f: bc.units(ss) for f, ss in folds.items()}, bc.shipped_rule, tuning
    )
    fold = next(f for f, ss in folds.items() if any(s.row.regime == HELDOUT for s in ss))
    term = terms[fold].get("infer-cnn") or terms[fold]["all"]
    print(f"new-source term for fold {fold} (built without it): ×{term[0]:.2f} / ×{term[1]:.2f}")

    cal = [(k, v) for k, v in bounds(acc.DLE_CNN_FILE).items()]
    held = list(bounds(acc.HELDOUT_DIR / "heldout_tf_cnn_inference.yaml").items())
    print(f"{len(cal)} tuning rows (TensorFlow ± XLA), {len(held)} held-out rows\n")
    print(f"{'rule':20} {'coverage':>8} {'med.width':>9}  cells (n, band, centre)")
    for name, cond in CONDITIONS.items():
        cells: dict[tuple[object, ...], acc.BandScore] = {}
        inside, widths = 0, []
        for (_, _, rt, p, b), (bound, ratio) in held:
            c = cond(rt, p, b, bound)
            if c not in cells:
                sub = [
                    acc.CalRow("infer-cnn", k[2], f"{k[1:]}", k[0], "nvidia", "", r)
                    for k, (bd, r) in cal
                    if k[2] == rt and cond(k[2], k[3], k[4], bd) == c
                ]
                cells[c] = acc._band_score(name, "all", sub)
            s = cells[c]
            lo, hi = conformal.Spread.of(s.low, s.high, s.bias).widened([term]).band()
            inside += lo * (1 - 1e-9) <= ratio <= hi * (1 + 1e-9)
            widths.append(hi / lo)
        said = "; ".join(
            f"{'/'.join(map(str, c))} {s.n} {s.low:.2f}-{s.high:.2f} @{s.bias:.2f}"
            for c, s in sorted(cells.items(), key=str)
        )
        cov = inside / len(held)
        print(f"{name:20} {cov:8.0%} ×{statistics.median(widths):8.2f}  {said}")

    print("\nfloor (runtime band alone, no new-source term) and each GPU's central 80 %:")
    for rt in TF:
        shipped = table.bands.get((f"infer-cnn/{rt}", "nvidia"))
        per: dict[str, list[float]] = {}
        for k, (_, r) in cal:
            if k[2] == rt:
                per.setdefault(k[0], []).append(r)
        edges = ", ".join(
            f"{g} {lo:.2f}-{hi:.2f}"
            for g, (lo, hi) in ((g, conformal.unit_edges(v)) for g, v in sorted(per.items()))
        )
        rank = conformal.unit_rank(len(per))
        floor = f"×{shipped[1] / shipped[0]:.2f}" if shipped else "none"
        print(f"  {rt:15} band alone {floor}; {edges}; rank over {len(per)} GPUs: {rank}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
