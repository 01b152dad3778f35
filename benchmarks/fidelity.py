"""Fidelity check: our fp32 matmul and memory-bandwidth figures against plain numpy.

Runs, in one process, the advisor's own measurement code (app.bench suites, blocked timing,
median of blocks) for fp32 matmul and the copy kernel, and plain numpy (``a @ b`` into a
preallocated output and ``np.copyto``) on the same sizes, timed independently with
``timeit`` (median of repeats). Prints the ratios.

Targets on a CPU: our matmul ≥ 0.9 × numpy's; bandwidth within ±20 %.

    .venv/bin/python benchmarks/fidelity.py [--sizes 1024,2048] [--array-mib 256]

Note: torch (MKL/oneDNN) and numpy (OpenBLAS) are different BLAS libraries; a ratio below
0.9 can be a real library difference rather than a measurement error — the methodology
says to take the max of the two as "CPU achievable".
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import torch

from app.bench import device as devmod
from app.bench import host, torch_state
from app.bench.runner import get_profile
from app.bench.suites import matmul, memory
from app.bench.suites.common import Context
from app.bench.timing import TimingConfig


def numpy_median_time(stmt: object, min_block_s: float = 0.2, repeats: int = 5) -> float:
    timer = timeit.Timer(stmt)  # type: ignore[arg-type]
    timer.timeit(3)  # warm-up: thread pool start, page faults
    number, _ = timer.autorange()
    while number * (timer.timeit(1) or 1e-9) < min_block_s:
        number *= 2
    return statistics.median(t / number for t in timer.repeat(repeats, number))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1024,2048", help="square matmul sizes (comma list)")
    ap.add_argument(
        "--array-mib",
        type=int,
        default=0,
        help="bandwidth array size in MiB (default: our suite's own choice)",
    )
    ap.add_argument(
        "--block-s",
        type=float,
        default=0.2,
        help="seconds per timed block, ours and numpy's (tests use a tiny one)",
    )
    args = ap.parse_args()
    block = args.block_s
    sizes = [int(s) for s in args.sizes.split(",") if s]

    prof = get_profile("standard", accelerator=False)
    prof = replace(
        prof,
        timing=TimingConfig(
            warmup_s=block / 2, min_warmup_calls=3, block_s=block, n_blocks=5, min_blocks=5
        ),
        matmul_precisions=("fp32",),
        matmul_reference=(sizes[0],) * 3,
        matmul_search=tuple((s, s, s) for s in sizes[1:]),
        matmul_single_thread=False,
        memory_min_bytes=(args.array_mib << 20) if args.array_mib else prof.memory_min_bytes,
        memory_llc_multiple=0 if args.array_mib else prof.memory_llc_multiple,
    )
    print(
        f"torch {torch.__version__} ({host.blas_backend()}), numpy {np.__version__}, "
        f"torch threads {torch.get_num_threads()}, CPU {host.cpu_model()}"
    )
    with torch_state.preserved_state():
        ctx = Context(device="cpu", backend="cpu", sync=devmod.synchronizer("cpu"), profile=prof)
        mm = matmul.run(ctx)
        mem = memory.run(ctx)
        # numpy copies with one thread: measure ours with one thread too, like for like
        torch.set_num_threads(1)
        mem1 = memory.run(ctx)

    rng = np.random.default_rng(0)
    ok = True
    print("\nfp32 matmul (TFLOPS, median of blocks)")
    print(
        "  ours = app.bench harness on torch.mm; torch/timeit = the same torch.mm timed with "
        "plain timeit\n  (harness check); numpy = np.matmul timed with plain timeit "
        "(library check)"
    )
    print(
        f"{'shape':>16} {'ours':>8} {'torch/timeit':>13} {'numpy':>8} {'ours/numpy':>11}"
        f" {'ours/timeit':>12}"
    )
    numpy_best = 0.0
    for row in mm.rows:
        if row.library != "torch" or row.threads is not None:
            continue
        m, n, k = row.m, row.n, row.k
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.empty((m, n), dtype=np.float32)
        t = numpy_median_time(lambda a=a, b=b, c=c: np.matmul(a, b, out=c), block)
        ref = 2 * m * n * k / t / 1e12
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        tc = torch.empty(m, n)
        tt = numpy_median_time(lambda ta=ta, tb=tb, tc=tc: torch.mm(ta, tb, out=tc), block)
        plain = 2 * m * n * k / tt / 1e12
        numpy_best = max(numpy_best, ref)
        ours = row.figure.value or 0.0
        ratio = ours / ref
        print(
            f"{m}x{n}x{k:>6} {ours:8.4f} {plain:13.4f} {ref:8.4f} {ratio:11.3f}"
            f" {ours / plain:12.3f}"
        )
    best = mm.by_precision["fp32"].best
    ours_best = best.value or 0.0
    ratio = ours_best / numpy_best
    ok &= ratio >= 0.9
    lib = mm.by_precision["fp32"].best_library
    flag = "" if ratio >= 0.9 else "  < 0.9"
    print(
        f"achievable fp32 (our best over shapes and libraries, from {lib}): "
        f"{ours_best:.4f} vs numpy best {numpy_best:.4f} -> ratio {ratio:.3f}{flag}"
    )

    print("\nmemory bandwidth, copy (GB/s, read + written counted)")
    numel = mem.array_bytes // 4
    x = rng.standard_normal(numel, dtype=np.float32)
    y = np.empty_like(x)
    y[:] = 0
    t = numpy_median_time(lambda: np.copyto(y, x), block)
    ref_bw = 2 * numel * 4 / t / 1e9
    ours1 = next((r.figure.value for r in mem1.rows if r.kernel == "copy"), None) or 0.0
    ours_n = next((r.figure.value for r in mem.rows if r.kernel == "copy"), None) or 0.0
    ratio = ours1 / ref_bw
    ok &= 0.8 <= ratio <= 1.2
    print(
        f"array {mem.array_bytes / 2**20:.0f} MiB, 1 thread (numpy copies are "
        f"single-threaded): ours {ours1:.2f}, numpy {ref_bw:.2f}, ratio {ratio:.3f}"
        f"{'' if 0.8 <= ratio <= 1.2 else '  outside ±20 %'}"
    )
    print(
        f"ours with all {torch.get_num_threads()} threads: copy {ours_n:.2f} GB/s "
        f"({ours_n / ref_bw:.2f}× numpy's single-threaded copy)"
    )
    for r in mem.rows:
        print(
            f"  ours {r.kernel:>5}, all threads: {r.figure.value or 0:.2f} GB/s"
            f"{' (noisy)' if r.figure.noisy else ''}"
        )
    print("\nresult:", "within targets" if ok else "OUTSIDE targets")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
