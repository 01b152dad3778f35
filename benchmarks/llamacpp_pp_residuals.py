"""llama.cpp CUDA prompt processing (pp512, MMQ) on the TUNING scoreboard, GPU by GPU (issue 21).

Why the engine's GPU order on llama.cpp prompts is what it is: for every CUDA pp512 row of
tests/data/llm_inference.yaml (Llama 2 7B Q4_0, 2025 builds, so MMQ on every mapped GPU:
``ggml_cuda_should_use_mmq`` returns true wherever int8 MMA exists) it prints the compute
capability, segment, the ``sm`` basis (SMs × boost clock in 128-lane FP32 units), the board's
power headroom under dense tensor load and the clock share the engine takes from it, the
measured rate per ``sm``-basis TFLOPS, and predicted ÷ measured; then the medians by die and
cap, the pairs the engine orders against the measurement, the rank correlation of the residual
with the headroom among boards the cap does not bind, and what a uniform clock above the
rated boost (GPU Boost) would do to the ranking.

Power headroom = TDP × the architecture's sustained 16-bit tensor TFLOPS per board watt ÷ the
die's full-rate 16-bit peak (``efficiency.sm_clock_share`` before its min(1, ·)); none where the
engine has no per-watt figure (Hopper, Blackwell). Held-out files are never read here.

    python benchmarks/llamacpp_pp_residuals.py
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import efficiency, perf  # noqa: E402
from app.domain.gpu import GpuSpec  # noqa: E402
from app.shipped import yamlio  # noqa: E402
from benchmarks import accuracy as acc  # noqa: E402

UNCAPPED = 0.97  # headroom from which the engine's cap (min(1, ·)) leaves the clock at ~boost


@dataclass
class Row:
    slug: str
    cc: str
    segment: str
    sm_basis: float  # TFLOPS of the `sm` basis at boost
    headroom: float | None  # TDP × per-watt ÷ die peak; None without a per-watt figure
    share: float  # the engine's clock share (efficiency.sm_clock_share)
    measured: float
    predicted: float

    @property
    def ratio(self) -> float:
        return self.predicted / self.measured


def headroom(gpu: GpuSpec, per_watt: float | None) -> float | None:
    """``sm_clock_share`` without its min(1, ·): how far the board's TDP reaches past the
    power its SMs draw at boost under dense tensor load."""
    die = efficiency.die_tensor16_tflops(gpu)
    if not (per_watt and gpu.tdp_w and die):
        return None
    return gpu.tdp_w * per_watt / die


def rows(data_dir: Path = ROOT / "data") -> list[Row]:
    gpus = {g.slug: g for g in read_gpu_specs(data_dir)}
    doc_rows = [
        r
        for s in acc.evaluate_inference(data_dir, acc.INFERENCE_FILE)
        if s.backend == "cuda" and s.metric == "pp"
        for r in s.rows
    ]
    meta = yamlio.safe_load(acc.INFERENCE_FILE.read_text(encoding="utf-8"))["workload"]
    work = acc.inference_workload(meta, "pp", data_dir)
    out = []
    for slug, measured, predicted in doc_rows:
        gpu = gpus[slug]
        prof = perf.prefill_profile(gpu, work, "cuda")
        fp32_sm = efficiency.basis_tflops(gpu, "sm", efficiency.EAGER)
        out.append(
            Row(
                slug,
                gpu.compute_capability or "",
                gpu.segment,
                fp32_sm or 0.0,
                headroom(gpu, prof.tensor_tflops_per_watt),
                efficiency.sm_clock_share(gpu, prof),
                measured,
                predicted,
            )
        )
    return out


def boost_what_if(rs: list[Row], boost: float) -> float:
    """Spearman if every board ran at min(``boost``, headroom) of its rated boost clock
    instead of min(1, headroom): predictions scaled by the clock ratio (compute-bound)."""
    pred = []
    for r in rs:
        new = boost if r.headroom is None else min(boost, r.headroom)
        pred.append(r.predicted * new / r.share)
    return acc.spearman(pred, [r.measured for r in rs])


def main() -> int:
    rs = rows()
    print("llama.cpp CUDA pp512 (tuning scoreboard, MMQ), predicted ÷ measured by GPU")
    print(f"{'gpu':18s} {'cc':>4s} {'segment':11s} {'sm TF':>6s} {'headroom':>8s} "
          f"{'share':>5s} {'meas':>7s} {'meas/smTF':>9s} {'p/m':>5s}")  # fmt: skip
    for r in sorted(rs, key=lambda r: (r.cc, r.measured)):
        h = f"{r.headroom:8.2f}" if r.headroom is not None else f"{'-':>8s}"
        print(f"{r.slug:18s} {r.cc:>4s} {r.segment:11s} {r.sm_basis:6.1f} {h} {r.share:5.2f} "
              f"{r.measured:7.0f} {r.measured / r.sm_basis:9.1f} {r.ratio:5.2f}")  # fmt: skip
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rs:
        capped = r.headroom is not None and r.headroom < UNCAPPED
        groups.setdefault((r.cc, "capped" if capped else "uncapped"), []).append(r.ratio)
    print("\nmedian predicted ÷ measured by compute capability and cap:")
    for (cc, cap), v in sorted(groups.items()):
        print(f"  {cc:>4s} {cap:8s} n {len(v):2d}  {statistics.median(v):.2f}")
    meas, pred = [r.measured for r in rs], [r.predicted for r in rs]
    print(f"\nSpearman {acc.spearman(pred, meas):.3f}; pairs ordered against the measurement:")
    for a, b in combinations(rs, 2):
        if (a.measured - b.measured) * (a.predicted - b.predicted) < 0:
            gap = max(a.measured, b.measured) / min(a.measured, b.measured) - 1
            print(f"  {a.slug:18s} {b.slug:18s} measured {gap:5.1%} apart")
    free = [r for r in rs if r.headroom is not None and r.headroom >= UNCAPPED]
    rho = acc.spearman([r.ratio for r in free], [r.headroom or 0.0 for r in free])
    print(f"\nuncapped boards with a per-watt figure (n {len(free)}): "
          f"Spearman(predicted ÷ measured, headroom) {rho:+.2f}")  # fmt: skip
    for boost in (1.05, 1.10, 1.15):
        print(f"  what-if: clock min({boost:.2f}, headroom) of boost: Spearman "
              f"{boost_what_if(rs, boost):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
