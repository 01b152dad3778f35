"""A serving plan sizes vLLM's sampler reserve for the --max-num-seqs it deploys, and a card that
holds the model only beyond the request's max_gpus is said to need more GPUs (rev1 review,
items 1 and 2)."""

from __future__ import annotations

import dataclasses

from app.domain import efficiency, serving_step
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain.workload import ModelSpec, ServingSpec, WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, RULES

TABLE = load_efficiency()
# Llama 3.3 70B: 72.7 GB of fp8 weights leave an H100 ~4 GB beside vLLM's 5.1 GB sampler
# peak at its default 1,024 sequences (issue #21, llm-d's log: no room for the cache)
LLAMA70 = ModelSpec(
    family="decoder", params=70.6e9, layers=80, hidden_size=8192, num_heads=64, num_kv_heads=8,
    intermediate_size=28672, vocab_size=128256, max_context=131072,
)  # fmt: skip
LOAD = sv.ServingLoad(1000, 300, concurrent_requests=4)


def _vllm() -> sv.RuntimeProfile:
    decode = TABLE.profile(H100, "cuda", "vllm", "fp8", "decode")
    prefill = TABLE.profile(H100, "cuda", "vllm", "fp8", "prefill")
    return sv.runtime_profile(TABLE, "vllm", decode, prefill)


def _held(rt: sv.RuntimeProfile, rows: int, cfg: sv.ServingConfig) -> int:
    """What the pool holds when vLLM profiles ``rows`` sampler rows (max_num_seqs)."""
    at = dataclasses.replace(rt.on(H100), max_batch=rows, large_gpu=None)
    return sv.evaluate(H100, LLAMA70, cfg, LOAD, runtime=at).max_concurrency


def test_the_plan_reserves_the_sampler_for_the_max_num_seqs_it_deploys() -> None:
    cfg = sv.ServingConfig(1, 1, "fp8", "bf16", "vllm")
    rt = _vllm()
    # at vLLM's defaults the sampler's 1,024 rows leave no room: the refusal names the flag
    at_default = sv.evaluate(H100, LLAMA70, cfg, LOAD, runtime=rt)
    assert not at_default.fits and "--max-num-seqs" in (at_default.reason or "")
    planned = sv.planned_runtime(H100, LLAMA70, cfg, LOAD, rt)
    rows = planned.on(H100).max_batch
    res = sv.evaluate(H100, LLAMA70, cfg, LOAD, runtime=planned)
    assert res.fits
    # the pool at that reserve holds every row the plan runs, and one row more would not fit
    assert res.max_concurrency == rows >= 4
    assert _held(rt, rows + 1, cfg) < rows + 1
    # the reserve is the sampler's over those rows (38.9 B a logit), not over 1,024
    peak = efficiency.profiling_peak_gb(rt.profile_bytes_per_logit, rows, LLAMA70.vocab_size)
    assert res.reserve_gb_per_gpu == peak < at_default.activations_gb_per_gpu / 50
    assert res.activations_gb_per_gpu >= peak


def test_a_pool_that_holds_the_default_keeps_it() -> None:
    # two GPUs leave room for far fewer than 1,024 requests of 1,300 tokens (KV ~0.43 GB each)
    two = sv.ServingConfig(2, 1, "fp8", "bf16", "vllm")
    planned = sv.planned_runtime(H100, LLAMA70, two, LOAD, _vllm())
    assert 4 < planned.on(H100).max_batch < 1024
    # a short request on a model whose pool holds the default sequences keeps vLLM's default
    small = dataclasses.replace(LLAMA70, params=1e9, layers=16, hidden_size=2048, num_kv_heads=8)
    tiny = sv.ServingLoad(64, 16, concurrent_requests=4)
    one = sv.ServingConfig(1, 1, "bf16", "bf16", "vllm")
    keeps = sv.planned_runtime(H100, small, one, tiny, _vllm())
    assert keeps.on(H100).max_batch == _vllm().on(H100).max_batch == 1024


def _context(model: ModelSpec, **limits: object) -> ev.Context:
    work = WorkloadSpec(
        task="serving",
        model=model,
        runtime="vllm",
        efficiency=TABLE,
        serving=ServingSpec(1000, 300, concurrent_requests=4, ttft_ms_target=3.6e6,
                            itl_ms_target=3.6e6),
        precision="fp8",
        quantization="fp8",
    )  # fmt: skip
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(**limits))  # type: ignore[arg-type]


def test_the_served_row_deploys_the_max_num_seqs_its_memory_plan_reserved_for() -> None:
    ctx = _context(LLAMA70, exact_gpus=1)
    planned = ev.plan(H100, ctx)
    assert not isinstance(planned, ev.Exclusion)  # one H100 plans it at fewer sequences
    r = ev.evaluate(planned[0], ctx)
    assert r.serving is not None and r.serving.result.fits
    rows = r.serving.runtime.on(H100).max_batch
    # the row's capacity (the deploy's --max-num-seqs) is the rows its reserve was sized for
    assert r.serving.result.max_concurrency == rows < 1024
    peak = efficiency.profiling_peak_gb(
        r.serving.runtime.profile_bytes_per_logit, rows, LLAMA70.vocab_size
    )
    assert r.serving.result.reserve_gb_per_gpu == peak


LLAMA_405B = dataclasses.replace(
    LLAMA70, params=405.9e9, layers=126, hidden_size=16384, num_heads=128,
    intermediate_size=53248,
)  # fmt: skip


def test_a_card_the_max_gpus_alone_leaves_out_is_told_to_raise_it() -> None:
    # 405B in bf16 (~810 GB) on H100s: no server of 8 holds it, two do (TP8 × PP2)
    work = dataclasses.replace(_context(LLAMA_405B).work, precision="bf16", quantization="bf16")
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits(max_gpus=8))
    refused = ev.plan(H100, ctx)
    assert isinstance(refused, ev.Exclusion)
    assert refused.code == "filtered_out"
    assert refused.reason.startswith("needs 16 GPUs per replica (tensor parallel 8 in each of 2")
    assert "raise constraints.max_gpus to 16" in refused.reason
    # the memory miss within the limit follows
    assert "within 8 GPUs: weights take" in refused.reason
    assert serving_step.more_gpus(ctx) == {H100.slug: 16}
    # and it is true: with 16 allowed the card plans it
    wide = ev.Context(work=work, rules=RULES, limits=ev.Limits(max_gpus=16))
    assert not isinstance(ev.plan(H100, wide), ev.Exclusion)


def test_an_exact_gpu_count_keeps_the_memory_reason() -> None:
    # constraints.num_gpus fixes the count: that count is the miss, not max_gpus
    work = dataclasses.replace(_context(LLAMA_405B).work, precision="bf16", quantization="bf16")
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=8))
    refused = ev.plan(H100, ctx)
    assert isinstance(refused, ev.Exclusion) and refused.code == "does_not_fit"
    assert "max_gpus" not in refused.reason


def _at(rt: sv.RuntimeProfile, rows: int) -> sv.RuntimeProfile:
    return dataclasses.replace(rt.on(H100), max_batch=rows, large_gpu=None)


def test_the_planned_max_num_seqs_is_the_largest_the_pool_holds_by_exhaustive_search() -> None:
    # the search narrows a bracket by interpolation; a row-by-row scan must find the same rows
    rt = _vllm()
    small = dataclasses.replace(LLAMA70, params=8e9, layers=32, hidden_size=4096)
    shapes = [
        (LLAMA70, sv.ServingConfig(1, 1, "fp8", "bf16", "vllm"), LOAD),
        (LLAMA70, sv.ServingConfig(1, 1, "fp8", "fp8", "vllm"), sv.ServingLoad(4000, 1000, 8)),
        (LLAMA70, sv.ServingConfig(2, 1, "fp8", "bf16", "vllm"), sv.ServingLoad(30000, 2000, 8)),
        (small, sv.ServingConfig(1, 1, "bf16", "bf16", "vllm"), sv.ServingLoad(60000, 4000, 8)),
    ]
    for model, cfg, load in shapes:
        planned = sv.planned_runtime(H100, model, cfg, load, rt).on(H100).max_batch

        held = [
            sv.evaluate(H100, model, cfg, load, runtime=_at(rt, rows)).max_concurrency
            for rows in range(1, 1025)
        ]
        scanned = max((r for r in range(1, 1025) if held[r - 1] >= r), default=None)
        assert scanned is not None and planned == scanned, (cfg, load, planned, scanned)
    # and the shapes above exercise the search, not only its two early answers
    assert any(
        1 < sv.planned_runtime(H100, m, c, ld, rt).on(H100).max_batch < 1024 for m, c, ld in shapes
    )
