"""Machine instructions per open-question request, counted by valgrind: the same on a busy
machine as on a quiet one (to ~0.5 %), where CPU time on a shared 2-core box moves by 20 %.

    PYTHONHASHSEED=0 PYTHONPATH=. python benchmarks/request_instructions.py [--requests 8]
        [--endpoint | --page] [--scale 10] [--body open|training|cnn-inference]

Runs itself under ``valgrind --tool=callgrind`` with instrumentation off (the app's start and
a warm-up run at a few times native speed), switches it on for ``--requests`` open-question
requests (api_speed.py's OPEN_BODY, the batch size cycling) and off again with
``callgrind_control``, and prints the instructions counted per request (every thread: the
TestClient's, the app's and its worker's). ``--endpoint``: the route's own work only
(request_cpu.py's ``_endpoint``: the request model, the engine, the answer's JSON).
``--scale N``: the catalog copied to N times its size first, as api_speed.py's ``--scale``
copies it (issue 21's goal is read at ``--scale 10``, where work per card weighs ten times
more). ``--page``: the open question's answer page instead (api_speed.py's PAGE_QUERY, the
batch size cycling). The app's background readiness check (every second; a run under
valgrind is ~50× slower, so it would land inside the window) runs once at start only.
``--body``: another question in place of the open one (request_cpu.py's BODIES: ResNet-50
training or inference, the CNN paths). Needs valgrind (``apt-get install valgrind``); about
2-3 minutes on the development machine (``--scale 10``: about 4; ``--page``: about 5).
Compare two trees by running it in each.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _ctl(flag: str) -> None:
    subprocess.run(
        ["callgrind_control", "-i", flag, str(os.getpid())], check=True, capture_output=True
    )


def child(
    requests: int, endpoint: bool, scale: int = 1, page: bool = False, body: str = "open"
) -> None:
    """Under valgrind: the counted requests."""
    import logging

    from fastapi.testclient import TestClient

    import app.system.health as health
    from app.config import Settings
    from app.main import create_app
    from benchmarks.api_speed import PAGE_QUERY, _body, _path, scale_catalog
    from benchmarks.request_cpu import BODIES, _endpoint

    every_second = health.keep_checking

    async def once(app: object, every_s: float = 1e9) -> None:
        await every_second(app, every_s)

    health.keep_checking = once  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/ir.db"
        app = create_app(Settings(database_url=url))
        logging.disable(logging.INFO)
        with TestClient(app) as client:
            if scale > 1:
                scale_catalog(url, scale)  # the caches see the new cards by their stamps

            def run(n: int) -> None:
                if endpoint:
                    _endpoint(app, n, BODIES[body])
                    return
                for i in range(n):
                    if page:
                        client.get(_path(PAGE_QUERY, i)).raise_for_status()
                    else:
                        client.post("/api/v1/recommendations", json=_body(BODIES[body], i))

            run(16)  # warm-up: first-call imports, the catalog's terms
            _ctl("on")
            run(requests)
            _ctl("off")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--endpoint", action="store_true", help="the route's own work only")
    ap.add_argument("--scale", type=int, default=1, help="the catalog copied to N times its size")
    ap.add_argument("--page", action="store_true", help="the answer page instead")
    ap.add_argument(
        "--body", choices=("open", "training", "cnn-inference"), default="open",
        help="which question (request_cpu.py's BODIES)",
    )  # fmt: skip
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.requests, args.endpoint, args.scale, args.page, args.body)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={tmp}/callgrind.out",
            sys.executable, __file__, "--child", "--requests", str(args.requests),
            "--scale", str(args.scale), "--body", args.body,
        ] + (["--endpoint"] if args.endpoint else [])  # fmt: skip
        cmd += ["--page"] if args.page else []
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        print(done.stderr[-2000:])
        return 1
    total = int(found.group(1).replace(",", ""))
    what = "endpoint's own work" if args.endpoint else "whole request (TestClient)"
    if args.page:
        what = "answer page, whole request (TestClient)"
    if args.scale > 1:
        what += f", catalog × {args.scale}"
    asked = "answer page" if args.page else f"{args.body}-question request"
    print(f"{total / args.requests / 1e6:.2f} M instructions per {asked} ({what})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
