"""Wall time of `gpu-advisor bench --profile quick` on this machine (goal: under 20 s).

Runs the real command in a child process, as a user would, a few times and prints each
run and the median. Usage: python benchmarks/quick_profile_time.py [runs]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 20.0


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
            print(f"run {i + 1}: {elapsed:.1f} s")
    median = statistics.median(times)
    verdict = "within" if median < GOAL_S else "OVER"
    print(f"median {median:.1f} s ({verdict} the {GOAL_S:.0f} s goal, imports included)")
    return 0 if median < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
