"""llama-server allocates the KV cache of the whole -c it is started with when its context is
created (llama.cpp src/llama-context.cpp: n_ctx over the -np slots; src/llama-model.cpp
create_memory: kv_size n_ctx_seq × n_stream), however few requests run. A serving row on
llama.cpp counts and checks that cache, at the context its deploy command gives each slot
(serving.deploy_context), not the running requests' own prompt + output."""

from __future__ import annotations

import pytest

from app.domain import serving as sv
from app.domain import serving_step
from app.domain.workload import ModelSpec, ServingSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100

TABLE = load_efficiency()
LLAMA70 = ModelSpec(
    family="decoder", params=70.6e9, layers=80, hidden_size=8192, num_heads=64, num_kv_heads=8,
    intermediate_size=28672, vocab_size=128256, max_context=131072,
)  # fmt: skip
KV_PER_TOKEN = 2 * 80 * 8 * 128 * 2  # K and V, 80 layers, 8 KV heads of 128, 16-bit: bytes


def _rt(name: str) -> sv.RuntimeProfile:
    return sv.runtime_profile(TABLE, name, TABLE.profile(H100, "cuda", name, "int4", "decode"))


def test_only_llamacpp_allocates_its_slots_at_startup() -> None:
    assert _rt("llama.cpp").kv_at_start
    for name in ("vllm", "sglang", "mlx"):
        assert not sv.runtime_profile(TABLE, name).kv_at_start


def test_deploy_context_is_twice_the_mean_or_mean_plus_spread() -> None:
    assert sv.deploy_context(1000, 300) == 2600
    assert sv.deploy_context(1000, 300, spread=500) == 1800
    assert sv.deploy_context(1000, 300, max_context=2048) == 2048
    # a load whose stated lengths fit the native context is held to it (no RoPE scaling)
    assert sv.deploy_context(20000, 1000, max_context=131072, native=32768) == 32768


def test_the_load_carries_the_deployed_context() -> None:
    spec = ServingSpec(prompt_tokens=1000, output_tokens=300, concurrent_requests=1.0)
    assert serving_step.load_of(spec).slot_tokens == 0
    planned = ServingSpec(
        prompt_tokens=1000, output_tokens=300, concurrent_requests=1.0, context_tokens=2600
    )
    assert serving_step.load_of(planned).slot_tokens == 2600


@pytest.mark.parametrize("running", [1.0, 4.0])
def test_llamacpp_row_counts_every_slot_at_the_deployed_context(running: float) -> None:
    """One request or four, the memory is -np slots × the -c per slot it deploys: 4 × 2,600
    tokens of Llama 3.3 70B's 16-bit cache, 3.41 GB (it had counted the running requests at
    1,300 tokens each: 1.70 GB at four, 0.43 GB at one)."""
    rt = _rt("llama.cpp")
    cfg = sv.ServingConfig(1, 1, "int4", "bf16", "llama.cpp")
    load = sv.ServingLoad(1000, 300, concurrent_requests=running, slot_tokens=2600)
    r = sv.evaluate(H100, LLAMA70, cfg, load, runtime=rt)
    assert r.fits and r.max_concurrency == 4  # llama-server's -np 4
    assert r.kv_gb_per_request == pytest.approx(2600 * KV_PER_TOKEN / 1e9)
    assert r.kv_gb_per_gpu(r.running(running, None)) == pytest.approx(4 * 2600 * KV_PER_TOKEN / 1e9)
    assert r.used_gb_per_gpu(running) == pytest.approx(
        r.weights_gb_per_gpu
        + r.activations_gb_per_gpu
        + r.framework_gb_per_gpu
        + 4 * 2600 * KV_PER_TOKEN / 1e9
    )


def test_slots_that_do_not_fit_at_the_deployed_context_are_not_deployed() -> None:
    """The fit check reads the same cache: a pool that holds 4 slots of the request's own 1,300
    tokens but not of the 2,600 the command asks for runs fewer slots."""
    rt = _rt("llama.cpp")
    cfg = sv.ServingConfig(1, 1, "int4", "bf16", "llama.cpp")
    own = sv.ServingLoad(1000, 300, concurrent_requests=4.0)
    _w, _a, _f, pool, _kv, _cap, _h, _full = sv._capacity(H100, LLAMA70, cfg, rt, 100.0, own)
    # a usable memory whose pool holds 5 requests at 1,300 tokens, 2 at 2,600
    usable = 100.0 - pool + 5.5 * 1300 * KV_PER_TOKEN / 1e9
    at_own = sv._capacity(H100, LLAMA70, cfg, rt, usable, own)[5]
    deployed = sv.ServingLoad(1000, 300, concurrent_requests=4.0, slot_tokens=2600)
    at_deployed = sv._capacity(H100, LLAMA70, cfg, rt, usable, deployed)[5]
    assert (at_own, at_deployed) == (4, 2)


def test_a_pool_runtime_still_counts_the_running_requests() -> None:
    rt = _rt("vllm")
    cfg = sv.ServingConfig(1, 1, "bf16", "bf16", "vllm")
    load = sv.ServingLoad(1000, 300, concurrent_requests=1.0, slot_tokens=2600)
    small = ModelSpec(
        family="decoder", params=8.0e9, layers=32, hidden_size=4096, num_heads=32,
        num_kv_heads=8, intermediate_size=14336, vocab_size=128256, max_context=131072,
    )  # fmt: skip
    r = sv.evaluate(H100, small, cfg, load, runtime=rt)
    assert r.kv_gb_per_gpu(1.0) == pytest.approx(r.kv_held_gb)
