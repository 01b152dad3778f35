"""LLM (decoder) pretraining throughput in absolute tokens/s per GPU against published runs.

    python benchmarks/llm_pretrain.py [-v]      (also printed by benchmarks/accuracy.py)

Rows: tests/data/llm_pretrain.yaml (llm-foundry's MPT tables on H100 and A100, torchtitan's
FSDP2 runs on A100) and the held-out tests/data/heldout_llm_pretrain.yaml (NeMo /
Megatron-Bridge performance summaries), which accuracy.py scores with the other held-out
regimes. Every row is a data-parallel FSDP job: ``num_gpus`` GPUs, ``micro_batch`` sequences
of ``seq_len`` tokens on each, priced by ``perf.estimate`` as one sharded job whose global
batch is micro_batch × num_gpus. Printed per source table (one GPU, many shapes: does the
engine rank the configurations?) and per group (one model, sequence length and GPU count on
several GPUs: does it rank the GPUs?).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import megatron, perf  # noqa: E402
from app.domain.calibration import Calibration  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402
from app.domain.workload import ModelSpec, WorkloadSpec  # noqa: E402
from app.shipped import yamlio  # noqa: E402
from app.shipped.rules import load_efficiency  # noqa: E402

PRETRAIN_FILE = ROOT / "tests" / "data" / "llm_pretrain.yaml"
# Megatron-LM's own GPT runs (Korthikanti et al. 2022): the `megatron` runtime's tuning set
MEGATRON_PRETRAIN_FILE = ROOT / "tests" / "data" / "megatron_pretrain.yaml"


def decoder(shape: dict[str, Any], params: float | None = None) -> ModelSpec:
    """The decoder a row ran: the file's shape, at the row's own parameter count if it has one."""
    return ModelSpec(
        family="decoder",
        params=float(params or shape["params"]),
        layers=int(shape["layers"]),
        hidden_size=int(shape["hidden_size"]),
        num_heads=int(shape["num_heads"]),
        num_kv_heads=shape.get("num_kv_heads"),
        intermediate_size=shape.get("intermediate_size"),
        vocab_size=shape.get("vocab_size"),
    )


def pretrain_job(
    gpu: GpuSpec,
    model: ModelSpec,
    row: dict[str, Any],
    data_dir: Path,
    calibration: Calibration | None = None,
) -> tuple[WorkloadSpec, perf.PerfEstimate]:
    """perf.estimate of one row and the job it priced (a row's band is drawn from the job):
    FSDP over ``num_gpus``, ``micro_batch`` sequences per GPU; a row that states its
    ``global_batch`` (Megatron's tuning rows) runs it in ``grad_accum`` engine micro-steps."""
    n = int(row["num_gpus"])
    steps = int(row.get("grad_accum") or 1)
    batch = (
        int(row["global_batch"]) // steps
        if row.get("global_batch")
        else int(row["micro_batch"]) * n
    )
    work = WorkloadSpec(
        task="training",
        model=model,
        precision=str(row.get("precision") or "bf16"),
        batch_size=batch,
        seq_len=int(row["seq_len"]),
        gradient_checkpointing=row["checkpointing"] is True,
        # Megatron's "selective" is its attention-core recomputation (Korthikanti et al. 2022)
        selective_recompute=_megatron_selective(row),
        optimizer="adamw",
        efficiency=load_efficiency(data_dir),
        attention_kernel=str(row.get("attention_kernel") or ""),
        # the runtime the row ran (tuning rows name none: eager PyTorch)
        runtime=str(row.get("runtime") or "pytorch"),
        megatron=megatron_layout(row),
    )
    return work, perf.estimate(
        gpu,
        work,
        num_gpus=n,
        sharded=True,
        accumulation_steps=int(row.get("grad_accum") or 1),
        backend="cuda",
        calibration=calibration,
    )


def megatron_layout(row: dict[str, Any]) -> megatron.MegatronLayout | None:
    """A Megatron row's own layout as its source table states it (TP, PP, CP, VP, FSDP; the
    micro-batches per pipeline: the row's ``microbatches``, else the held-out table's GA
    column; ``sequence_parallel: false`` where the run had none); None for every other row."""
    if row.get("runtime") != "megatron" or not row.get("layout"):
        return None
    lay = megatron.parse(str(row["layout"]))
    return replace(
        lay,
        microbatches=int(row.get("microbatches") or row.get("grad_accum") or 1),
        sequence_parallel=bool(row.get("sequence_parallel", True)),
        micro_batch=int(row.get("micro_batch") or 0),
    )


JobFn = Callable[
    [GpuSpec, ModelSpec, dict[str, Any], Path, Calibration | None],
    tuple[WorkloadSpec, perf.PerfEstimate],
]


def per_gpu(est: perf.PerfEstimate, row: dict[str, Any]) -> float:
    """An estimate's sequences/s as tokens/s per GPU of the row's ``num_gpus`` (default 1)."""
    return est.throughput * int(row["seq_len"]) / int(row.get("num_gpus") or 1)


def tokens_per_gpu(
    gpu: GpuSpec,
    model: ModelSpec,
    row: dict[str, Any],
    data_dir: Path,
    calibration: Calibration | None = None,
    job: JobFn = pretrain_job,
) -> float:
    """A training row's estimate in tokens/s per GPU (``job``: pretrain_job or
    finetune.finetune_job)."""
    return per_gpu(job(gpu, model, row, data_dir, calibration)[1], row)


@dataclass
class PretrainRow:
    source: str
    table: str  # source and GPU: one published table
    group: str  # model, sequence length and GPU count: rows differ only in the GPU
    slug: str
    label: str
    measured: float
    predicted: float


def _megatron_selective(row: dict[str, Any]) -> bool:
    """A Megatron row under selective recomputation (``--recompute-granularity selective``:
    the attention core only). torchtitan's "selective" (every other layer, or its op policy) is
    another thing the engine does not price."""
    return row.get("runtime") == "megatron" and row["checkpointing"] == "selective"


def scoreable(row: dict[str, Any]) -> bool:
    """Rows the engine can price as run: full or no activation recomputation, or Megatron's
    selective recomputation of the attention core."""
    return row["checkpointing"] in (True, False) or _megatron_selective(row)


def evaluate_pretrain(
    data_dir: Path, path: Path = PRETRAIN_FILE, calibration: Calibration | None = None
) -> tuple[list[PretrainRow], list[str]]:
    """Every scoreable row with its prediction, and the labels of the rows left out;
    ``calibration``: what the engine prices with (None: the priors)."""
    doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    out: list[PretrainRow] = []
    skipped: list[str] = []
    for row in doc["rows"]:
        label = (
            f"{row['model']} s{row['seq_len']} n{row['num_gpus']} mb{row['micro_batch']}"
            f" ckpt={row['checkpointing']}"
        )
        gpu = gpus.get(row["gpu_slug"])
        if gpu is None or not scoreable(row):
            skipped.append(f"{row['gpu_slug']} {label} {row.get('note') or ''}".strip())
            continue
        model = decoder(doc["models"][row["model"]], row.get("params"))
        # the source's attention kernel (llm-foundry's MPT: attn_impl triton) unless the row
        # names its own
        kernel = doc["sources"][row["source"]].get("attention_kernel")
        pred = tokens_per_gpu(
            gpu, model, {"attention_kernel": kernel, **row}, data_dir, calibration
        )
        out.append(
            PretrainRow(
                source=row["source"],
                table=f"{row['source']} {row['gpu_slug']}",
                group=f"{row['model']} s{row['seq_len']} n{row['num_gpus']}",
                slug=row["gpu_slug"],
                label=label,
                measured=float(row["tokens_per_s_per_gpu"]),
                predicted=pred,
            )
        )
    return out, skipped


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def rank_correlation(a: list[float], b: list[float]) -> float:
    """Spearman's rho of two equal-length lists; NaN where a list has one value throughout.
    (Ranks count from 0: a shift of every rank leaves rho as it is.)"""
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else math.nan


# Tie-aware per-group Spearman (issue #21): measured values this close (relative) count as one
# rank, so a swap between them is not scored as an error. 3 % is set a priori (issue #21's
# example), not fitted to rows; no source used here fixes the run-to-run noise of these tables.
TIE_TOLERANCE = 0.03


def tie_classes(measured: list[float], tie: float = TIE_TOLERANCE) -> list[int]:
    """A class index per value: sorted ascending, a value joins the current class while it is
    within ``tie`` (relative) of the class's smallest value, else it opens the next class."""
    out = [0] * len(measured)
    cls, base = -1, -math.inf
    for i in sorted(range(len(measured)), key=lambda i: measured[i]):
        if not measured[i] <= base * (1 + tie):
            cls, base = cls + 1, measured[i]
        out[i] = cls
    return out


def tie_aware_spearman(pred: list[float], meas: list[float], tie: float = TIE_TOLERANCE) -> float:
    """Spearman with swaps inside measurement ties forgiven: measured values within ``tie`` of
    each other (:func:`tie_classes`) form one class, ordered inside it as predicted; the plain
    Spearman of the predictions against that order. Equals the plain one when no two measured
    values are that close, and is never below it (NaN where a list has one value throughout)."""
    keyed = list(zip(tie_classes(meas, tie), pred, strict=True))
    order = sorted(keyed)
    return rank_correlation(pred, [float(order.index(k)) for k in keyed])


def spearman(a: list[float], b: list[float]) -> float:
    """rank_correlation, NaN below three rows (two points always rank perfectly)."""
    return rank_correlation(a, b) if len(a) >= 3 else math.nan


def median_ratio(pred: list[float], meas: list[float]) -> float:
    """Median of max(p/m, m/p): how far off a typical prediction is, whichever way."""
    return statistics.median(max(p / m, m / p) for p, m in zip(pred, meas, strict=True))


@dataclass
class PretrainScore:
    name: str
    n: int
    median_ratio: float  # median of max(p/m, m/p)
    bias: float  # median measured ÷ predicted (> 1: the engine is too slow)
    spearman: float


def score(name: str, rows: list[PretrainRow]) -> PretrainScore:
    pred = [r.predicted for r in rows]
    meas = [r.measured for r in rows]
    return PretrainScore(
        name=name,
        n=len(rows),
        median_ratio=median_ratio(pred, meas),
        bias=statistics.median(m / p for p, m in zip(pred, meas, strict=True)),
        spearman=spearman(pred, meas),
    )


def group_spearmans(rows: list[PretrainRow], tie: float | None = None) -> list[float]:
    """Spearman per group of rows that differ only in the GPU, for groups of three GPUs; with
    ``tie``, the tie-aware one (:func:`tie_aware_spearman`)."""
    groups: dict[str, list[PretrainRow]] = {}
    for r in rows:
        groups.setdefault(r.group, []).append(r)
    out = []
    for sub in groups.values():
        if len({r.slug for r in sub}) >= 3:
            pred, meas = [r.predicted for r in sub], [r.measured for r in sub]
            s = spearman(pred, meas) if tie is None else tie_aware_spearman(pred, meas, tie)
            if math.isfinite(s):
                out.append(s)
    return out


def print_pretrain(data_dir: Path, verbose: bool) -> None:
    """The FSDP tuning table, then Megatron-LM's own runs (the `megatron` runtime's)."""
    for path in (PRETRAIN_FILE, MEGATRON_PRETRAIN_FILE):
        print_pretrain_file(data_dir, verbose, path)


def print_pretrain_file(data_dir: Path, verbose: bool, path: Path) -> None:
    if not path.exists():
        return
    rows, skipped = evaluate_pretrain(data_dir, path)
    print_split(
        f"LLM pretraining, tokens/s per GPU ({path.relative_to(ROOT)})",
        rows,
        lambda r: r.table,
        ("per group (same model, seq, GPUs; 3 GPUs)", group_spearmans(rows)),
        skipped,
        verbose,
        label_width=40,
        tied=group_spearmans(rows, TIE_TOLERANCE),
    )


def print_split(
    title: str,
    rows: list[Any],
    subset: Callable[[Any], str],
    groups: tuple[str, list[float]],
    skipped: list[str],
    verbose: bool,
    label_width: int,
    tied: list[float] | None = None,
) -> None:
    """``print_scored`` over all rows, then each subset ``subset`` names, in first-seen order."""
    names = dict.fromkeys(subset(r) for r in rows)
    subsets = [("all", rows)] + [(n, [r for r in rows if subset(r) == n]) for n in names]
    print_scored(title, subsets, groups, skipped, rows if verbose else [], label_width, tied)


def print_scored(
    title: str,
    subsets: list[tuple[str, list[Any]]],
    groups: tuple[str, list[float]],
    skipped: list[str],
    listed: list[Any],
    label_width: int,
    tied: list[float] | None = None,
) -> None:
    """One LLM training table (this script's and finetune.py's): a score per subset, the
    per-group Spearmans (``groups``: what a group is, its rhos; ``tied``: the tie-aware ones,
    whose minimum is printed beside), the rows left out, and each of ``listed`` (rows with
    slug, label, measured, predicted) with its ratio."""
    print()
    print(title)
    print(f"  {'set':34} {'n':>3} {'med.ratio':>9} {'bias':>6} {'spearman':>9}")
    for name, sub in subsets:
        s = score(name, sub)
        print(f"  {s.name:34} {s.n:3d} {s.median_ratio:9.2f} {s.bias:6.2f} {s.spearman:9.3f}")
    what, g = groups
    if g:
        print(
            f"  {what}: {len(g)} groups,"
            f" median spearman {statistics.median(g):.3f}, min {min(g):.3f}"
            + (f" (tie-aware at {TIE_TOLERANCE:.0%}: min {min(tied):.3f})" if tied else "")
        )
    if skipped:
        print(f"  not scored ({len(skipped)}): {'; '.join(skipped[:3])} ...")
    for r in listed:
        print(
            f"    {r.slug:16} {r.label:{label_width}} measured {r.measured:8.0f}"
            f" predicted {r.predicted:8.0f}  ×{r.predicted / r.measured:5.2f}"
        )


def heldout_tokens(
    row: dict[str, Any],
    gpu: GpuSpec,
    model: ModelSpec,
    data_dir: Path,
    job: JobFn,
    calibration: Calibration | None = None,
) -> tuple[float, perf.PerfEstimate, WorkloadSpec]:
    """A held-out LLM training row in tokens/s per GPU, its estimate and the job it priced
    (``job``: pretrain_job or finetune.finetune_job): the held-out files name the micro-batch
    ``batch_size`` and leave ``checkpointing`` out when it is off."""
    spec = {
        **row,
        "micro_batch": row["batch_size"],
        "checkpointing": bool(row.get("checkpointing")),
    }
    work, est = job(gpu, model, spec, data_dir, calibration)
    return per_gpu(est, row), est, work


def heldout_tokens_per_gpu(
    row: dict[str, Any],
    gpu: GpuSpec,
    data_dir: Path,
    models: dict[str, dict[str, Any]],
    calibration: Calibration | None = None,
) -> tuple[float, perf.PerfEstimate, WorkloadSpec]:
    """A held-out pretraining row (regime llm-pretraining) in tokens/s per GPU, its estimate
    and job."""
    model = decoder(models[row["model"]], row.get("params"))
    return heldout_tokens(row, gpu, model, data_dir, pretrain_job, calibration)


def cli(doc: str, printer: Callable[[Path, bool], None], argv: list[str] | None) -> int:
    """The command line of this script and finetune.py: ``--data`` and ``-v``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    printer(args.data, args.verbose)
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli(__doc__, print_pretrain, argv)


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "MEGATRON_PRETRAIN_FILE",
    "JobFn",
    "PretrainRow",
    "evaluate_pretrain",
    "heldout_tokens_per_gpu",
    "megatron_layout",
    "pretrain_job",
    "replace",
    "score",
]
