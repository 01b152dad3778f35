"""Serving rows on a Mac say MLX's bf16 facts, as MLX inference rows do.

MLX inference rows carry MLX's own bf16 rule (`mlx-precision:bf16`, compat.precision_caveat
with the runtime) rather than PyTorch MPS's; serving chose its weight precisions on another
path (serving_step._options) that read no precision caveat at all, so an M1 Max serving bf16
weights under mlx_lm.server said nothing of the bf16 arithmetic M1/M2 GPUs lack. The request
itself is `workload.runtime: "mlx"` (the API's ServingRuntime names); "mlx-lm" is refused by
that field's name."""

from __future__ import annotations

import functools

import pytest
from fastapi.testclient import TestClient

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules

SERVING = {"concurrent_requests": 4, "prompt_tokens": 500, "output_tokens": 200}
# targets any Mac meets, so that every runtime's rows are listed (Transformers' too)
LIFTED = {**SERVING, "ttft_ms_target": 3.6e6, "itl_ms_target": 2000}
MACS = ("apple-m1-max", "apple-m4-max")


@functools.cache
def _specs() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA_DIR)}


@functools.cache
def _rules() -> compat.Rules:
    return load_rules(DATA_DIR)


def _mac_rows(runtime: str | None) -> dict[str, s.Recommendation]:
    w: dict[str, object] = {
        "preset": "llama-3-8b",
        "task": "serving",
        "precision": "bf16",
        "serving": LIFTED,
    }
    if runtime is not None:
        w["runtime"] = runtime
    req = s.RecommendationRequest(
        workload=w,
        constraints={"vendors": ["apple"], "acquisition": "either"},
        objective="fastest",
        limit=40,
    )
    r = service.recommend(req, list(_specs().values()), _rules())
    return {x.gpu.slug: x for x in r.recommendations if x.gpu.slug in MACS}


def test_the_precision_caveat_under_mlx_is_mlxs_own() -> None:
    m1 = _specs()["apple-m1-max"]
    mlx = compat.precision_caveat(m1, "bf16", _rules(), "mps", "mlx")
    assert mlx is not None and mlx.startswith("bf16 under MLX on Metal: ")
    assert "PyTorch" not in mlx
    torch = compat.precision_caveat(m1, "bf16", _rules(), "mps", "transformers")
    assert torch is not None and "PyTorch's MPS backend" in torch


@pytest.mark.parametrize("runtime", ["mlx", None])  # None: MLX is the Mac's default
def test_mlx_serving_rows_carry_mlxs_bf16_caveat(runtime: str | None) -> None:
    rows = _mac_rows(runtime)
    assert set(rows) == set(MACS)
    for slug, row in rows.items():
        assert row.runtime == "mlx"
        said = [w for w in row.warnings if "bf16" in w]
        # it had said nothing of bf16 at all
        assert any(w.startswith("bf16 under MLX on Metal: ") for w in said), (slug, said)
        assert not any("PyTorch's MPS backend" in w for w in said), (slug, said)
        # a note, not a status: MLX's bf16 rule is supported
        assert row.framework_status == "supported"


def test_a_transformers_serving_row_on_a_mac_says_pytorchs() -> None:
    rows = _mac_rows("transformers")
    assert rows, "Transformers serves on a Mac through PyTorch's MPS backend"
    for slug, row in rows.items():
        assert any("PyTorch's MPS backend" in w for w in row.warnings), (slug, row.warnings)
        assert not any(w.startswith("bf16 under MLX") for w in row.warnings)


def test_the_api_takes_runtime_mlx_and_names_the_field_for_mlx_lm(
    read_client: TestClient,
) -> None:
    body: dict[str, object] = {
        "workload": {"preset": "llama-3-8b", "task": "serving", "runtime": "mlx",
                     "serving": SERVING},
        "constraints": {"vendors": ["apple"], "acquisition": "either"},
        "objective": "fastest",
        "limit": 5,
    }  # fmt: skip
    ok = read_client.post("/api/v1/recommendations", json=body)
    assert ok.status_code == 200, ok.text
    rows = ok.json()["recommendations"]
    assert rows and all(r["runtime"] == "mlx" for r in rows)
    bad = read_client.post(
        "/api/v1/recommendations",
        json={**body, "workload": {**body["workload"], "runtime": "mlx-lm"}},  # type: ignore[dict-item]
    )
    assert bad.status_code == 422
    assert "runtime" in bad.text and "mlx" in bad.text
