"""Dump varied API answers, byte for byte, to check that a speed change changes none of them.

    PYTHONHASHSEED=0 PYTHONPATH=. python benchmarks/answers_dump.py OUTDIR
    (then the same on the other tree, and ``diff -r`` the two folders)

86 POST /api/v1/recommendations answers on a fresh SQLite database: inference, training,
fine-tuning and serving; every objective and acquisition; budgets, filters, max_gpus and
num_gpus; each framework; group_by config, what-if and precision choices. Each file holds the
request, the status and the body; each answer is asked twice (the second from warm caches) and
must be the same both times.
"""

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
tmp = tempfile.mkdtemp()
app = create_app(Settings(database_url=f"sqlite:///{tmp}/d.db"))
bodies: list[dict[str, Any]] = []
for b in (1, 4, 7, 16, 32):
    bodies.append({"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": b}})
for obj in ("fastest", "best_value", "cheapest", "balanced"):
    for acq in ("buy", "rent", "either"):
        bodies.append(
            {
                "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 8},
                "objective": obj,
                "constraints": {"acquisition": acq},
            }
        )
for preset, task in [
    ("llama-3-70b", "inference"),
    ("mixtral-8x7b", "inference"),
    ("qwen3-30b-a3b", "inference"),
    ("resnet-50", "training"),
    ("bert-base", "fine-tuning"),
    ("mistral-7b", "fine-tuning"),
    ("llama-3-8b", "fine-tuning"),
    ("stable-diffusion-1.5", "inference"),
    ("whisper-small", "inference"),
    ("gpt-2", "training"),
    ("vit-b-16", "inference"),
    ("deepseek-v3", "inference"),
    ("gpt-oss-20b", "inference"),
    ("llama-3.1-405b", "inference"),
    ("sdxl", "training"),
]:
    for obj in ("balanced", "fastest"):
        bodies.append({"workload": {"preset": preset, "task": task}, "objective": obj})
for fw in ("pytorch", "tensorflow", "jax"):
    bodies.append(
        {
            "workload": {"preset": "llama-3-8b", "task": "inference"},
            "constraints": {"framework": fw},
        }
    )
    bodies.append(
        {
            "workload": {"preset": "resnet-50", "task": "training"},
            "constraints": {"framework": fw},
            "objective": "best_value",
        }
    )
for mg in (1, 2, 4, 8):
    bodies.append(
        {
            "workload": {"preset": "llama-3-70b", "task": "inference"},
            "constraints": {"max_gpus": mg},
        }
    )
bodies.append(
    {"workload": {"preset": "llama-3-70b", "task": "inference"}, "constraints": {"num_gpus": 4}}
)
for bud in (
    {"max_purchase_usd": 2000},
    {"max_hourly_usd": 1.5},
    {"max_purchase_usd": 30000, "acquisition": "buy"},
    {"max_job_cost_usd": 50},
    {"max_hours": 10},
    {"vendors": ["amd"]},
    {"segments": ["consumer"]},
    {"vendors": ["nvidia"], "acquisition": "rent", "exclude_marketplace": True},
):
    bodies.append(
        {
            "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "dataset_samples": 100000},
            "constraints": bud,
        }
    )
    bodies.append(
        {
            "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 3},
            "constraints": bud,
            "objective": "balanced",
        }
    )
bodies.append(
    {"workload": {"preset": "llama-3-8b", "task": "inference"}, "speed_weight": 0.8, "limit": 20}
)
bodies.append(
    {"workload": {"preset": "llama-3-8b", "task": "inference"}, "group_by": "config", "limit": 20}
)
bodies.append({"workload": {"preset": "llama-3-8b", "task": "inference", "precision": "fp8"}})
bodies.append({"workload": {"preset": "llama-3-8b", "task": "inference", "precision": "int4"}})
bodies.append(
    {
        "workload": {
            "preset": "llama-3-8b",
            "task": "inference",
            "seq_len": 8192,
            "output_tokens": 1024,
        }
    }
)
bodies.append({"workload": {"preset": "llama-3-8b", "task": "inference"}, "what_if": True})
bodies.append(
    {
        "workload": {"preset": "mistral-7b", "task": "fine-tuning", "peft": "qlora"},
        "objective": "cheapest",
    }
)
bodies.append(
    {
        "workload": {"preset": "llama-3-8b", "task": "training", "optimizer": "adam8bit"},
        "objective": "balanced",
    }
)
for c in (10, 50):
    bodies.append(
        {
            "workload": {
                "preset": "llama-3-70b",
                "task": "serving",
                "serving": {"concurrent_requests": c, "prompt_tokens": 1000, "output_tokens": 300},
            },
            "constraints": {"acquisition": "rent"},
            "objective": "best_value",
        }
    )
    bodies.append(
        {
            "workload": {
                "preset": "llama-3-8b",
                "task": "serving",
                "serving": {"concurrent_requests": c, "prompt_tokens": 500, "output_tokens": 200},
            }
        }
    )
with TestClient(app) as client:
    for i, body in enumerate(bodies):
        r = client.post("/api/v1/recommendations", json=body)
        (out / f"{i:03d}.json").write_bytes(
            json.dumps(body).encode() + b"\n" + str(r.status_code).encode() + b"\n" + r.content
        )
        # a second time: what a warm cache answers
        r2 = client.post("/api/v1/recommendations", json=body)
        assert r2.content == r.content, i
print(len(bodies), "answers")
