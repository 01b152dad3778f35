"""CPU seconds of one answer under a deadline it meets, one it misses, and none.

    PYTHONPATH=. python benchmarks/deadline_cpu.py [--runs 3]

ResNet-50 training rented (the preset's ImageNet, 90 epochs): constraints.max_hours none, 24
and 0.5. An answer that misses its deadline also says what would meet it (deadline.summary's
re-ranks) and lists the what-if variations of an empty answer (each a re-ranking of the
catalog): these had evaluated every count of every card, each time, and took ~7 CPU s against
0.5 without a deadline (2026-12-06, before service._results and the brief re-rankings). The
app is built on a fresh SQLite database and called in-process (orchestrate.recommend_for, as
the route calls it), timed with ``time.process_time``, which a shared machine's load barely
moves.
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

DEADLINES: tuple[float | None, ...] = (None, 24.0, 0.5)


def _cpu_s(app: Any, max_hours: float | None) -> float:
    from app.recommend import orchestrate
    from app.recommend import schemas as s

    body = s.RecommendationRequest.model_validate(
        {
            "workload": {"preset": "resnet-50"},
            "constraints": {"acquisition": "rent", "max_hours": max_hours},
        }
    )
    start = time.process_time()
    with session_scope(app.state.session_factory) as session:
        orchestrate.recommend_for(session, app.state.settings, body)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(database_url=f"sqlite:///{tmp}/deadline.db"))
        logging.disable(logging.INFO)
        with TestClient(app):
            _cpu_s(app, None)  # warm-up: first-call imports, the catalog's terms
            for hours in DEADLINES:
                runs = [_cpu_s(app, hours) for _ in range(args.runs)]
                said = "none" if hours is None else f"{hours:g} h"
                print(f"max_hours {said}: median {statistics.median(runs):.2f} CPU s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
