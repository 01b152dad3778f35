"""Diffusion tuning rows as FLOP per SM per clock: measured against the engine (issue #21).

For every row of the diffusion tuning sets (tests/data/diffusion_eager.yaml,
diffusion_eager_consumer.yaml and diffusion_compiled.yaml; the held-out files are never read
here) it prints the FLOPs the engine counts for the row's job divided by the measured time, and
by the predicted time, each per SM per rated boost clock, beside the card's 16-bit tensor peak
per SM and clock (the catalog's fp16 figure: the FP32-accumulate rate on GeForce, what
PyTorch's half-precision convolutions and GEMMs run at). SMs × clock is read off the FP32 peak
(FP32 peak ÷ 2 ÷ FP32 lanes per SM), so a card without an SM count in the catalog (V100, T4)
still gets one. Then the median per GPU.

Why: the rows' measured ÷ predicted sorts by the tensor peak per SM-clock (docs/methodology.md
§6.7l, "datacenter cards read slow against GeForce"); this prints the measured rate in the unit
where that shows — a quantity no rule of the engine prices yet.

The measured rate is the job's FLOPs (UNet calls and VAE decode) over the measured time, read
through measured ÷ predicted, so a loop-only row (denoise_steps_per_s) counts its VAE decode's
few per cent of FLOPs too.

    python benchmarks/diffusion_sm_clock.py
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy  # noqa: E402
import diffusion_breakdown  # noqa: E402

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import perf  # noqa: E402
from app.domain.efficiency import FP32_LANES_PER_SM  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402

DATA = ROOT / "data"
TUNING = (
    ROOT / "tests" / "data" / "diffusion_eager.yaml",
    ROOT / "tests" / "data" / "diffusion_eager_consumer.yaml",
    ROOT / "tests" / "data" / "diffusion_compiled.yaml",
)
# Volta (compute capability 7.0) has 64 FP32 lanes per SM (NVIDIA Tesla V100 whitepaper: 64
# FP32 cores per SM); the engine's table starts at Turing
LANES = {"7.0": 64, **FP32_LANES_PER_SM}


def sm_clocks(gpu: GpuSpec) -> float | None:
    """SMs × rated boost clock (SM-cycles per second): the FP32 peak ÷ 2 FLOP per FMA ÷ the
    FP32 lanes per SM; None without both."""
    lanes = LANES.get(gpu.compute_capability or "")
    if not (lanes and gpu.fp32_tflops):
        return None
    return gpu.fp32_tflops * 1e12 / (2 * lanes)


@dataclass(frozen=True)
class Row:
    file: str
    label: str
    slug: str
    ratio: float  # measured ÷ predicted, throughput terms
    measured: float  # FLOP per SM per clock
    predicted: float
    peak: float  # the catalog's 16-bit tensor peak per SM per clock


def job_flops(row: dict[str, Any], gpu: GpuSpec) -> tuple[float, float]:
    """(the FLOPs the engine counts for the row's job, its predicted seconds)."""
    work, backend = diffusion_breakdown._work(row, gpu, DATA)
    on = perf._on_gpu(gpu, work, "pytorch", None, backend)
    job = perf._step_job(work, True, on.act_b)
    ops = job.ops or ()
    flops = sum(o.flops * o.count for o in ops if not (o.role and o.role in on.drop))
    return flops, perf.single_gpu(gpu, work, backend=backend).step_s


def rows_of(path: Path) -> list[Row]:
    assert not path.name.startswith("heldout_"), "held-out files are not read here"
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    scored, _ = accuracy.evaluate_heldout(DATA, [path])
    out = []
    for raw, r in zip(doc["measurements"], scored, strict=True):
        row = {**accuracy.source_stack(doc, raw), **raw}
        gpu = gpus[r.slug]
        clocks = sm_clocks(gpu)
        if clocks is None:
            continue
        flops, step_s = job_flops(row, gpu)
        predicted = flops / step_s / clocks
        label = f"{row['runtime']} {row['preset']} b{row['batch_size']} {r.source}"
        peak = (gpu.peak_tflops("fp16") or 0.0) * 1e12 / clocks
        out.append(Row(path.stem, label, r.slug, r.ratio, predicted * r.ratio, predicted, peak))
    return out


def main(argv: list[str] | None = None) -> int:
    by_gpu: dict[str, list[Row]] = {}
    for path in TUNING:
        print(f"{path.name}: FLOP per SM per rated clock (measured, predicted; 16-bit peak)")
        for r in sorted(rows_of(path), key=lambda r: (r.label, r.ratio)):
            by_gpu.setdefault(r.slug, []).append(r)
            print(
                f"  {r.label[:58]:58} {r.slug:15} m/p {r.ratio:4.2f}"
                f"  {r.measured:5.0f} {r.predicted:5.0f}  peak {r.peak:5.0f}"
            )
    print("per GPU, medians: m/p, measured and predicted FLOP per SM-clock, peak")
    med = statistics.median
    for slug, rs in sorted(by_gpu.items(), key=lambda kv: med(r.ratio for r in kv[1])):
        print(
            f"  {slug:15} n {len(rs):2}  m/p {med(r.ratio for r in rs):4.2f}"
            f"  {med(r.measured for r in rs):5.0f} {med(r.predicted for r in rs):5.0f}"
            f"  peak {rs[0].peak:5.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
