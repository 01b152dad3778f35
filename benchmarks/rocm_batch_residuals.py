"""Where the MI300X vLLM step time the engine misses goes as the batch grows (issue 21).

Reads the ROCm vLLM TUNING load points only (tests/data/serving_rocm_vllm_*.yaml: static
batches of 1-256 sequences, each row's latency over its output tokens = the mean step), prices
each through benchmarks/serving_accuracy.py as that script does, and prints per row the
measured and predicted step (ms) and what the engine misses. Then, per model and prompt length,
the miss's slope per running sequence (least squares over the rows from ``--from`` sequences up)
and, beside the ratio of the two models' slopes, the ratio each candidate cost would give if it
alone carried the slope: a cost per sequence that scales with the GEMM FLOPs per token, with the
layers, with the all-reduced bytes per token, with the KV bytes read per context token, or is
the same for both (host work per sequence). A candidate whose ratio is far from the measured
one cannot carry the slope alone. Held-out files are never read here.

    python benchmarks/rocm_batch_residuals.py [--from 16] [FILE ...]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain.workload import ModelSpec  # noqa: E402
from app.recommend.presets import load_presets  # noqa: E402
from app.shipped import yamlio  # noqa: E402
from app.shipped.rules import load_efficiency  # noqa: E402
from benchmarks import serving_accuracy as sa  # noqa: E402

DEFAULT_FILES = sorted((ROOT / "tests" / "data").glob("serving_rocm_vllm_*.yaml"))
KV_BYTES = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0}


@dataclass(frozen=True)
class Point:
    model: str
    isl: int
    osl: int
    seqs: int
    measured_ms: float  # the table's latency over its output tokens: the mean step
    predicted_ms: float  # the engine's inter-token latency at that many sequences

    @property
    def missed_ms(self) -> float:
        return self.measured_ms - self.predicted_ms


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ``ys`` on ``xs`` (0 with fewer than two distinct ``xs``)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0.0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def per_sequence_us(points: list[Point], least: int) -> dict[tuple[str, int, int], float]:
    """The missed step time's slope per running sequence (µs), per model and prompt and output
    lengths, over the rows of at least ``least`` sequences."""
    groups: dict[tuple[str, int, int], list[Point]] = defaultdict(list)
    for p in points:
        if p.seqs >= least:
            groups[(p.model, p.isl, p.osl)].append(p)
    return {
        k: 1e3 * slope([float(p.seqs) for p in ps], [p.missed_ms for p in ps])
        for k, ps in groups.items()
    }


def candidates(m: ModelSpec, tp: int, kv_bytes: float) -> dict[str, float]:
    """Per token and GPU of a ``tp``-wide replica, what each candidate cost scales with."""
    layers, hidden = float(m.layers or 0), float(m.hidden_size or 0)
    return {
        "GEMM FLOPs": 2.0 * m.params_per_token / tp,
        "layers": layers,
        "all-reduced bytes": 2.0 * layers * hidden * 2.0,  # two 16-bit all-reduces a layer
        "KV bytes per context token": (m.kv_values(1.0) or 0.0) * kv_bytes / tp,
        "host (per sequence)": 1.0,
    }


def evaluate(files: list[Path], data_dir: Path) -> tuple[list[Point], dict[str, ModelSpec]]:
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    presets = load_presets(data_dir)
    table = load_efficiency(data_dir)
    points, models = [], {}
    for path in files:
        doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
        meta = doc["source"]
        for raw in doc["rows"]:
            model = presets[raw["model"]].model
            models[raw["model"]] = model
            cfg = sa.row_config(raw, meta)
            isl, osl, seqs = int(raw["isl"]), int(raw["osl"]), int(raw["concurrency"])
            res = sa.evaluate_one(
                gpus[raw["gpu"]], model, cfg, isl, osl, seqs, table,
                cached_prompt_tokens=sa._cached(raw, meta, isl),
            )  # fmt: skip
            points.append(
                Point(
                    model=raw["model"],
                    isl=isl,
                    osl=osl,
                    seqs=seqs,
                    measured_ms=1e3 * float(raw["latency_s"]) / osl,
                    predicted_ms=float(res.itl_ms or 0.0),
                )
            )
    return points, models


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("--from", dest="least", type=int, default=16)
    args = ap.parse_args(argv)
    points, models = evaluate(args.files, args.data)
    print(f"{'model':<16}{'in/out':>10}{'seqs':>6}{'measured':>10}{'predicted':>11}{'missed':>9}")
    for p in points:
        print(
            f"{p.model:<16}{f'{p.isl}/{p.osl}':>10}{p.seqs:>6}"
            f"{p.measured_ms:>9.2f}ms{p.predicted_ms:>9.2f}ms{p.missed_ms:>7.2f}ms"
        )
    slopes = per_sequence_us(points, args.least)
    print(f"\nmissed step time per running sequence (rows of >= {args.least} sequences)")
    for (model, isl, osl), us in sorted(slopes.items()):
        print(f"  {model:<16}{f'{isl}/{osl}':>10}  {us:7.1f} us")
    # the two models' slopes at the same lengths, against what each candidate predicts
    # the smaller model first, so that each ratio is the larger's over the smaller's
    names = sorted(models, key=lambda k: models[k].params_per_token)
    if len(names) == 2:
        a, b = names
        mine = {(i, o) for m, i, o in slopes if m == a}
        shared = sorted(mine & {(i, o) for m, i, o in slopes if m == b})
        ca, cb = candidates(models[a], 8, 2.0), candidates(models[b], 8, 2.0)
        for isl, osl in shared:
            got = slopes[(b, isl, osl)] / slopes[(a, isl, osl)]
            print(f"\n{b} / {a} at {isl}/{osl}: measured {got:.2f}")
            for k in ca:
                print(f"  if carried by {k:<28} {cb[k] / ca[k]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
