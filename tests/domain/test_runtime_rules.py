"""Where each runtime runs is data (data/frameworks.yaml `runtime:<name>` rules), read alike by
inference (evaluate._runtime_gate) and serving (serving_step.runtime_for) through
compat.runtime_status (issue #21: it was code in serving, a `RUNTIME_BACKENDS` table, and rules
in inference, so inference ranked MLX on a Radeon and TensorRT on an Arc B580)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat, serving_step
from app.domain.evaluate import _runtime_gate
from app.domain.gpu import GpuSpec
from app.shipped.rules import load_efficiency, load_rules
from tests.domain.fixtures import LLAMA2_7B

DATA = Path(__file__).resolve().parents[2] / "data"
RULES = load_rules(DATA)
GPUS = read_gpu_specs(DATA)
# Runtimes that run on some vendors' GPUs or backends only; PyTorch eager, Transformers and the
# frameworks' own compilers run wherever their framework does (no runtime rule needed)
RESTRICTED = (
    "vllm", "sglang", "tensorrt-llm", "tensorrt", "onnxruntime", "llama.cpp", "mlx", "megatron",
)  # fmt: skip


def _backend(gpu: GpuSpec) -> str | None:
    return compat.framework_support(gpu, "pytorch", RULES).backend


@pytest.mark.parametrize("runtime", RESTRICTED)
def test_every_catalog_vendor_is_named_by_a_rule_for_each_restricted_runtime(runtime: str) -> None:
    vendors = {g.vendor for g in GPUS}
    named = {r.vendor for r in RULES.features if r.feature == f"runtime:{runtime}"}
    assert None in named or vendors <= named, (runtime, vendors - named)


def test_runtimes_run_only_where_their_rules_say() -> None:
    by = {g.slug: g for g in GPUS}
    off = [
        ("mlx", "rx-7900-xtx"), ("mlx", "arc-b580"), ("tensorrt", "arc-b580"),
        ("tensorrt", "rx-7900-xtx"), ("tensorrt", "apple-m2-ultra"), ("vllm", "apple-m2-ultra"),
        ("tensorrt-llm", "mi300x"), ("onnxruntime", "gaudi3"), ("sglang", "gaudi3"),
        # mlx[cuda] needs SM 7.5: a V100 (7.0) or P40 (6.1) does not run it
        ("mlx", "v100-sxm2-32gb"), ("mlx", "tesla-p40"),
    ]  # fmt: skip
    for runtime, slug in off:
        st = compat.runtime_status(by[slug], runtime, RULES, _backend(by[slug]))
        assert st is not None and st.status == "unsupported", (runtime, slug)
    on = [("mlx", "apple-m2-ultra"), ("tensorrt", "rtx-4090"), ("vllm", "rtx-4090")]
    for runtime, slug in on:
        st = compat.runtime_status(by[slug], runtime, RULES, _backend(by[slug]))
        assert st is not None and st.status == "supported", (runtime, slug)
    for slug in ("t4", "rtx-4090"):  # SM 7.5 and on: mlx[cuda], experimental
        st = compat.runtime_status(by[slug], "mlx", RULES, _backend(by[slug]))
        assert st is not None and st.status == "experimental", slug
    # a part the catalog lists no compute capability for is not taken as lacking a runtime
    unlisted = dataclasses.replace(by["rtx-4090"], compute_capability=None)
    assert compat.runtime_status(unlisted, "vllm", RULES, "cuda") is None
    # which no other vendor's part is: a Gaudi, with none listed, still lacks SGLang
    assert by["gaudi3"].compute_capability is None


def test_inference_and_serving_agree_on_where_each_serving_runtime_runs() -> None:
    from app.domain import evaluate as ev
    from app.domain.workload import ServingSpec, WorkloadSpec

    table = load_efficiency(DATA)
    for runtime in table.serving:
        work = WorkloadSpec(
            task="serving", model=LLAMA2_7B, precision="bf16", batch_size=1, seq_len=512,
            output_tokens=128, runtime=runtime, runtime_given=True, efficiency=table,
            serving=ServingSpec(concurrent_requests=1, prompt_tokens=512, output_tokens=128),
        )  # fmt: skip
        ctx = ev.Context(work=work, rules=RULES, framework="pytorch")
        for gpu in GPUS:
            backend = _backend(gpu)
            if backend is None:
                continue
            served, _ = serving_step.runtime_for(gpu, backend, work, RULES)
            gate = _runtime_gate(gpu, runtime, ctx, backend)
            refused = gate is not None and gate[0] is not None
            assert (served is None) == refused, (runtime, gpu.slug)
