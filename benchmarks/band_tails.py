"""The tuning rows in the tails of the widest runtime bands (issue #23): TensorFlow ± XLA CNN
inference (tests/data/dle_cnn_inference.yaml), torch.compile vision inference
(tests/data/hf_compile_vision.yaml) and compiled diffusion (tests/data/diffusion_compiled.yaml).

For every row: measured ÷ predicted in throughput terms (a latency inverted), the GPU, runtime,
precision, batch, source (one harness, container and host) and what bounds the engine's step;
then the median ratio per (file, runtime, GPU, precision), and, where a file times two runtimes
on the same GPU, model, precision and batch, the measured speed of one over the other. The last
separates what a GPU does (a power cap slows every runtime on it alike) from what one software
stack does on it. With --by-batch, each (runtime, GPU, precision) group's median apart for the
batches the host binds (up to HOST_BATCH) and the larger ones the GPU binds; and, where a file
times two precisions on the same GPU, runtime, model and batch, one precision's ratio over the
other's: 1 where the engine's datapath ratio (its TF32 ÷ FP16 peaks and bytes) holds on that
stack, below 1 where one datapath runs slower than the rest of its own stack says.

Held-out files (tests/data/heldout_*.yaml, the timm spot-check) are never read here.

    python benchmarks/band_tails.py [--rows] [--by-batch] [FILE ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import perf  # noqa: E402
from app.shipped import yamlio  # noqa: E402
from benchmarks import accuracy as acc  # noqa: E402

DATA = ROOT / "data"
TUNING = ROOT / "tests" / "data"
FILES = ("dle_cnn_inference.yaml", "hf_compile_vision.yaml", "diffusion_compiled.yaml")


@dataclass(frozen=True)
class TailRow:
    file: str
    gpu: str
    preset: str
    runtime: str
    precision: str
    batch: int
    metric: str  # with ``steps``, what else must match for two runtimes' rows to pair
    steps: int
    source: str
    measured: float  # a rate (a latency inverted): higher is faster
    ratio: float  # measured ÷ predicted, throughput terms
    bound: str  # what bounds the engine's step (PerfEstimate.bottleneck)


def _rate(row: dict[str, Any], value: float) -> float:
    return 1.0 / value if row["metric"] in acc._LOWER_IS_BETTER else value


def tail_rows(path: Path, data_dir: Path = DATA) -> list[TailRow]:
    """Every row of one tuning file the catalog prices and the bands calibrate on (a superseded
    pre-release cell left out), with its ratio and its step's bound."""
    if path.name.startswith("heldout_"):
        raise ValueError(f"{path.name}: held-out files are not read here")
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    seen: list[perf.PerfEstimate] = []
    real = perf.estimate

    def spy(*args: Any, **kwargs: Any) -> perf.PerfEstimate:
        est = real(*args, **kwargs)
        seen.append(est)
        return est

    out: list[TailRow] = []
    # a pre-release cell a released revision of the same document re-measured calibrates no
    # band (accuracy.superseded_cells): left out here too, and the pairs below stay one-to-one
    stale = acc.superseded_cells(doc)
    perf.estimate = spy  # type: ignore[assignment]  # the step's bound, not only its figure
    try:
        for raw in doc["measurements"]:
            row = {**acc.source_stack(doc, raw), **raw}
            gpu = gpus.get(row.get("gpu_slug") or "")
            if gpu is None or (str(row.get("source")), gpu.slug, acc._heldout_group(row)) in stale:
                continue
            seen.clear()
            pred = acc.heldout_estimate(row, gpu, data_dir, doc.get("models") or {})[0]
            if not pred > 0:
                continue
            value = float(row["value"])
            out.append(
                TailRow(
                    path.stem, gpu.slug, str(row["preset"]), str(row["runtime"]),
                    str(row["precision"]), int(row.get("batch_size") or 1), str(row["metric"]),
                    int(row.get("steps") or 0), str(row.get("source") or path.stem),
                    _rate(row, value), _rate(row, value) / _rate(row, pred),
                    seen[-1].bottleneck if seen else "",
                )
            )  # fmt: skip
    finally:
        perf.estimate = real  # type: ignore[assignment]
    return out


def runtime_pair_ratios(
    rows: Iterable[TailRow], a: str, b: str
) -> dict[tuple[str, str], list[float]]:
    """Per (GPU, precision): runtime ``a``'s measured rate ÷ runtime ``b``'s on the same GPU,
    model, precision, batch, metric and steps (rows of one file)."""
    by = {(r.gpu, r.preset, r.precision, r.batch, r.metric, r.steps, r.runtime): r for r in rows}
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for key, r in by.items():
        other = by.get((*key[:-1], b))
        if r.runtime == a and other is not None:
            out[(r.gpu, r.precision)].append(r.measured / other.measured)
    return dict(out)


# The DLE tables' host-bound batches: their latency is flat from batch 1 to 8 on the V100 and
# A100 (docs/methodology.md, "DLE CNN inference"), so up to this batch a row measures the host's
# dispatch more than the GPU, and from the next one up the GPU.
HOST_BATCH = 8


def batch_band_medians(
    rows: Iterable[TailRow], host_batch: int = HOST_BATCH
) -> dict[tuple[str, str, str], tuple[float | None, float | None]]:
    """Per (runtime, GPU, precision): the median ratio over the batches up to ``host_batch``
    and over the larger ones (None where a band has no row)."""
    small: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    large: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for r in rows:
        key = (r.runtime, r.gpu, r.precision)
        (small if r.batch <= host_batch else large)[key].append(r.ratio)
    return {
        key: (
            statistics.median(small[key]) if small.get(key) else None,
            statistics.median(large[key]) if large.get(key) else None,
        )
        for key in sorted({*small, *large})
    }


def precision_pair_ratios(
    rows: Iterable[TailRow], a: str, b: str, min_batch: int = 0
) -> dict[tuple[str, str], list[float]]:
    """Per (runtime, GPU): precision ``a``'s ratio (measured ÷ engine) over precision ``b``'s on
    the same GPU, runtime, model, batch, metric and steps, batches above ``min_batch`` only:
    1 where the measured speed of ``a`` over ``b`` is what the engine's datapaths give."""
    by = {(r.gpu, r.runtime, r.preset, r.batch, r.metric, r.steps, r.precision): r for r in rows}
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for key, r in by.items():
        other = by.get((*key[:-1], b))
        if r.precision == a and other is not None and r.batch > min_batch:
            out[(r.runtime, r.gpu)].append(r.ratio / other.ratio)
    return dict(out)


def _print_by_batch(rows: list[TailRow]) -> None:
    for (runtime, gpu, precision), (lo, hi) in batch_band_medians(rows).items():
        cells = [f"{x:4.2f}" if x is not None else "  - " for x in (lo, hi)]
        print(
            f"  {runtime:14} {gpu:16} {precision:5} median batch <= {HOST_BATCH}: {cells[0]}"
            f"  batch > {HOST_BATCH}: {cells[1]}"
        )
    precisions = sorted({r.precision for r in rows})
    for i, a in enumerate(precisions):
        for b in precisions[i + 1 :]:
            pairs = precision_pair_ratios(rows, a, b, min_batch=HOST_BATCH)
            for (runtime, gpu), xs in sorted(pairs.items()):
                print(
                    f"  ratio {a} ÷ ratio {b} (batch > {HOST_BATCH}): {runtime:14} {gpu:16}"
                    f" n={len(xs):3}  median {statistics.median(xs):4.2f}"
                    f"  range {min(xs):4.2f}-{max(xs):4.2f}"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", default=list(FILES))
    ap.add_argument("--rows", action="store_true", help="every row, lowest ratio first")
    ap.add_argument(
        "--by-batch",
        action="store_true",
        help="medians for host-bound and GPU-bound batches apart; precision pairs",
    )
    args = ap.parse_args()
    for name in args.files:
        rows = tail_rows(TUNING / name)
        print(f"\n{name}: {len(rows)} rows")
        if args.rows:
            for r in sorted(rows, key=lambda r: r.ratio):
                print(
                    f"  {r.ratio:5.2f}  {r.gpu:16} {r.preset:22} {r.runtime:14} {r.precision:5}"
                    f" b{r.batch:<4} {r.source:32} {r.bound}"
                )
        groups: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        for r in rows:
            groups[(r.runtime, r.gpu, r.precision)].append(r.ratio)
        for (runtime, gpu, precision), xs in sorted(groups.items()):
            print(
                f"  {runtime:14} {gpu:16} {precision:5} n={len(xs):3}"
                f"  median {statistics.median(xs):4.2f}  range {min(xs):4.2f}-{max(xs):4.2f}"
            )
        runtimes = sorted({r.runtime for r in rows})
        for i, a in enumerate(runtimes):
            for b in runtimes[i + 1 :]:
                for (gpu, precision), xs in sorted(runtime_pair_ratios(rows, a, b).items()):
                    print(
                        f"  measured {a} ÷ {b}: {gpu:16} {precision:5} n={len(xs):3}"
                        f"  median {statistics.median(xs):4.2f}"
                        f"  range {min(xs):4.2f}-{max(xs):4.2f}"
                    )
        if args.by_batch:
            _print_by_batch(rows)


if __name__ == "__main__":
    main()
