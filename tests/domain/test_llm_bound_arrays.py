"""The LLM throughput bound over the catalog as arrays (perf.llm_throughput_bounds,
llm_step.Columns) is the scalar bound and step, to the last bit, for every catalog GPU."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.domain.compat import _default_backends
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
COUNTS = (1, 2, 4, 8)


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


def _job(preset: str, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="inference",
        model=load_presets(DATA)[preset].model,
        precision="bf16",
        batch_size=4,
        seq_len=2048,
        output_tokens=256,
        efficiency=load_efficiency(DATA),
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


# eager (host-bound decode), Transformers' layer split, tensor parallel under CUDA graphs,
# llama.cpp's micro-batched layer split with its own weight bits, fp8 and 4-bit formats, a
# routed MoE, latent attention, a one-token prompt
JOBS = {
    "llama-3-8b pytorch bf16": lambda: _job("llama-3-8b", runtime="pytorch"),
    "llama-3-8b transformers batch 1": lambda: _job(
        "llama-3-8b", runtime="transformers", batch_size=1
    ),
    # generate() on an old stack: PyTorch 2.1's 16-bit cat, eager attention's repeat_kv (GQA)
    "llama-3-8b transformers batch 32 torch 2.1 repeat_kv": lambda: _job(
        "llama-3-8b", runtime="transformers", batch_size=32, torch_version="2.1.1", kv_repeat=True
    ),
    "llama-3-8b transformers gptq torch 2.1 repeat_kv": lambda: _job(
        "llama-3-8b",
        runtime="transformers",
        precision="int4",
        quantization="gptq",
        weight_bits=load_efficiency(DATA).bits_per_weight["gptq"],
        torch_version="2.1.0",
        kv_repeat=True,
    ),
    "llama-3-70b vllm fp8": lambda: _job("llama-3-70b", runtime="vllm", precision="fp8"),
    "llama-3-70b llama.cpp q4_k_m": lambda: _job(
        "llama-3-70b", runtime="llama.cpp", precision="int4", weight_bits=4.84, seq_len=512
    ),
    "llama-3-70b llama.cpp q4_k_m cublas prompt": lambda: _job(
        "llama-3-70b",
        runtime="llama.cpp",
        precision="int4",
        weight_bits=4.84,
        seq_len=512,
        prompt_gemm="cublas",
    ),
    "llama-3-8b tensorrt-llm fp4 prompt": lambda: _job(
        "llama-3-8b", runtime="tensorrt-llm", precision="fp4", batch_size=16
    ),
    # TensorRT-LLM v0.9's masked MHA decode attention (XQA off) on the CUDA cores: GQA, dense
    # and routed
    "llama-3-8b tensorrt-llm fp8 masked mha": lambda: _job(
        "llama-3-8b", runtime="tensorrt-llm", precision="fp8", batch_size=64, mmha=True
    ),
    "mixtral tensorrt-llm fp8 masked mha": lambda: _job(
        "mixtral-8x7b", runtime="tensorrt-llm", precision="fp8", batch_size=64, mmha=True
    ),
    "mixtral vllm int4 batch 32": lambda: _job(
        "mixtral-8x7b", runtime="vllm", precision="int4", batch_size=32
    ),
    "deepseek-r1 sglang fp8": lambda: _job(
        "deepseek-r1", runtime="sglang", precision="fp8", seq_len=1, output_tokens=1
    ),
}


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_the_array_bound_is_the_scalar_bound_for_every_catalog_gpu(
    catalog: list[GpuSpec], job: str
) -> None:
    work = JOBS[job]()
    cards = [
        (gpu, work, n, backend)
        for gpu in catalog
        for backend in _default_backends(gpu)[:1] or ("cpu",)
        for n in COUNTS
    ]
    got = perf.llm_throughput_bounds(cards)
    want = [perf.llm_throughput_bound(gpu, w, num_gpus=n, backend=b) for gpu, w, n, b in cards]
    assert got == want  # exact: the same numbers, inf where the scalar bound is inf
    assert any(t != float("inf") for t in got)


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_the_array_estimates_are_the_scalar_estimates_for_every_catalog_gpu(
    catalog: list[GpuSpec], job: str
) -> None:
    """perf.llm_estimates (the steps as columns, with the links between the GPUs, and the
    one-GPU times the scaling efficiencies divide by) against perf.estimate one by one: every
    field, to the last bit, on one node and over two; again once the job keeps its one-GPU
    times, and for two jobs in one call."""
    work, other = JOBS[job](), dataclasses.replace(JOBS[job](), batch_size=3, output_tokens=40)
    cards = [
        (gpu, w, n, backend)
        for gpu in catalog
        for backend in _default_backends(gpu)[:1] or ("cpu",)
        for n in (*COUNTS, 16)
        for w in (work, other)
    ]
    fresh = {
        id(work): JOBS[job](),
        id(other): dataclasses.replace(JOBS[job](), batch_size=3, output_tokens=40),
    }
    want = [perf.estimate(g, fresh[id(w)], num_gpus=n, backend=b) for g, w, n, b in cards]
    assert perf.llm_estimates(cards) == want
    assert perf.llm_estimates(cards[::-1]) == want[::-1]  # the one-GPU times kept
    assert any(e.comm_s > 0 for e in want) and any(e.throughput > 0 for e in want)


def test_the_array_step_is_the_scalar_step_with_links_and_a_server(catalog: list[GpuSpec]) -> None:
    """``Columns.seconds`` against ``Replica.parts`` on replicas the bound never builds:
    links between the GPUs, a server's fixed and per-sequence costs, mixed steps and their
    eager dispatch, prompt and decode attention as two kernels in turn (every other count)."""
    work = _job("mixtral-8x7b", runtime="vllm")
    reps = []
    for gpu in catalog[::3]:
        eff = perf.efficiencies(gpu, None)
        for n in COUNTS:
            rep = perf.llm_replica(gpu, work, n, eff, "cuda")
            reps.append(
                dataclasses.replace(
                    rep,
                    scheduler_s=4e-3,
                    host_per_seq_s=2e-5,
                    mixed_host_s=3e-3 * (n % 2),
                    split_attention=float(n in (2, 8)),
                )
            )
    reps = [r for r in reps if r.flops > 0 and r.attn_flops > 0]
    cols = llm_step.columns(reps)
    for step in [
        (0.0, 0.0, 8192.0, 2048.0),
        (64.0, 1500.0, 0.0, 2048.0),
        (32.0, 900.0, 512.0, 256.0),
    ]:
        assert cols.seconds(*step).tolist() == [r.parts(*step).seconds for r in reps], step


def test_the_array_bound_refuses_jobs_of_different_shapes(catalog: list[GpuSpec]) -> None:
    a = JOBS["llama-3-8b pytorch bf16"]()
    b = dataclasses.replace(a, batch_size=8)
    with pytest.raises(ValueError, match="differ"):
        perf.llm_throughput_bounds([(catalog[0], a, 1, "cuda"), (catalog[0], b, 1, "cuda")])


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_replicas_from_kept_terms_equal_replicas_built_afresh(
    catalog: list[GpuSpec], job: str
) -> None:
    """perf keeps a job's GPU-independent terms on its spec and a GPU's card terms on the GPU's
    spec (llm_step.ReplicaJob, CardTerms); a replica from them is the one built from nothing."""
    work = JOBS[job]()
    for gpu in catalog:
        backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
        eff = perf.efficiencies(gpu, None)
        for n in COUNTS:
            for links in (True, False):
                kept = perf.llm_replica(gpu, work, n, eff, backend, links=links)
                fresh = llm_step.replica(
                    gpu,
                    work.model,
                    weights=work.precision,
                    kv="bf16",
                    n=n,
                    decode=perf.profile_for(gpu, work, backend, "decode"),
                    prefill=perf.prefill_profile(gpu, work, backend),
                    memory_efficiency=eff.memory,
                    compute_efficiency=perf.llm_efficiency(eff),
                    own_bits=work.own_bits,
                    format_bits=work.format_bits,
                    links=links,
                    torch_version=work.torch_version,
                    kv_repeat=work.kv_repeat,
                    quantization=work.quantization,
                    mmha=work.mmha,
                )
                assert kept == fresh


def test_a_gpus_kept_terms_follow_a_new_efficiency_table(catalog: list[GpuSpec]) -> None:
    gpu = next(g for g in catalog if g.slug.startswith("h100"))
    work = JOBS["llama-3-8b pytorch bf16"]()
    before = perf.llm_throughput_bound(gpu, work, backend="cuda")
    table = work.efficiency
    assert table is not None
    slower = dataclasses.replace(
        table,
        rows=(
            *table.rows,
            dataclasses.replace(
                table.rows[0], match={"runtime": "pytorch"}, values={"memory": 0.3}
            ),
        ),
    )
    after = perf.llm_throughput_bound(
        gpu, dataclasses.replace(work, efficiency=slower), backend="cuda"
    )
    assert after < before
    assert perf.llm_throughput_bound(gpu, work, backend="cuda") == before
