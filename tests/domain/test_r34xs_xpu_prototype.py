"""PyTorch on Intel GPUs is what PyTorch calls it: a Prototype.

The rule had read "supported" while its own note said PyTorch labels Intel GPU support
'Prototype' (Getting Started on Intel GPU, the 2.6 to 2.12 docs; the 2.5 page said Beta). It is
experimental now, with the label and the page as the row's caveat, so PyTorch rows on Arc cards
rank after supported software, as every experimental row does. The label is PyTorch's, so a
runtime that runs no PyTorch program (llama.cpp's SYCL build) does not carry it, for inference
and serving alike."""

from __future__ import annotations

import functools

import yaml

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules

SERVING = {"concurrent_requests": 4, "prompt_tokens": 500, "output_tokens": 200}


@functools.cache
def _specs() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA_DIR)}


@functools.cache
def _rules() -> compat.Rules:
    return load_rules(DATA_DIR)


def _run(workload: dict, **kw: object) -> s.RecommendationResponse:
    req = s.RecommendationRequest(workload=workload, **kw)
    return service.recommend(req, list(_specs().values()), _rules())


def test_the_rule_is_experimental_and_cites_the_versioned_page() -> None:
    doc = yaml.safe_load((DATA_DIR / "frameworks.yaml").read_text(encoding="utf-8"))
    (rule,) = [
        r for r in doc["frameworks"] if r["framework"] == "pytorch" and r["backend"] == "xpu"
    ]
    assert rule["status"] == "experimental"
    src = doc["sources"][rule["source"]]
    assert "/docs/2.12/" in src["url"] and "Prototype" in src["title"]
    for slug in ("arc-b580", "arc-a770-16gb", "max-1100"):
        sup = compat.framework_support(_specs()[slug], "pytorch", _rules())
        assert sup.ok and sup.backend == "xpu" and sup.status == "experimental", slug
        assert sup.caveat is not None and "'Prototype'" in sup.caveat and "2.12" in sup.caveat


def test_framework_words_reach_only_the_frameworks_own_runtimes() -> None:
    sup = compat.framework_support(_specs()["arc-b580"], "pytorch", _rules())
    for runtime in (None, "pytorch", "transformers", "vllm"):
        status, words = compat.framework_words(sup, "pytorch", runtime)
        assert status == "experimental", runtime
        assert words[0] == "PyTorch on Intel XPU (oneAPI) is experimental"
        assert "'Prototype'" in words[1]
    for runtime in ("llama.cpp", "onnxruntime", "mlx"):
        assert compat.framework_words(sup, "pytorch", runtime) == ("supported", ()), runtime
    # a CUDA card's rule is supported and says nothing, whatever the runtime
    cuda = compat.framework_support(_specs()["rtx-4090"], "pytorch", _rules())
    assert compat.framework_words(cuda, "pytorch", "transformers") == ("supported", ())


def _ranked_last_with_the_caveat(r: s.RecommendationResponse) -> None:
    rows = r.recommendations
    arcs = [i for i, x in enumerate(rows) if x.gpu.slug.startswith("arc-")]
    assert arcs, [x.gpu.slug for x in rows]  # still answered, not refused
    for i in arcs:
        assert rows[i].framework_status == "experimental"
        assert any("'Prototype'" in w for w in rows[i].warnings), rows[i].warnings
    statuses = [x.framework_status for x in rows]
    first = statuses.index("experimental")
    assert "supported" not in statuses[first:]


def test_a_flux_qlora_buy_under_600_keeps_its_arc_rows_after_the_supported_ones() -> None:
    r = _run(
        {"preset": "flux-1-dev", "task": "fine-tuning", "peft": "qlora"},
        constraints={"max_purchase_usd": 600, "acquisition": "buy"},
        limit=40,
    )
    _ranked_last_with_the_caveat(r)


def test_a_llama_3_8b_qlora_keeps_its_arc_rows_after_the_supported_ones() -> None:
    r = _run(
        {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"},
        constraints={"max_purchase_usd": 800, "acquisition": "buy"},
        limit=40,
    )
    _ranked_last_with_the_caveat(r)


def _arc_row(workload: dict) -> s.Recommendation:
    r = _run(
        workload,
        constraints={"vendors": ["intel"], "acquisition": "either"},
        objective="fastest",
        limit=40,
    )
    return next(x for x in r.recommendations if x.gpu.slug == "arc-b580")


def test_a_llama_cpp_row_on_an_arc_card_is_not_pytorchs() -> None:
    for task in ("inference", "serving"):
        w: dict[str, object] = {"preset": "llama-3-8b", "task": task, "runtime": "llama.cpp"}
        if task == "serving":
            w["serving"] = SERVING
        else:
            w["quantization"] = "q4_k_m"
        row = _arc_row(w)
        assert row.runtime == "llama.cpp"
        # serving had ranked it experimental with no reason given
        assert row.framework_status == "supported", task
        assert not any("PyTorch" in w for w in row.warnings), (task, row.warnings)


def test_a_pytorch_runtimes_serving_row_says_why_it_is_experimental() -> None:
    row = _arc_row(
        {"preset": "llama-3-8b", "task": "serving", "runtime": "transformers", "serving": SERVING}
    )
    assert row.framework_status == "experimental"
    assert "PyTorch on Intel XPU (oneAPI) is experimental" in row.warnings
    assert any("'Prototype'" in w for w in row.warnings)
