"""Rules an AMD, Intel or Apple user reads: vLLM's 4-bit weights on ROCm (one rule, read as
experimental: the ROCm platform loads AWQ and GPTQ while vLLM's table says no), bf16 on Apple
GPUs (macOS 14, emulated on M1/M2 and priced no faster than fp32), and mlx_lm.server's
batching (BatchGenerator, --decode-concurrency 32)."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.efficiency import resolve
from app.shipped.rules import load_efficiency, load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
RULES = load_rules(DATA)
BY = {g.slug: g for g in read_gpu_specs(DATA)}


def test_vllm_awq_gptq_on_rocm_is_one_experimental_rule_that_names_its_source() -> None:
    # it was "unsupported" (the docs table) while the ROCm platform lists awq and gptq
    for slug in ("mi210", "mi300x", "rx-7900-xtx"):
        st = compat.weights_status(BY[slug], "vllm", "int4", RULES, "rocm")
        assert st is not None and st.status == "experimental", slug
        assert st.note is not None and "Triton AWQ" in st.note
    # Gaudi keeps vLLM's word (no AWQ/GPTQ there); Intel GPUs run them; no rule, no answer
    gaudi = compat.weights_status(BY["gaudi3"], "vllm", "int4", RULES, "hpu")
    assert gaudi is not None and gaudi.status == "unsupported"
    arc = compat.weights_status(BY["arc-b580"], "vllm", "int4", RULES, "xpu")
    assert arc is not None and arc.status == "supported"
    assert compat.weights_status(BY["mi210"], None, "int4", RULES, "rocm") is None
    assert compat.weights_status(BY["mi210"], "sglang", "int4", RULES, "rocm") is None


def test_bf16_on_apple_gpus_runs_with_the_macos_14_caveat() -> None:
    for slug in ("apple-m1-max", "apple-m2-max", "apple-m3-max"):
        resolved, warning = compat.resolve_precision(BY[slug], "bf16", RULES, "mps")
        assert resolved == "bf16", slug
        assert warning is not None and "macOS 14" in warning and "M1/M2" in warning
    # a supported precision says nothing; fp16 on Apple has no caveat
    assert compat.resolve_precision(BY["apple-m1-max"], "fp16", RULES, "mps") == ("fp16", None)
    assert compat.resolve_precision(BY["h100-sxm"], "bf16", RULES, "cuda") == ("bf16", None)


def test_m1_and_m2_price_bf16_element_wise_passes_at_fp32_bytes_m3_keeps_eager() -> None:
    table = load_efficiency(DATA)
    eager = resolve(table, BY["apple-m1-max"], "mps", "pytorch", "fp32", "train").memory
    for slug in ("apple-m1-max", "apple-m2-max"):
        bf16 = resolve(table, BY[slug], "mps", "pytorch", "bf16", "train")
        assert bf16.memory == eager / 2, slug
        assert "hf-mps-bf16-emulated" in bf16.sources
    m3 = resolve(table, BY["apple-m3-max"], "mps", "pytorch", "bf16", "train")
    assert m3.memory == eager
    fp16 = resolve(table, BY["apple-m1-max"], "mps", "pytorch", "fp16", "train")
    assert fp16.memory == eager


def test_mlx_lm_server_batches_concurrent_requests() -> None:
    spec = load_efficiency(DATA).serving["mlx"]
    # mlx_lm/server.py: BatchGenerator, --decode-concurrency 32, --prefill-step-size 2048
    assert spec.continuous_batching and spec.max_batch == 32 and spec.chunk_tokens == 2048
