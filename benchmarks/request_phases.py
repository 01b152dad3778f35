"""Where the open question's instructions go: valgrind's count split by the functions named,
per request, each by the call path it ran on (a busy 2-core machine moves CPU time by 20 %,
instruction counts by ~0.5 %, so two versions compare phase by phase).

    PYTHONHASHSEED=0 PYTHONPATH=. python benchmarks/request_phases.py [--requests 4]
        app.recommend.service:_ranked app.recommend.rows:row_fields \
        app.recommend.service:_ROWS app.recommend.router:_ANSWER ...

Each target is ``module:name`` (a function, a class's ``Class.method``, or an object such as a
TypeAdapter whose method calls are then counted, e.g. ``app.recommend.service:_ROWS``); it is
rebound wherever it was imported by name. The route's own work (request_cpu.py's
``_endpoint``) runs under ``valgrind --tool=callgrind``; on entering and leaving a target the
run asks callgrind to dump its counts so far (a client request from a small C helper built
here with ``cc``: Python code has no other way to ask), so each line is the instructions run
inside that target and outside any other target it called ("rest": outside them all).
Wrapping costs ~8k instructions a call, counted in the lines (``evaluate:job_variant``'s 84
calls a request added 0.65 M): name targets called a few times a request, and read a line's
change between two trees rather than its size alone. Needs valgrind, its headers
(valgrind/callgrind.h) and a C compiler; about a minute for four requests.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import functools
import importlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HELPER = """
#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
void zero(void) { CALLGRIND_ZERO_STATS; }
"""


class _Phases:
    """The call path of targets the run is in, and the dumps that split the counts by it."""

    def __init__(self, helper: str) -> None:
        self.lib = ctypes.CDLL(helper)
        self.lib.dump.argtypes = [ctypes.c_char_p]
        self.stack = ["rest"]

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def counted(*args: Any, **kwargs: Any) -> Any:
            outer = self.stack[-1]
            self.lib.dump(outer.encode())  # what ran before: the caller's
            path = label if outer == "rest" else f"{outer}>{label}"
            self.stack.append(path)
            try:
                return fn(*args, **kwargs)
            finally:
                self.lib.dump(path.encode())
                self.stack.pop()

        return counted


class _Counted:
    """An object whose method calls are counted (a TypeAdapter's validate_python, dump_json)."""

    def __init__(self, obj: object, label: str, phases: _Phases) -> None:
        self._obj, self._label, self._phases = obj, label, phases

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        if callable(value):
            return self._phases.wrap(f"{self._label}.{name}", value)
        return value


def _patch(target: str, phases: _Phases) -> None:
    """Rebinds ``module:name`` to its counted self, in its owner and wherever it was imported
    by name."""
    module, qualname = target.split(":")
    *path, name = qualname.split(".")
    owner: Any = importlib.import_module(module)
    for part in path:
        owner = getattr(owner, part)
    obj = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    if isinstance(obj, classmethod):
        setattr(owner, name, classmethod(phases.wrap(qualname, obj.__func__)))
        return
    counted: object = (
        phases.wrap(qualname, obj)
        if callable(obj) and not hasattr(obj, "validate_python")
        else _Counted(obj, qualname, phases)
    )
    setattr(owner, name, counted)
    for mod in list(sys.modules.values()):
        names = getattr(mod, "__dict__", None)
        if isinstance(names, dict) and names.get(name) is obj:
            names[name] = counted


def child(requests: int, targets: list[str], helper: str) -> None:
    """Under valgrind: the counted requests."""
    import logging

    from fastapi.testclient import TestClient

    import app.system.health as health
    from app.config import Settings
    from app.main import create_app
    from benchmarks.request_cpu import _endpoint

    every_second = health.keep_checking

    async def once(app: object, every_s: float = 1e9) -> None:
        await every_second(app, every_s)

    health.keep_checking = once  # type: ignore[assignment]
    phases = _Phases(helper)
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(database_url=f"sqlite:///{tmp}/phases.db"))
        logging.disable(logging.INFO)
        with TestClient(app):
            _endpoint(app, 16)  # warm-up: first-call imports, the catalog's terms
            for target in targets:
                _patch(target, phases)
            _endpoint(app, 2)  # the wrappers' own first calls
            phases.lib.start()
            phases.lib.zero()
            _endpoint(app, requests)
            phases.lib.dump(b"rest")
            phases.lib.stop()


def _totals(folder: Path) -> collections.Counter[str]:
    """Instructions per label over the dumps in ``folder``."""
    out: collections.Counter[str] = collections.Counter()
    for f in folder.glob("callgrind.out*"):
        head = f.read_text(errors="replace")[:4000]
        label = re.search(r"Client Request: (\S+)", head)
        total = re.search(r"^(?:summary|totals): (\d+)", head, re.M)
        if label and total:
            out[label.group(1)] += int(total.group(1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help="module:name, e.g. app.recommend.service:_ranked")
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.requests, args.targets, args.child)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        helper = f"{tmp}/phases.so"
        Path(f"{tmp}/phases.c").write_text(HELPER)
        build = ["cc", "-O2", "-shared", "-fPIC", "-o", helper, f"{tmp}/phases.c"]
        subprocess.run(build, check=True)
        cmd = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={tmp}/callgrind.out",
            sys.executable, __file__, "--child", helper, "--requests", str(args.requests),
            *args.targets,
        ]  # fmt: skip
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=os.environ)
        totals = _totals(Path(tmp))
    if done.returncode != 0 or not totals:
        print(done.stderr[-2000:])
        return 1
    whole = sum(totals.values())
    print(f"{whole / args.requests / 1e6:.3f} M instructions per request (endpoint's own work)")
    for label, n in totals.most_common():
        print(f"{n / args.requests / 1e6:8.3f} M {100 * n / whole:5.1f} %  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
