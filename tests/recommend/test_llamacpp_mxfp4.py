"""llama.cpp on a model's MXFP4 weights (gpt-oss as released): inference prices it as its tuning
rows are priced (tests/data/llamacpp_moe_decode.yaml: the integer-dot int4 datapath, 4.25 bits
per quantised weight, 16-bit embeddings and output), and serving reads the same file the same
way (data/efficiency.yaml llama.cpp int4_reads), where both were a 422 until 2026-12-04."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat, perf
from app.domain.workload import WorkloadSpec
from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from app.shipped import rules as shipped
from app.shipped.rules import load_efficiency
from app.shipped.yamlio import safe_load

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
TUNING = ROOT / "tests" / "data" / "llamacpp_moe_decode.yaml"


def _spec(**workload: object) -> tuple[WorkloadSpec, list[str]]:
    return resolve_workload(s.WorkloadIn.model_validate(workload))


def test_gpt_oss_on_llamacpp_runs_its_released_mxfp4_on_the_integer_dot_path() -> None:
    spec, _ = _spec(preset="gpt-oss-20b", task="inference", runtime="llama.cpp")
    assert (spec.runtime, spec.quantization, spec.precision) == ("llama.cpp", "mxfp4", "int4")
    assert spec.weight_bits == pytest.approx(4.25)
    # a named format's bits are per quantised weight: the embeddings and output stay 16-bit
    # (not a whole-file mean, as a GGUF type's bits are)
    assert spec.own_bits is None and spec.format_bits == pytest.approx(4.25)
    assert spec.weight_bytes > spec.model.params * 4.25 / 8
    # the file llama-bench loaded in PR #16991's row: "gpt-oss 20B MXFP4 MoE, 11.27 GiB"
    assert spec.weight_bytes / 2**30 == pytest.approx(11.27, rel=0.10)
    # named for any language model, as the GGUF types are
    llama, _ = _spec(
        preset="llama-3-8b", task="inference", runtime="llama.cpp", quantization="mxfp4"
    )
    assert (llama.precision, llama.quantization) == ("int4", "mxfp4")
    # the other runtimes keep MXFP4's own precision (fp4: FP4 tensor cores, or weight-only)
    hf, _ = _spec(preset="gpt-oss-20b", task="inference")
    assert (hf.runtime, hf.precision) == ("transformers", "fp4")


def test_llamacpp_still_names_the_formats_it_models() -> None:
    with pytest.raises(InvalidInput) as err:
        _spec(preset="llama-3-8b", task="inference", runtime="llama.cpp", quantization="nvfp4")
    assert err.value.field == "workload.quantization"
    assert "q4_0, q4_k_m and q8_0 and for mxfp4, not nvfp4" in str(err.value)


def _serve(**workload: object) -> s.RecommendationResponse:
    from app.catalog.loader import read_gpu_specs as gpus_of
    from app.recommend import service

    request = s.RecommendationRequest.model_validate(
        {
            "workload": {"preset": "gpt-oss-20b", "task": "serving", **workload},
            "objective": "fastest",  # every card, priced or not (no offers loaded here)
            "limit": 200,
        }
    )
    return service.recommend(request, gpus_of(DATA), shipped.load_rules(DATA))


def test_llamacpp_serves_the_mxfp4_release_as_inference_runs_it() -> None:
    load = {"concurrent_requests": 1}
    spec, _ = _spec(preset="gpt-oss-20b", task="serving", runtime="llama.cpp", serving=load)
    assert (spec.quantization, spec.precision) == ("mxfp4", "int4")
    asked = _serve(runtime="llama.cpp", serving=load)
    rows = asked.recommendations
    assert rows and all(r.serving and r.serving.weight_precision == "int4" for r in rows)
    assert all(r.serving and r.serving.weight_format.startswith("MXFP4 (4.25") for r in rows)
    assert all("quality: mxfp4 weights as the model was released" in " ".join(r.warnings)
               for r in rows)  # fmt: skip
    # one replica on one GPU holds the whole file: inference's weight bytes
    inference, _ = _spec(preset="gpt-oss-20b", task="inference", runtime="llama.cpp")
    one = next(r for r in rows if r.num_gpus == 1)
    assert one.memory.breakdown["weights"] == pytest.approx(inference.weight_bytes / 1e9, abs=1e-3)
    # where vLLM does not run (a Tesla P40), the default answer falls back to llama.cpp and
    # reads the release the same way: the same shape, not fp16 weights on two cards
    default = {r.gpu.slug: r for r in _serve(serving=load).recommendations}
    named = {r.gpu.slug: r for r in rows}
    p40, p40_named = default["tesla-p40"], named["tesla-p40"]
    assert p40.serving and p40_named.serving and p40.serving.runtime == "llama.cpp"
    assert (p40.num_gpus, p40.serving.weight_precision) == (1, "int4")
    assert p40.serving.ttft_ms == pytest.approx(p40_named.serving.ttft_ms)
    assert p40.serving.itl_ms == pytest.approx(p40_named.serving.itl_ms)


def _tuning_rows() -> list[dict[str, object]]:
    doc = safe_load(TUNING.read_text(encoding="utf-8"))
    return [r for r in doc["measurements"] if r.get("quantization") == "mxfp4"]


def test_the_app_prices_the_mxfp4_tuning_rows_as_the_benchmark_does(
    accuracy: ModuleType,
) -> None:
    rows = _tuning_rows()
    assert len(rows) >= 2  # the RTX PRO 6000 and RTX 4090 llama-bench tg128 rows
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    rules = shipped.load_rules(DATA)
    for row in rows:
        gpu = gpus[str(row["gpu_slug"])]
        bench = accuracy.heldout_estimate(row, gpu, DATA)[0]
        spec, _ = _spec(
            preset=row["preset"], task="inference", runtime="llama.cpp",
            batch_size=1, seq_len=row["prompt_tokens"], output_tokens=row["output_tokens"],
        )  # fmt: skip
        support = compat.framework_support(gpu, "pytorch", rules)
        est = perf.estimate(gpu, spec, framework="pytorch", backend=str(row["backend"]))
        app = 1e3 / (est.ms_per_token or math.inf)
        assert support.backend == row["backend"]
        assert app == pytest.approx(bench, rel=1e-9), row["gpu_slug"]


def test_mlx_reads_mxfp4_as_llamacpp_does_in_inference_and_serving() -> None:
    # MLX quantizes and multiplies MXFP4 weights itself (mlx.core.quantize mode mxfp4): a Mac
    # serving gpt-oss held its 42 GB of 16-bit weights, where the release is a 13 GB file
    spec, _ = _spec(preset="gpt-oss-20b", task="inference", runtime="mlx")
    assert (spec.quantization, spec.precision) == ("mxfp4", "int4")
    assert load_efficiency(DATA).serving["mlx"].int4_reads == ("mxfp4",)
    apple = {
        r.gpu.slug: r for r in _serve(serving={"concurrent_requests": 1}).recommendations
        if r.gpu.vendor == "apple"
    }  # fmt: skip
    assert apple, "no Apple row"
    for row in apple.values():
        assert row.serving is not None and row.serving.runtime == "mlx"
        assert row.serving.weight_precision == "int4"
        assert row.serving.weight_format.startswith("MXFP4 (4.25")
        assert row.memory.breakdown["weights"] == pytest.approx(spec.weight_bytes / 1e9, abs=1e-3)
