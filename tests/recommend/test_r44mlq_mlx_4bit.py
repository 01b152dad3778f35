"""Issue 23 (r44 mlq): "a 70B on a 64 GB Mac under MLX" can be asked. MLX's own 4-bit is a
weight format (quantization mlx_4bit) that runs on MLX only: named without a runtime it runs
there, named on another runtime it is a 422 on workload.quantization, and q4_0 under MLX (a
GGUF type, still refused) names it. Its quality note says no figure was found, with where."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain import rank
from app.domain.workload import WorkloadSpec
from app.errors import InvalidInput
from app.recommend import quality
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload

DATA = Path(__file__).resolve().parents[2] / "data"


def _resolve(**w: object) -> WorkloadSpec:
    work, _ = resolve_workload(
        s.WorkloadIn.model_validate({"preset": "llama-3.3-70b", "task": "inference", **w}), DATA
    )
    return work


def test_mlx_4bit_resolves_to_mlx_at_int4_and_4_5_bits() -> None:
    for asked in ({"runtime": "mlx"}, {}):
        work = _resolve(quantization="mlx_4bit", **asked)
        assert (work.runtime, work.precision, work.quantization) == ("mlx", "int4", "mlx_4bit")
        assert work.weight_bits == 4.5 and work.own_bits == 4.5
    # the same bytes MLX at int4 already stored
    bare = _resolve(runtime="mlx", precision="int4")
    assert bare.weight_bytes == pytest.approx(_resolve(quantization="mlx_4bit").weight_bytes)


@pytest.mark.parametrize("runtime", ["llama.cpp", "vllm", "transformers", "pytorch"])
def test_mlx_4bit_on_another_runtime_is_a_422_naming_the_field(runtime: str) -> None:
    with pytest.raises(InvalidInput) as e:
        _resolve(runtime=runtime, quantization="mlx_4bit")
    assert e.value.field == "workload.quantization"
    assert "only MLX runs" in str(e.value) and "runtime mlx" in str(e.value)


def test_mlx_4bit_contradicting_precision_is_refused() -> None:
    with pytest.raises(InvalidInput) as e:
        _resolve(runtime="mlx", quantization="mlx_4bit", precision="bf16")
    assert e.value.field == "workload.quantization"


def test_q4_0_under_mlx_is_still_refused_and_names_mlx_4bit() -> None:
    with pytest.raises(InvalidInput) as e:
        _resolve(runtime="mlx", quantization="q4_0")
    assert e.value.field == "workload.quantization"
    assert "quantization mlx_4bit" in str(e.value)


def test_serving_takes_mlx_4bit_on_mlx_only() -> None:
    assert quality.serving_formats("mlx")["mlx_4bit"] == "int4"
    assert "mlx_4bit" not in quality.serving_formats(None)
    load = {"concurrent_requests": 4}
    work = _resolve(task="serving", runtime="mlx", quantization="mlx_4bit", serving=load)
    assert work.precision == "int4"
    with pytest.raises(InvalidInput) as e:
        _resolve(task="serving", quantization="mlx_4bit", serving=load)
    assert e.value.field == "workload.quantization" and "only MLX runs" in str(e.value)


def test_the_quality_note_names_the_format_and_says_no_figure_was_found() -> None:
    named = quality.cost_note("int4", "mlx_4bit")
    bare = quality.cost_note("int4", quality.runtime_format("mlx", "int4"))
    assert named == bare and named is not None
    assert named.startswith("quality: MLX 4-bit (affine, group 64, 4.5 bits per weight) weights")
    assert "no published" in named and "source's own model" not in named
    assert "mlx_lm/LEARNED_QUANTS.md" in named
    # int4 elsewhere keeps the W4A16 figure
    assert "W4A16" in (quality.cost_note("int4", quality.runtime_format("vllm", "int4")) or "")


def test_every_entry_without_a_figure_begins_as_the_tip_reads_it() -> None:
    unmeasured = quality._unmeasured(DATA)
    assert "mlx_4bit" in unmeasured
    for fmt in unmeasured:
        assert (quality.known_cost(fmt, DATA) or "").startswith(rank.NO_FIGURE)
