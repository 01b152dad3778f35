"""The OpenAPI document as the API really behaves.

FastAPI documents its own default 422 body; every error of this app has one shape instead
(``app.errors.error_body``). This module rewrites the generated document once: every /api
operation lists that shape for 422 and 500, 404 where a path names a thing, 401/403 where a
bearer token is checked (the operations FastAPI marks with the scheme of
``app.deps.admin_bearer``, and the report upload), 404/409/413 where a service raises them,
request examples for every endpoint that takes a JSON body, and a summary and description for
every operation.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

ERROR_REF = "#/components/schemas/ErrorResponse"
BEARER = "bearerAuth"  # app.deps.admin_bearer's scheme name
_METHODS = ("get", "post", "put", "patch", "delete")


class ErrorDetail(BaseModel):
    code: str = Field(
        description="machine-readable: invalid_input, not_found, conflict, "
        "unauthorized, forbidden, payload_too_large, internal_error, ..."
    )
    message: str = Field(description="what went wrong, in plain words")
    # required: every error carries it (app.errors.error_body), so a generated client need
    # not treat it as optional
    details: dict[str, Any] = Field(
        description="'field': the dotted request field at fault (e.g. 'workload.batch_size'), "
        "on every 4xx; empty on a 5xx",
    )


class ErrorResponse(BaseModel):
    """The one error shape of every 4xx and 5xx answer under /api."""

    error: ErrorDetail


_WHY = {
    "401": "No bearer token given where one is needed",
    "403": "The token is wrong, or the action is disabled on this server",
    "404": "No such thing (the message names it)",
    "409": "Conflicts with the current state (the message says which)",
    "413": "The body is larger than the server accepts",
    "415": "API writes take a JSON body (Content-Type: application/json)",
    "429": "Too many requests from this client; Retry-After says when to retry",
    "422": "Invalid input; details.field names the field. A query parameter the operation "
    "does not take, one given empty (`?gpu=`), or a catalog slug the catalog lacks is "
    "invalid input too",
    "500": "Internal error",
    "503": "The database (or the run queue) is unavailable, or the server is busy; retry "
    "after Retry-After",
}

# What a service raises that the route's shape does not show.
_EXTRA: dict[tuple[str, str], tuple[str, ...]] = {
    ("post", "/api/v1/gpus"): ("409",),
    ("post", "/api/v1/benchmark-runs"): ("401", "403", "409"),
    ("delete", "/api/v1/benchmark-runs/{run_id}"): ("401", "403", "409"),
    ("post", "/api/v1/device-reports"): ("401", "403", "409", "413"),
}
# Where the token is checked only when the server sets one (GPU_ADVISOR_UPLOAD_TOKEN,
# GPU_ADVISOR_RUN_TOKEN).
_OPTIONAL_TOKEN = {
    ("post", "/api/v1/device-reports"),
    ("post", "/api/v1/benchmark-runs"),
    ("delete", "/api/v1/benchmark-runs/{run_id}"),
}
# app/http/guard.py: rate-limited reads (writes are limited too), and body-taking methods.
_RATE_LIMITED = {("post", "/api/v1/recommendations"), ("post", "/api/v1/estimate"),
                 ("get", "/api/v1/gpus/compare")}  # fmt: skip

EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/api/v1/recommendations"): {
        "llm-inference": {
            "summary": "Llama 3 8B inference, renting, up to 2 GPUs",
            "value": {
                "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
                "constraints": {"framework": "pytorch", "acquisition": "rent", "max_gpus": 2},
                "objective": "best_value",
                "limit": 5,
            },
        },
        # serving had no example: a new user planning a deployment found its fields only by
        # opening the schema's WorkloadIn → ServingIn (thirty-eighth session's walk)
        "llm-serving": {
            "summary": "Qwen2.5 32B served to 100 users under p95 latency targets, renting",
            "value": {
                "workload": {
                    "preset": "qwen2.5-32b",
                    "task": "serving",
                    "serving": {
                        "concurrent_requests": 100,
                        "prompt_tokens": 1000,
                        "output_tokens": 300,
                        "ttft_ms_target": 1000,
                        "itl_ms_target": 50,
                        "target_percentile": "p95",
                    },
                },
                "constraints": {"acquisition": "rent"},
                "objective": "best_value",
                "limit": 5,
            },
        },
        "custom-training": {
            "summary": "A custom 1.3B decoder, full training in bf16",
            "value": {
                "workload": {
                    "task": "training",
                    "model": {
                        "family": "decoder",
                        "params": 1.3e9,
                        "layers": 24,
                        "hidden_size": 2048,
                        "num_heads": 16,
                    },
                    "precision": "bf16",
                    "batch_size": 8,
                    "seq_len": 2048,
                    "dataset_samples": 1e6,
                },
                "objective": "cheapest",
            },
        },
    },
    ("post", "/api/v1/estimate"): {
        "one-gpu": {
            "summary": "Llama 3 8B inference on one RTX 4090",
            "value": {"workload": {"preset": "llama-3-8b"}, "gpu": "rtx-4090"},
        },
    },
}


# The upload example is a real measurement, shortened: `gpu-advisor bench --profile quick` on
# a shared 2-core Intel Xeon VM (torch 2.13.0+cpu, 2026-12-06): fp32 matmul 1024³ in a median
# 79.5 ms = 2·1024³ ÷ 0.0795 s = 27.0 GFLOPS. A CPU matches no catalog GPU, so storing it
# (the docs' "Try it out" stores what it sends) calibrates nothing. The earlier example, an
# H100 at 790 TFLOPS bf16, was no measurement, yet once stored it calibrated every H100 SXM
# answer ("efficiencies measured on 1 machine"), and its 10 ms for an 8192³ matmul read
# 110 TFLOPS, not 790.
_FIGURE = {"value": 0.02701, "unit": "TFLOPS", "p10": 0.02575, "p90": 0.02768, "n_blocks": 3,
           "iters_per_block": 1, "median_time_s": 0.0795}  # fmt: skip
_GPU = {
    "slug": "my-h100-pcie",
    "name": "My H100 PCIe",
    "vendor": "nvidia",
    "architecture": "Hopper",
    "segment": "datacenter",
    "memory_gb": 80,
    "memory_bandwidth_gbs": 2000,
    "bf16_tflops": 756,
    "compute_capability": "9.0",
    "backends": ["cuda"],
    "field_sources": {"memory_gb": "datasheet", "bf16_tflops": "datasheet"},
    "sources": [
        {
            "id": "datasheet",
            "title": "NVIDIA H100 datasheet",
            "url": "https://www.nvidia.com/en-us/data-center/h100/",
        }
    ],
}
EXAMPLES.update(
    {
        ("post", "/api/v1/gpus"): {"new-gpu": {"summary": "A GPU with its sources", "value": _GPU}},
        ("put", "/api/v1/gpus/{slug}"): {
            "whole-entry": {
                "summary": "The whole entry (the slug comes from the path)",
                "value": {k: v for k, v in _GPU.items() if k != "slug"},
            }
        },
        ("patch", "/api/v1/gpus/{slug}"): {
            "street-price": {
                "summary": "Set a street price, clear the notes",
                "value": {
                    "street_price": {"usd": 25000, "as_of": "2026-01-15", "source": "datasheet"},
                    "notes": None,
                },
            }
        },
        ("post", "/api/v1/device-reports"): {
            "bench-report": {
                "summary": "A (shortened) report written by `gpu-advisor bench --output`: a "
                "quick run on a 2-core CPU, which calibrates no catalog GPU",
                "value": {
                    "schema_version": 2,
                    "profile": "quick",
                    "duration_s": 40.5,
                    "environment": {
                        "backend": "cpu",
                        "device": "cpu",
                        "device_name": "Intel(R) Xeon(R) Processor",
                        "device_memory_bytes": 25324953600,
                        "os": "Linux",
                        "python_version": "3.11.7",
                        "torch_version": "2.13.0+cpu",
                    },
                    "matmul": {
                        "reference_shape": [1024, 1024, 1024],
                        "rows": [],
                        "by_precision": {
                            "fp32": {
                                "precision": "fp32",
                                "native": True,
                                "reference": _FIGURE,
                                "best": _FIGURE,
                                "best_shape": [1024, 1024, 1024],
                            }
                        },
                    },
                    "tips": [],
                },
            }
        },
        ("post", "/api/v1/benchmark-runs"): {
            # no label: the server's own worker (`serve` starts one under its host name),
            # which exists on a fresh server; a named label no worker has (gpu-box-1) had
            # queued a run nothing takes, and the README's next start for it got a 409
            "quick": {
                "summary": "A quick run on the server's own worker, on the device it finds",
                "value": {"profile": "quick"},
            }
        },
    }
)


# What each operation does, as an integrator reads it in /docs: (summary, description). The
# summary replaces the one FastAPI derives from a function's name ("Get Run"); the
# description, the docstring FastAPI would show, which may name code. Money is US dollars
# throughout; `usd_per_hour` is a whole instance's price, `usd_per_gpu_hour` one GPU's.
_PAGE = (
    " A page: `total` (items matching, before `limit`/`offset`), `limit`, `offset` and "
    "`items`; `limit` and `offset` are counts of items."
)
OPERATIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("get", "/api/v1/health"): (
        "Readiness",
        "200 when the database answers, its schema is at the code's head and it (and the disk "
        "under it) can take writes; otherwise 503 with the error shape and `checks` naming "
        "what failed. The verdict may be a few seconds old.",
    ),
    ("get", "/api/v1/meta"): (
        "Version and data dates",
        "The service's version, the catalog's size and the newest dates of its prices: "
        "`catalog_as_of`, `offers_as_of` and `data_as_of` (the later of the two).",
    ),
    ("post", "/api/v1/gpus"): (
        "Add a GPU to the catalog (admin token)",
        "Stores a new catalog entry; every figure cites one of its `sources`. 409 when the "
        "slug is taken.",
    ),
    ("get", "/api/v1/gpus"): (
        "List and filter GPUs",
        "Catalog entries, each with `rent_from` (the lowest launchable on-demand price per "
        "GPU-hour) and `buy_at` (what a recommendation pays for one card). `sort=<field>` or "
        "`sort=-<field>` (descending) on a numeric field or on `rent_from.usd_per_gpu_hour` / "
        "`buy_at.usd`; unpriced GPUs sort last." + _PAGE,
    ),
    ("put", "/api/v1/gpus/{slug}"): (
        "Replace a GPU's whole entry (admin token)",
        "The body is the whole entry; the slug comes from the path.",
    ),
    ("patch", "/api/v1/gpus/{slug}"): (
        "Change some fields of a GPU (admin token)",
        "Any subset of fields, each within a whole entry's bounds; null clears a field that "
        "may be unsourced and is a 422 for one an entry cannot lack.",
    ),
    ("get", "/api/v1/gpus/{slug}"): (
        "One GPU with all fields, sources and offers",
        "The catalog entry, its `offers` (cloud instances and purchase prices), `rent_from`, "
        "`buy_at` and `seen_price` (the entry's quoted `cloud_price`, never ranked).",
    ),
    ("delete", "/api/v1/gpus/{slug}"): (
        "Delete a GPU and its offers (admin token)",
        "Removes the entry and every offer for it; 204 with no body.",
    ),
    ("get", "/api/v1/gpus/compare"): (
        "Compare GPUs side by side",
        "Each GPU as the list gives it, with `ratios`: each of `fields` divided by the first "
        "GPU's value (null where either is unknown). The prices compared are "
        "`rent_from.usd_per_gpu_hour` and `buy_at.usd`.",
    ),
    ("get", "/api/v1/offers"): (
        "Cloud and purchase offers, filtered",
        "Cloud instances (`usd_per_hour` and `spot_usd_per_hour` for the whole instance of "
        "`gpus` GPUs, `usd_per_gpu_hour` for one of them) and purchase prices (`usd` for one "
        "card), each dated (`as_of`), sourced and flagged `stale` past `stale_after_days`. "
        "Without `kind`, `provider`, `min_gpus` and `max_usd_per_hour` list cloud offers "
        "only. In the database's order (no `sort`)." + _PAGE,
    ),
    ("get", "/api/v1/offers/launch-spec"): (
        "A SkyPilot task that rents an offer's instance and benchmarks it (nothing launched)",
        "A SkyPilot task YAML (text, not JSON) that rents the cheapest suitable offer (or the "
        "named `provider`/`instance_type`), runs `gpu-advisor bench --profile standard` and "
        "uploads the report to `upload`.",
    ),
    ("get", "/api/v1/workloads"): (
        "Workload presets",
        "Every preset a request's `workload.preset` may name, with `count` (not paged).",
    ),
    ("get", "/api/v1/workloads/{workload_id}"): (
        "One workload preset",
        "The preset's model and defaults; the id reads in any case.",
    ),
    ("post", "/api/v1/recommendations"): (
        "Rank the catalog for a workload, with explanations",
        "Ranked configurations (GPU, GPU count, offer) for one workload under the "
        "constraints, each with memory, time, throughput, cost to rent and to buy, a "
        "buy-vs-rent verdict and the uncertainty of its speed; `counts` says how many were "
        "ranked, excluded and unpriced, and `empty` explains an answer with no row.",
    ),
    ("post", "/api/v1/estimate"): (
        "One workload on one GPU",
        "The full estimate for one named GPU (`gpu`) at `num_gpus` (or "
        "`constraints.num_gpus`) GPUs, whether or not it ranks.",
    ),
    ("post", "/api/v1/device-reports"): (
        "Store a report written by `gpu-advisor bench`",
        "201 with the stored report; 200 with `duplicate: true` when the same content is "
        "already stored. An `Idempotency-Key` header makes a retry store once.",
    ),
    ("get", "/api/v1/device-reports"): (
        "Stored device reports, newest first",
        "Summaries of the stored benchmark reports, optionally for one catalog GPU "
        "(`gpu_slug`)." + _PAGE,
    ),
    ("get", "/api/v1/device-reports/{report_id}"): (
        "One stored device report",
        "The report as stored, with the catalog GPU it matched (`gpu_slug`, null for none).",
    ),
    ("delete", "/api/v1/device-reports/{report_id}"): (
        "Delete a stored report (admin token)",
        "Removes the report; 204 with no body.",
    ),
    ("post", "/api/v1/benchmark-runs"): (
        "Queue a benchmark run for a worker",
        "202 with the run's id; the worker with that `label` (default: the server's host "
        "name) takes it. `warning` says when no such worker has reported, or when it lacks "
        "the device asked. 409 while that worker already has a run queued or running.",
    ),
    ("get", "/api/v1/benchmark-runs"): (
        "Benchmark runs, newest first",
        "Every run with its status, progress and worker." + _PAGE,
    ),
    ("get", "/api/v1/benchmark-runs/{run_id}"): (
        "One benchmark run",
        "Its status, progress (0 to 1), worker and, once done, the stored report's id.",
    ),
    ("delete", "/api/v1/benchmark-runs/{run_id}"): (
        "Cancel a benchmark run",
        "Cancels a queued or running run, from any host; 409 when it has already ended.",
    ),
    ("get", "/api/v1/workers"): (
        "Benchmark workers, most recently seen first",
        "Each worker's label, host, backend and `state`: online, busy (with its `run_id`) or "
        "offline (no word for longer than the heartbeat lapse)." + _PAGE,
    ),
}


def _error(code: str, note: str = "") -> dict[str, Any]:
    return {
        "description": _WHY[code] + note,
        "content": {"application/json": {"schema": {"$ref": ERROR_REF}}},
    }


def build(app: FastAPI) -> dict[str, Any]:
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    defs = ErrorResponse.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(defs.pop("$defs", {}))
    schemas["ErrorResponse"] = defs
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    components.setdefault("securitySchemes", {})[BEARER] = {
        "type": "http",
        "scheme": "bearer",
        "description": "GPU_ADVISOR_ADMIN_TOKEN for catalog edits; GPU_ADVISOR_UPLOAD_TOKEN "
        "for report uploads when the server sets one",
    }  # the same scheme FastAPI derives from app.deps.admin_bearer, with a fuller description
    for path, item in schema.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for method, op in item.items():
            if method not in _METHODS:
                continue
            key = (method, path)
            responses = op.setdefault("responses", {})
            codes = {"422", "500", "503"}
            if method in ("post", "put", "patch"):
                codes |= {"413", "415"}
            if method != "get" or key in _RATE_LIMITED:
                codes.add("429")
            if "{" in path:
                codes.add("404")
            # FastAPI marks the operations whose dependencies declare the bearer scheme
            admin = any(BEARER in req for req in op.get("security", []))
            if admin:
                codes |= {"401", "403"}
            codes |= set(_EXTRA.get(key, ()))
            note = " (only when the server sets a token)" if key in _OPTIONAL_TOKEN else ""
            for code in sorted(codes):
                responses[code] = _error(code, note if code in ("401", "403") else "")
            if key in _OPTIONAL_TOKEN:
                op["security"] = [{BEARER: []}, {}]
            if key in OPERATIONS:
                op["summary"], op["description"] = OPERATIONS[key]
            examples = EXAMPLES.get(key)
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if examples and body is not None:
                body["examples"] = examples
    return schema


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
