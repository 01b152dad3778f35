"""Leave-one-GPU-out error of the kernel-profile carry-over (goal: median ≤ 15 % for GEMM
and attention over the shipped profiles).

Each profiled GPU is left out in turn and every one of its points is predicted from the
other GPUs' profiles alone (app.domain.kernel_profiles.profile_efficiency); the error of a
point is |predicted − published| ÷ published efficiency. Prints each point, then the
median per kernel class. Usage: python benchmarks/kernel_carryover.py [--quiet]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.catalog.profiles import shipped_profiles
from app.domain.kernel_profiles import (
    ProfileStore,
    best_attention_op,
    features_of,
    profile_efficiency,
)

GOAL = 0.15
# "attention_prefill (best kernel)": the points of each GPU's best attention library (the
# one the engine prices: FlashAttention-3 on H100, FlashAttention-2 on A100); the plain row
# also predicts slower libraries' points (FlashAttention-2 on H100) from it.
BEST = "attention_prefill (best kernel)"
CLASSES = ("gemm", "attention_prefill", BEST, "elementwise")
GOALS = ("gemm", BEST)


def _dims(shape: dict[str, int]) -> str:
    order = ("m", "n", "k", "batch", "heads", "q_len", "kv_len", "head_dim")
    dims = "x".join(str(shape[k]) for k in order if k in shape) or "best"
    return dims + (" causal" if shape.get("causal") else "")


def leave_one_out(
    store: ProfileStore, gpus: dict, quiet: bool, by_gpu: dict[str, list[float]] | None = None
) -> dict[str, list[float]]:
    """Errors per kernel class; ``by_gpu`` collects the best-kernel attention errors per GPU."""
    errors: dict[str, list[float]] = {}
    for slug, profile in sorted(store.profiles.items()):
        rest = store.without(slug)
        best_op = best_attention_op(profile.points, features_of(gpus[slug], profile.features))
        for p in profile.points:
            shape = dict(p.shape)
            pred, basis = profile_efficiency(gpus[slug], p.kernel_class, shape, rest, gpus,
                                             dtype=p.dtype)  # fmt: skip
            if pred is None:
                if not quiet:
                    print(f"{slug:16} {p.kernel_class:18} {p.dtype:5} no donor ({basis})")
                continue
            err = abs(pred - p.efficiency) / p.efficiency
            errors.setdefault(p.kernel_class, []).append(err)
            if p.kernel_class == "attention_prefill" and p.op == best_op:
                errors.setdefault(BEST, []).append(err)
                if by_gpu is not None:
                    by_gpu.setdefault(slug, []).append(err)
            if not quiet:
                dims = _dims(dict(p.shape))
                print(f"{slug:16} {p.kernel_class:18} {p.dtype:5} {dims:22} {p.op[:18]:18} "
                      f"published {p.efficiency:6.3f} predicted {pred:6.3f} error {err:6.1%}"
                      f"  ({basis})")  # fmt: skip
    return errors


def main(argv: list[str]) -> int:
    store, gpus = shipped_profiles()
    by_gpu: dict[str, list[float]] = {}
    errors = leave_one_out(store, gpus, "--quiet" in argv, by_gpu)
    ok = True
    print()
    for kc in CLASSES:
        errs = errors.get(kc, [])
        if not errs:
            print(f"{kc:31} no points")
            continue
        med = statistics.median(errs)
        goal = kc in GOALS
        ok &= med <= GOAL or not goal
        verdict = ("within" if med <= GOAL else "OVER") + f" the {GOAL:.0%} goal" if goal else ""
        print(f"{kc:31} {len(errs):3} points  median error {med:6.1%}  "
              f"p90 {statistics.quantiles(errs, n=10)[-1] if len(errs) > 1 else errs[0]:6.1%}"
              f"  {verdict}")  # fmt: skip
    print("\nattention (best kernel) per GPU left out:")
    for slug, errs in sorted(by_gpu.items()):
        print(f"  {slug:16} {len(errs):3} points  median error {statistics.median(errs):6.1%}")
    # by the left-out GPU's vendor: a vendor's attention kernels are its own library, so a
    # target is only as well predicted as its same-vendor donors resemble it
    for vendor in sorted({gpus[s].vendor for s in by_gpu}):
        errs = [e for s, es in by_gpu.items() if gpus[s].vendor == vendor for e in es]
        med = statistics.median(errs)
        print(f"  {vendor} targets {len(errs):3} points  median error {med:6.1%}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
