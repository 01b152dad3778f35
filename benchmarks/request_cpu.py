"""CPU milliseconds per API request, in-process (a measure a shared machine's load barely moves).

    PYTHONPATH=. python benchmarks/request_cpu.py [--requests 200] [--runs 5] [--profile]
        [--body open|training|cnn-inference]

Builds the real app on a fresh SQLite database, calls it through a TestClient (the whole stack:
routing, validation, the engine, the response model, JSON) and times the open question of issue
21 (api_speed.py's OPEN_BODY: Llama 3 8B inference, every other choice at the form's default)
with ``time.process_time``, the batch size cycling as api_speed.py cycles it (``--body``:
another question of ``BODIES``). Prints each run's CPU ms per request and their median, and the
share of it the endpoint's own work takes (the request model, the engine, the answer's JSON:
what the route does in its thread). ``--profile`` runs pyinstrument over that endpoint work in
this thread (the TestClient runs the app in a thread of its own, which a sampling profiler of
the main thread does not see); install pyinstrument into the venv first. Wall-clock ratios stay
api_speed.py's job; this is for comparing two versions of the code on a busy machine.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from app.config import Settings  # noqa: E402
from app.db import session_scope  # noqa: E402
from app.main import create_app  # noqa: E402
from benchmarks.api_speed import OPEN_BODY, PAGE_QUERY, TRAINING_BODY, _body, _path  # noqa: E402

#: what ``--body`` names: the open question, api_speed.py's ResNet-50 training ranking, and a
#: ResNet-50 inference question (the CNN paths: the autotuner's per-card convolution tables)
BODIES: dict[str, dict[str, Any]] = {
    "open": OPEN_BODY,
    "training": TRAINING_BODY,
    "cnn-inference": {"workload": {"preset": "resnet-50", "task": "inference"}},
}


def _timed(client: TestClient, n: int, page: bool, body: Any = OPEN_BODY) -> float:
    """CPU ms per request over ``n`` requests."""
    start = time.process_time()
    for i in range(n):
        if page:
            r = client.get(_path(PAGE_QUERY, i))
        else:
            r = client.post("/api/v1/recommendations", json=_body(body, i))
        r.raise_for_status()
    return (time.process_time() - start) * 1e3 / n


def _endpoint(app: Any, n: int, asked: Any = OPEN_BODY) -> float:
    """CPU ms per request of what the route does for ``asked`` (the open question unless told),
    called here: the request model, the engine and the answer's JSON, without routing,
    middleware or HTTP."""
    from app.recommend import orchestrate
    from app.recommend import schemas as s
    from app.recommend.router import _ANSWER

    settings = app.state.settings
    start = time.process_time()
    for i in range(n):
        body = s.RecommendationRequest.model_validate(_body(asked, i))
        with session_scope(app.state.session_factory) as session:
            answer = orchestrate.recommend_for(session, settings, body)
        _ANSWER.dump_json(answer, by_alias=True)
    return (time.process_time() - start) * 1e3 / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="requests per run")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--page", action="store_true", help="time the answer page instead")
    ap.add_argument("--profile", action="store_true", help="pyinstrument over one run")
    ap.add_argument("--body", choices=sorted(BODIES), default="open", help="which question")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        # the rate limit would answer 429 a few hundred requests in: this measures work, not policy
        settings = Settings(
            database_url=f"sqlite:///{tmp}/cpu.db",
            rate_limit_expensive_burst=1_000_000,
            rate_limit_expensive_per_minute=1_000_000,
        )
        app = create_app(settings)
        # the access log's lines would be timed too (and flood the terminal); api_speed.py's
        # server keeps its log, so this is a little cheaper than what it measures
        logging.disable(logging.INFO)
        with TestClient(app) as client:
            asked = BODIES[args.body]
            _timed(client, 32, args.page, asked)  # warm-up: first-call imports, the catalog's terms
            if args.profile:
                from pyinstrument import Profiler

                profiler = Profiler(interval=0.001)
                profiler.start()
                _endpoint(app, args.requests, asked)
                profiler.stop()
                print(profiler.output_text(unicode=False, color=False))
                return 0
            runs: list[float] = []
            own: list[float] = []
            for k in range(args.runs):
                runs.append(_timed(client, args.requests, args.page, asked))
                line = f"run {k + 1}: {runs[-1]:.3f} CPU ms per request"
                if not args.page:
                    own.append(_endpoint(app, args.requests, asked))
                    line += f" (endpoint's own work {own[-1]:.3f})"
                print(line)
    what = "answer page" if args.page else f"{args.body} question"
    line = f"median {statistics.median(runs):.3f} CPU ms per request ({what})"
    if own:
        line += f"; endpoint's own work {statistics.median(own):.3f}"
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
