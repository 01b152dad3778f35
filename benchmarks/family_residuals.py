"""Tuning-set residuals by GPU family and operator mix (issue 21, "fam").

Every tuning-set result the bands calibrate on (``accuracy.calibration_rows``: Lambda PyTorch
training, DLE/TF CNN sets, diffusion, TensorRT, LLM pretraining and fine-tuning, llama.cpp,
TensorRT-LLM, serving) is read as measured ÷ predicted and, to take each workload's level out,
as that ratio over the geometric mean of its workload's rows (rows that differ only in the
GPU): the residual a ranking sees. Rows are classed by the network's operator mix (``conv``:
CNNs and diffusion UNets; ``transformer``: BERT, ViT, LLMs) and whether the runtime is eager
PyTorch, and GPUs by family: NVIDIA datacenter HBM, datacenter GDDR, workstation, GeForce,
then other vendors.

What each candidate mechanism predicts, and so what the table tests:

* sustained clock (GeForce boards boosting above the rated clock their peak is quoted at) is
  not operator-specific: it moves a GeForce card's compute-bound rows alike, convolution or
  GEMM, so GeForce's ``conv`` and ``transformer`` residuals should agree;
* an achieved-bandwidth share per memory type moves the memory-bound rows (decode, norms and
  layout passes) by memory family, GDDR against HBM, whatever the segment;
* L2 capacity keeps activations on chip by size, so 6 MB cards (GA102, GV100) and 40-72 MB
  cards (GA100, AD102) would split apart, whatever the segment;
* cuDNN's kernel choice per architecture moves one compute capability's convolutions, so an
  sm_86 workstation card and an sm_86 GeForce card read alike.

Held-out files are never read here.

    python benchmarks/family_residuals.py [--gpus]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402
from benchmarks import accuracy as acc  # noqa: E402

FAMILIES = ("dc-hbm", "dc-gddr", "workstation", "geforce")
CONV_MODELS = (
    "resnet", "resnext", "se-resnext", "vgg", "ssd", "efficientnet",
    "stable-diffusion", "sdxl",
)  # fmt: skip
EAGER_RUNTIMES = frozenset({"pytorch", "transformers"})


def family(gpu: GpuSpec) -> str:
    """The GPU's family: NVIDIA by segment (datacenter split by memory type), else its vendor."""
    if gpu.vendor != "nvidia":
        return gpu.vendor
    if gpu.segment == "datacenter":
        return "dc-hbm" if "hbm" in (gpu.memory_type or "").lower() else "dc-gddr"
    if gpu.segment == "workstation":
        return "workstation"
    return "geforce"


def op_mix(row: acc.CalRow) -> str:
    """``conv`` for CNNs and diffusion UNets, else ``transformer`` (BERT, ViT, LLMs)."""
    if row.regime in ("infer-cnn", "infer-diffusion"):
        return "conv"
    name = row.workload.lower()
    if row.regime == "train" and any(m in name for m in CONV_MODELS):
        return "conv"
    return "transformer"


def regime_class(row: acc.CalRow) -> str:
    """``conv-eager``, ``conv-graph`` (compiled, TensorRT, TensorFlow), ``transformer-eager``
    (eager PyTorch training and inference), ``llm-graph`` (TensorRT-LLM, gpt-fast, llama.cpp,
    Megatron, vLLM)."""
    eager = row.runtime in EAGER_RUNTIMES
    if op_mix(row) == "conv":
        return "conv-eager" if eager else "conv-graph"
    return "transformer-eager" if eager else "llm-graph"


def _gmean(xs: Iterable[float]) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def relative(rows: list[acc.CalRow]) -> list[tuple[acc.CalRow, float]]:
    """Each row's m/p over its workload's geometric-mean m/p (workloads of two GPUs or more):
    below 1, the engine rates the GPU above its peers on that workload; above 1, below."""
    by: dict[tuple[str, str, str], list[acc.CalRow]] = {}
    for r in rows:
        by.setdefault((r.regime, r.runtime, r.workload), []).append(r)
    out = []
    for group in by.values():
        if len({r.slug for r in group}) < 2:
            continue
        gm = _gmean(r.ratio for r in group)
        out.extend((r, r.ratio / gm) for r in group)
    return out


def table(
    rows: list[acc.CalRow], gpus: dict[str, GpuSpec]
) -> dict[tuple[str, str], tuple[int, float, float]]:
    """(regime class, family) → (rows, median relative residual, median m/p)."""
    cells: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r, rel in relative(rows):
        key = (regime_class(r), family(gpus[r.slug]))
        cells.setdefault(key, []).append((rel, r.ratio))
    return {
        k: (len(v), statistics.median(x for x, _ in v), statistics.median(y for _, y in v))
        for k, v in cells.items()
    }


def per_gpu(
    rows: list[acc.CalRow], gpus: dict[str, GpuSpec]
) -> dict[str, dict[str, tuple[int, float]]]:
    """GPU slug → regime class → (rows, median relative residual)."""
    cells: dict[str, dict[str, list[float]]] = {}
    for r, rel in relative(rows):
        cells.setdefault(r.slug, {}).setdefault(regime_class(r), []).append(rel)
    return {
        s: {c: (len(v), statistics.median(v)) for c, v in per.items()} for s, per in cells.items()
    }


CLASSES = ("conv-eager", "conv-graph", "transformer-eager", "llm-graph")


def precision_of(row: acc.CalRow) -> str:
    """``fp32`` where the workload names it (Lambda's fp32 rows, TF's fp32/tf32), else
    ``16-bit`` (every other tuning row runs 16-bit or lower tensor math)."""
    words = row.workload.lower().split()
    return "fp32" if "fp32" in words or "tf32" in words else "16-bit"


def by_die(
    rows: list[acc.CalRow], gpus: dict[str, GpuSpec], regime_classes: tuple[str, ...]
) -> dict[tuple[str, str, str], list[float]]:
    """(compute capability, family, precision) → relative residuals of the rows of
    ``regime_classes``: whether a pattern follows the die (one compute capability across
    segments) or the segment (one family across dies)."""
    out: dict[tuple[str, str, str], list[float]] = {}
    for r, rel in relative(rows):
        g = gpus[r.slug]
        if g.vendor != "nvidia" or regime_class(r) not in regime_classes:
            continue
        out.setdefault((g.compute_capability or "?", family(g), precision_of(r)), []).append(rel)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", action="store_true", help="one line per NVIDIA GPU too")
    ap.add_argument("--data", type=Path, default=ROOT / "data", help="a data/ copy (what-ifs)")
    args = ap.parse_args(argv)
    data = args.data
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    rows = acc.calibration_rows(
        data, ROOT / "tests" / "data" / "lambda_pytorch_train.yaml", acc.INFERENCE_FILE
    )
    cells = table(rows, gpus)
    print("median relative residual (m/p over its workload's geometric mean) [median m/p] (n)")
    print(f"{'family':12}" + "".join(f"{c:>26}" for c in CLASSES))
    fams = [*FAMILIES, *sorted({f for _, f in cells} - set(FAMILIES))]
    for f in fams:
        line = f"{f:12}"
        for c in CLASSES:
            cell = cells.get((c, f))
            line += (
                f"{'':>26}" if cell is None else f"{cell[1]:>11.2f} [{cell[2]:.2f}] (n{cell[0]:3d})"
            )
        print(line)
    print("\neager PyTorch rows (conv-eager, transformer-eager) by compute capability and family")
    print("  median relative residual (n), 16-bit | fp32")
    die = by_die(rows, gpus, ("conv-eager", "transformer-eager"))
    for cc, fam in sorted({(c, f) for c, f, _ in die}):
        cols = ""
        for prec in ("16-bit", "fp32"):
            v = die.get((cc, fam, prec))
            cols += f"{statistics.median(v):>9.2f} (n{len(v):3d})" if v else f"{'':>16}"
        print(f"  sm {cc:5} {fam:12}{cols}")
    if args.gpus:
        print("\nper NVIDIA GPU: median relative residual (n)")
        for slug, per in sorted(per_gpu(rows, gpus).items(), key=lambda kv: family(gpus[kv[0]])):
            g = gpus[slug]
            if g.vendor != "nvidia":
                continue
            cols = "".join(
                f"{per[c][1]:>13.2f} (n{per[c][0]:3d})" if c in per else f"{'':>20}"
                for c in CLASSES
            )
            print(f"  {slug:22} {family(g):11} {g.compute_capability or '':4}{cols}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
