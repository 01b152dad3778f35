"""Wall time of `gpu-advisor bench --profile quick` on this machine (goal: 30 s on a 2-core
CPU, imports included).

Runs the real command in a child process, as a user would, a few times and prints each
run, where its time went (the report's per-suite durations, the kernel classes measured)
and the median. Usage: python benchmarks/quick_profile_time.py [runs]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 30.0
SUITES = ("matmul", "conv", "memory", "transfer", "batch_scaling", "peak_memory", "kernels")


def _breakdown(path: Path) -> str:
    report = json.loads(path.read_text())
    parts = [f"{s} {report[s]['duration_s']:.1f}" for s in SUITES if report.get(s)]
    classes = sorted({p["kernel_class"] for p in (report.get("kernels") or {}).get("points", [])})
    return ", ".join(parts) + f"; kernel classes: {', '.join(classes)}"


def main(runs: int = 3) -> int:
    root = Path(__file__).resolve().parent.parent
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "app.cli", "bench", "--profile", "quick",
                 "--output", str(Path(tmp) / f"r{i}.json")],
                cwd=root, capture_output=True, text=True,
            )  # fmt: skip
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                print(done.stderr[-2000:])
                return 1
            times.append(elapsed)
            print(f"run {i + 1}: {elapsed:.1f} s  ({_breakdown(Path(tmp) / f'r{i}.json')})")
    median = statistics.median(times)
    verdict = "within" if median < GOAL_S else "OVER"
    print(f"median {median:.1f} s ({verdict} the {GOAL_S:.0f} s goal, imports included)")
    return 0 if median < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
