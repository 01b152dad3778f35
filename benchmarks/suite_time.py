"""How long the test suite takes, and where the time goes: per test folder, the time its
items spent in setup (fixtures: databases, apps, browsers) and in the test itself.

    python benchmarks/test_suite_time.py                # runs the suite as `make test` does
    python benchmarks/test_suite_time.py -n 0 tests/api # one folder, one process
    python benchmarks/test_suite_time.py --from out.txt # reads a saved `pytest --durations=0`

Set GPU_ADVISOR_TEST_DATABASE_URL to include the PostgreSQL repeats, as CI does. Prints a
Markdown table: wall time and CPU time (this process's children: pytest, its xdist workers
and the processes tests start) for the run, then per folder the items and the summed
setup/call/teardown seconds. With workers the per-folder sums overlap in time; their total
exceeds the wall time. CPU time is the figure to compare on a machine shared with other
work: wall time there grows with the load."""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+?)::")
PHASES = ("setup", "call", "teardown")


def folder(path: str) -> str:
    parts = Path(path).parts
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0] + "/*.py"


def per_folder(output: str) -> dict[str, dict[str, float]]:
    sums: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys((*PHASES, "items"), 0.0))
    for line in output.splitlines():
        m = LINE.match(line)
        if m:
            seconds, phase, path = float(m.group(1)), m.group(2), m.group(3)
            row = sums[folder(path)]
            row[phase] += seconds
            row["items"] += phase == "call"
    return dict(sums)


def table(sums: dict[str, dict[str, float]]) -> str:
    lines = [
        "| folder | items | setup s | call s | teardown s | setup share |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    total = dict.fromkeys((*PHASES, "items"), 0.0)
    for name, row in sorted(sums.items(), key=lambda kv: -sum(kv[1][p] for p in PHASES)):
        for k in total:
            total[k] += row[k]
        lines.append(_row(name, row))
    lines.append(_row("**all**", total))
    return "\n".join(lines)


def _row(name: str, row: dict[str, float]) -> str:
    spent = sum(row[p] for p in PHASES) or 1.0
    return (
        f"| {name} | {int(row['items'])} | {row['setup']:.0f} | {row['call']:.0f} "
        f"| {row['teardown']:.0f} | {row['setup'] / spent:.0%} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--workers", default="2", help="pytest-xdist workers; 0: none")
    ap.add_argument("--from", dest="saved", type=Path, help="a saved --durations=0 output")
    ap.add_argument("--save", type=Path, help="also write pytest's output here")
    ap.add_argument("paths", nargs="*", help="test paths (default: the whole suite)")
    args = ap.parse_args()
    if args.saved:
        print(table(per_folder(args.saved.read_text(encoding="utf-8", errors="replace"))))
        return 0
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0"]
    argv += ["--durations-min=0", "-n", args.workers]
    if args.workers != "0":  # one module's tests on one worker: its module-scoped app once
        argv += ["--dist", "loadscope"]
    argv += args.paths
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if args.save:
        args.save.write_text(done.stdout + done.stderr, encoding="utf-8")
    summary = [ln for ln in done.stdout.splitlines() if re.search(r"\d+ passed|failed|error", ln)]
    print(f"`{' '.join(argv[1:])}`: exit {done.returncode}, {summary[-1:] or ['?']}")
    print(f"wall {wall:.0f} s, CPU {cpu:.0f} s\n")
    print(table(per_folder(done.stdout)))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
