"""r36 (ap): two Apple gaps a new user found.

(1) The M2 Ultra's catalog power (295 W, Apple's maximum wall power of the whole Mac Studio in
that configuration, support article 102027) counted its electricity, while the M4 Pro Mac mini
and the M3 Ultra 60-core counted none. Apple's Mac mini article (103253) gives 140 W for the
full-spec M4 Pro; a smaller bin in the same Mac carries its larger tested bin's figure, an
upper bound; a bin larger than the one Apple tested (M4 Max 40-core) stays without one. A
bought Mac's caveat had read the figure as a board's ("a lower bound: not the host").

(2) A llama.cpp row on an Apple GPU at bf16 carried PyTorch's MPS rule ("needs macOS 14 …
(PyTorch's MPS backend) … PyTorch rows are priced so"); llama.cpp's Metal backend has its own
rule now (``llama.cpp-precision:bf16``), as MLX has."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain import cost as costs
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend import service
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"


@functools.cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


@functools.cache
def _rules() -> compat.Rules:
    return load_rules(DATA)


@functools.cache
def _doc() -> dict[str, object]:
    """The catalog file (its rows' sources and notes, which GpuSpec does not carry)."""
    doc: dict[str, object] = yaml.safe_load((DATA / "gpus" / "apple.yaml").read_text())
    return doc


def _rows() -> dict[str, dict[str, object]]:
    rows = _doc()["gpus"]
    assert isinstance(rows, list)
    return {r["slug"]: r for r in rows}


# ------------------------------------------------------------------ (1) power


@pytest.mark.parametrize(
    ("slug", "watts"),
    [
        ("apple-m2-ultra", 295.0),  # unchanged: Apple's tested configuration
        ("apple-m4-pro", 140.0),  # the full-spec Mac mini Apple tested
        ("apple-m4-pro-16c-64gb", 140.0),  # its larger bin's figure, an upper bound
        ("apple-m3-ultra-60c-96gb", 270.0),  # the 80-core / 512 GB figure, an upper bound
        ("apple-m3-ultra", 270.0),
        ("apple-m4-max-32c-36gb", 145.0),
    ],
)
def test_the_macs_carry_apples_wall_power_with_its_source(slug: str, watts: float) -> None:
    assert _gpus()[slug].tdp_w == watts
    row = _rows()[slug]
    fs = row["field_sources"]
    sources = _doc()["sources"]
    assert isinstance(fs, dict) and isinstance(sources, dict)
    assert fs.get("tdp_w") in sources  # the figure names a source the file lists
    assert "NOT a board TDP" in str(row["notes"])


def test_a_bin_larger_than_apples_tested_one_has_no_power() -> None:
    # Apple tested the 32-core M4 Max (145 W): no bound on the 40-core chip
    assert _gpus()["apple-m4-max"].tdp_w is None
    assert "bounds nothing" in str(_rows()["apple-m4-max"]["notes"])


def _bought(slug: str) -> costs.CostEstimate:
    est = costs.estimate_cost(_gpus()[slug], 1, 100.0, 10.0, 0.2, None)
    energy = est.energy_to_finish_usd
    return replace(
        est,
        purchase_usd=1999.0,
        buy_to_finish_usd=None if energy is None else 1999.0 + energy,
    )


@pytest.mark.parametrize("slug", ["apple-m4-pro-16c-64gb", "apple-m3-ultra-60c-96gb"])
def test_a_bought_mac_now_counts_its_electricity(slug: str) -> None:
    mac = _bought(slug)
    assert mac.power_w == _gpus()[slug].tdp_w
    job = costs.job_cost(mac, "buy")
    assert job is not None and job > 1999.0  # price plus the job's electricity
    assert costs.job_cost_missing(mac, "buy", slug) is None


def test_a_bought_macs_caveat_reads_the_figure_as_the_whole_machine() -> None:
    said = compat.purchase_caveats(_gpus()["apple-m4-pro"], 1, True, False)
    power = [x for x in said if x.startswith("electricity")]
    assert power == [
        "electricity counts the whole Mac at Apple's maximum wall power (140 W), an upper "
        "bound: CPU and power supply included"
    ]
    assert all(compat.is_owning_caveat(x) for x in said)  # a renter's verdict drops it
    # a card's figure is still its board's, a lower bound
    card = compat.purchase_caveats(_gpus()["rtx-4090"], 1, True, False)
    assert any("a lower bound" in x for x in card)
    # no figure, no claim
    assert compat.purchase_caveats(_gpus()["apple-m4-max"], 1, True, False) == (
        "electricity is not counted in buying: the catalog has no power figure for this GPU",
    )


# ------------------------------------------------------------------ (2) llama.cpp bf16


@pytest.mark.parametrize("slug", ["apple-m1-max", "apple-m4-max"])
def test_llamacpps_bf16_caveat_on_metal_is_its_own(slug: str) -> None:
    gpu = _gpus()[slug]
    said = compat.precision_caveat(gpu, "bf16", _rules(), "mps", "llama.cpp")
    assert said is not None and said.startswith("bf16 under llama.cpp on Metal: ")
    assert "PyTorch" not in said
    assert "GGML_METAL_USE_BF16" in said and "F16 GGUF" in said
    st = compat.feature_status(gpu, "llama.cpp-precision:bf16", _rules(), "mps")
    assert st is not None and st.status == "supported"
    # PyTorch's own rows keep PyTorch's rule
    torch = compat.precision_caveat(gpu, "bf16", _rules(), "mps", "transformers")
    assert torch is not None and "PyTorch's MPS backend" in torch


def test_llamacpps_rule_speaks_only_for_apple_gpus() -> None:
    # a CUDA card under llama.cpp has no such rule: nothing of Metal on it
    said = compat.precision_caveat(_gpus()["rtx-4090"], "bf16", _rules(), "cuda", "llama.cpp")
    assert said is None or "Metal" not in said


@pytest.mark.parametrize("task", ["inference", "serving"])
def test_a_llamacpp_mac_row_at_bf16_says_llamacpps_rule(task: str) -> None:
    serving = {"concurrent_requests": 4, "prompt_tokens": 500, "output_tokens": 200,
               "ttft_ms_target": 3.6e6, "itl_ms_target": 2000}  # fmt: skip
    w: dict[str, object] = {
        "preset": "llama-3-8b",
        "task": task,
        "precision": "bf16",
        "runtime": "llama.cpp",
    }
    if task == "serving":
        w["serving"] = serving
    req = s.RecommendationRequest(
        workload=w,
        constraints={"vendors": ["apple"], "acquisition": "either"},
        objective="fastest",
        limit=40,
    )
    rows = service.recommend(req, list(_gpus().values()), _rules()).recommendations
    rows = [r for r in rows if r.gpu.slug in ("apple-m1-max", "apple-m2-ultra")]
    assert rows
    for row in rows:
        assert row.runtime == "llama.cpp"
        assert any(x.startswith("bf16 under llama.cpp on Metal: ") for x in row.warnings)
        assert not any("PyTorch's MPS backend" in x for x in row.warnings), row.warnings
