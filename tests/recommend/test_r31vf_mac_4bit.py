"""r31 review (vf): Llama 3 70B on a Mac. Transformers' AWQ and GPTQ kernels have no Metal
backend (Hugging Face's quantization overview), yet an AWQ request on an M2 Ultra was ranked
"supported" under Transformers, and the bf16 row's tip offered "4-bit weights
(AWQ/GPTQ/bitsandbytes)". A format's own rule (`transformers-weights:awq`) now refuses them on
Apple GPUs, and a Mac row's 4-bit tip names what runs there: MLX or llama.cpp."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.recommend import schemas as s
from app.recommend import service, whatif
from app.recommend.workloads import resolve_workload
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
RULES = load_rules(DATA)
BY = {g.slug: g for g in read_gpu_specs(DATA)}
MAC = "apple-m2-ultra"


def _estimate(catalog: Any, slug: str, **work: Any) -> s.EstimateResponse:
    gpus, offers, rules = catalog
    body = {"gpu": slug, "workload": {"preset": "llama-3-70b", "task": "inference", **work}}
    req = s.EstimateRequest.model_validate(body)
    gpu = next(g for g in gpus if g.slug == slug)
    return service.estimate(req, gpu, rules, offers=offers.get(slug))


@pytest.mark.parametrize("fmt", ["awq", "gptq"])
def test_a_format_rule_refuses_awq_and_gptq_under_transformers_on_metal(fmt: str) -> None:
    st = compat.weights_status(BY[MAC], "transformers", "int4", RULES, "mps", fmt)
    assert st is not None and st.status == "unsupported"
    assert st.note is not None and "Metal" in st.note
    # the precision alone (NF4 is int4 too) is not refused by it: since r31 it runs as
    # bitsandbytes NF4, experimental (tests/domain/test_r31mi_mac_plain_int4.py)
    plain = compat.weights_status(BY[MAC], "transformers", "int4", RULES, "mps")
    assert plain is not None and plain.status == "experimental"
    on_cuda = compat.weights_status(BY["rtx-4090"], "transformers", "int4", RULES, "cuda", fmt)
    assert on_cuda is None or on_cuda.status == "supported"


@pytest.mark.parametrize("fmt", ["awq", "gptq"])
def test_an_awq_or_gptq_request_on_a_mac_is_left_out_with_the_reason(
    shipped_catalog: Any, fmt: str
) -> None:
    out = _estimate(shipped_catalog, MAC, quantization=fmt)
    assert out.result is None
    assert out.excluded is not None and "Metal" in out.excluded.reason, out.excluded
    # the same request on a CUDA card still runs
    assert _estimate(shipped_catalog, "a100-sxm4-80gb", quantization=fmt).result is not None


def test_a_mac_rows_4bit_tip_names_what_runs_on_a_mac(shipped_catalog: Any) -> None:
    row = _estimate(shipped_catalog, MAC).result
    assert row is not None and row.runtime == "transformers"
    tip = next(t for t in row.tips if t.startswith("4-bit weights"))
    assert "MLX" in tip and "GGUF" in tip and "AWQ" not in tip, tip
    # a CUDA card's Transformers row keeps the formats Transformers runs there
    cuda = _estimate(shipped_catalog, "rtx-4090", **{"preset": "llama-3-8b"}).result
    assert cuda is not None
    assert any(t.startswith("4-bit weights (AWQ/GPTQ/bitsandbytes)") for t in cuda.tips)


def test_an_empty_mac_awq_answer_names_the_runtime_that_runs_4_bits_there(
    shipped_catalog: Any,
) -> None:
    """Its nearest change had been "any vendor, best 2 × AMD Instinct MI100": another
    machine than the one asked about, ahead of the GGUF file llama.cpp runs on a Mac."""
    gpus, offers, rules = shipped_catalog
    req = s.RecommendationRequest.model_validate(
        {
            "workload": {"preset": "llama-3-70b", "task": "inference", "quantization": "awq"},
            "constraints": {"vendors": ["apple"], "acquisition": "buy"},
            "objective": "best_value",
        }
    )
    answer = service.recommend(req, gpus, rules, offers=offers)
    assert not answer.recommendations and answer.empty is not None
    first = answer.empty.nearest[0]
    assert first.change.startswith("runtime llama.cpp with GGUF Q4_K_M"), answer.empty.relax
    assert first.top_slug is not None and first.top_slug.startswith("apple-")
    assert "any vendor" in answer.empty.relax  # still offered, after it


def test_another_vendor_strays_as_far_as_renting_does() -> None:
    def v(change: str, can_run: int) -> s.WhatIfOut:
        return s.WhatIfOut(
            change=change, top_slug="x", top_name="x", num_gpus=1, throughput=1.0,
            unit="tokens/s", required_gb=40.0, can_run=can_run, same_top=False,
            purchase_usd=1.0, hourly_usd=None,
        )  # fmt: skip

    gguf = v("runtime llama.cpp with GGUF Q4_K_M instead of transformers AWQ", 3)
    vendor = v(whatif.VENDOR_LIFTED, 72)
    # only what empty_answer reads (test_pricefix_nearest builds its answers so)
    fields: dict[str, Any] = {"excluded": [], "what_if": [vendor, gguf], "acquisition": "buy"}
    answer = s.RecommendationResponse.model_construct(**fields)
    assert [n.change for n in whatif.empty_answer(answer).nearest] == [gguf.change, vendor.change]


def test_a_pinned_transformers_4bit_format_gets_the_same_bits_as_gguf() -> None:
    for fmt in ("awq", "gptq", "nf4"):
        req = s.RecommendationRequest.model_validate(
            {"workload": {"preset": "llama-3-70b", "task": "inference", "quantization": fmt}}
        )
        work, _ = resolve_workload(req.workload)
        tried = dict(whatif.variations(work, req))
        label = f"runtime llama.cpp with GGUF Q4_K_M instead of transformers {fmt.upper()}"
        assert tried[label]["workload"]["quantization"] == "q4_k_m", sorted(tried)
