"""How long ranking the whole catalog takes for one request, in-process.

    python benchmarks/rank_speed.py [--repeat 200]

Prints the median and p90 wall time of ``service.recommend`` (resolution, every GPU's
memory/throughput/cost, ranking and the pydantic response) for a few typical requests.
The target is a median under 5 ms for the ~90-GPU catalog.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.recommend import schemas as s  # noqa: E402
from app.recommend import service  # noqa: E402
from app.recommend.presets import load_rules  # noqa: E402

REQUESTS = {
    "llama-3-8b inference, balanced": {"workload": {"preset": "llama-3-8b"}},
    "llama-3-70b inference, fastest": {
        "workload": {"preset": "llama-3-70b"},
        "objective": "fastest",
    },
    "resnet-50 training, best value": {
        "workload": {"preset": "resnet-50"},
        "objective": "best_value",
    },
    "mistral-7b qlora, cheapest under $2000": {
        "workload": {"preset": "mistral-7b"},
        "objective": "cheapest",
        "constraints": {"max_purchase_usd": 2000},
    },
}


def measure(repeat: int) -> dict[str, tuple[float, float, int]]:
    gpus = read_gpu_specs(ROOT / "data")
    rules = load_rules(ROOT / "data")
    out = {}
    for label, body in REQUESTS.items():
        req = s.RecommendationRequest.model_validate(body)
        service.recommend(req, gpus, rules)  # warm caches (presets, imports)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            service.recommend(req, gpus, rules)
            times.append(time.perf_counter() - t0)
        times.sort()
        out[label] = (statistics.median(times) * 1e3, times[int(0.9 * len(times))] * 1e3, len(gpus))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="rank-speed benchmark")
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args(argv)
    for label, (median, p90, n) in measure(args.repeat).items():
        print(f"{label:42} {n} GPUs  median {median:6.2f} ms  p90 {p90:6.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
