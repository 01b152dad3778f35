"""Per-row measured ÷ predicted of one tuning file as an old commit's benchmarks/accuracy.py
scored it: the collector behind tests/data/first_scored_ratios.yaml (issue #23).

Run it inside a scratch checkout of the commit that first scored the file (never the main
checkout), with that checkout first on the path:

    git worktree add --detach /tmp/hist <commit>
    cd /tmp/hist && PYTHONPATH=. python /path/to/benchmarks/first_scored.py <file stem>
    git worktree remove --force /tmp/hist

It prints JSON lines {regime, key, slug, ratio, source, via}: from ``calibration_rows`` where
the commit has it (every tuning row; the caller keeps the file's sources), else from the
function that scored the file then (evaluate, evaluate_inference, evaluate_runtime,
evaluate_eager_decode, evaluate_heldout; llm_pretrain.evaluate_pretrain is called the same
way by hand). The rows are then matched to today's source units by workload label and GPU
(accuracy.source_unit_rows) and stored with the commit and its date.
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

sys.path.insert(0, ".")

from benchmarks import accuracy as a  # the old checkout's, on purpose


def rows_of(stem: str) -> list[dict[str, Any]]:  # noqa: C901  (one branch per old API)
    root = a.ROOT
    data = root / "data"
    path = root / "tests" / "data" / f"{stem}.yaml"
    train = root / "tests" / "data" / "lambda_pytorch_train.yaml"
    llm = root / "tests" / "data" / "llm_inference.yaml"
    out: list[dict[str, Any]] = []

    def emit(regime: Any, key: str, slug: Any, ratio: float, source: Any, via: str) -> None:
        out.append(dict(regime=regime, key=key, slug=slug, ratio=ratio, source=source, via=via))

    if hasattr(a, "calibration_rows"):
        n = len(inspect.signature(a.calibration_rows).parameters)
        for r in a.calibration_rows(*[data, train, llm][:n]):
            source = getattr(r, "source", None)
            emit(r.regime, r.workload, r.slug, r.ratio, source, "calibration_rows")
    elif stem == "lambda_pytorch_train":
        for s in a.evaluate(data, path):
            for slug, m, p in s.rows:
                emit("train", f"{s.model} {s.precision}", slug, m / p, stem, "evaluate")
    elif stem == "llm_inference":
        names = {"cuda": "cuda_scoreboard", "rocm": "rocm_scoreboard",
                 "vulkan": "vulkan_scoreboard", "metal": "apple_silicon"}  # fmt: skip
        for s in a.evaluate_inference(data, path):
            if s.backend == "all":
                continue
            regime = "decode" if s.metric == "tg" else "prefill"
            for slug, m, p in s.rows:
                emit(regime, s.metric, slug, m / p, names.get(s.backend), "evaluate_inference")
    elif stem == "runtime_inference":
        for slug, label, m, p in a.evaluate_runtime(data, path).rows:
            emit(None, label, slug, m / p, None, "evaluate_runtime")
    elif stem == "eager_decode":
        for e in a.evaluate_eager_decode(data, path):
            ratio = e.measured / e.predicted
            emit("decode", repr(e), e.slug, ratio, e.source, "evaluate_eager_decode")
    else:
        for h in a.evaluate_heldout(data, [path])[0]:
            emit(h.regime, h.group, h.slug, h.ratio, None, "evaluate_heldout")
    return out


if __name__ == "__main__":
    for row in rows_of(sys.argv[1]):
        print(json.dumps(row))
