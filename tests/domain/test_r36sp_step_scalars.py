"""A set of LLM replicas stepped at once from the cards' terms (llm_step.dense_columns) keeps
the job's own terms (its bytes and FLOPs per token, layers, attention widths, the zero server
costs) as one float each, and a step where no row splits its tokens into micro-batches takes
the step's tokens as floats (one pass, ``passes`` 1.0): every array operation broadcasts them,
the same IEEE operation on each element. Its steps are each replica's own
(``Replica.parts`` of perf.llm_replica, in Python floats), to the last bit, over every catalog GPU at one
to sixteen GPUs: a tensor-parallel runtime, llama.cpp's layer split (micro-batched prompts,
4-bit weights dequantised for a long prompt's GEMMs) and Transformers before 4.45 (the LM head
over every prompt token)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.domain.compat import _default_backends
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from tests.domain.test_llm_bound_arrays import _job

DATA = Path(__file__).resolve().parents[2] / "data"
COUNTS = (1, 2, 4, 8, 16)
# a prompt, a decode step, a one-token step, a mixed step (decode, context, prefill, prompt)
STEPS = (
    (0.0, 0.0, 8192.0, 2048.0),
    (4.0, 2176.0, 0.0, 2048.0),
    (1.0, 1.0, 0.0, 1.0),
    (4.0, 600.0, 512.0, 512.0),
)


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


def _old_transformers() -> WorkloadSpec:
    work = _job("llama-3-8b", runtime="transformers", batch_size=2)
    # a stated release before 4.45: the LM head runs over every prompt token
    work.derived[("llm",)] = dataclasses.replace(perf.llm_job(work), runtime_release="4.40.0")
    return work


JOBS = {
    "llama-3-8b vllm": lambda: _job("llama-3-8b", runtime="vllm"),
    # cuBLAS for the prompt's GEMMs: a long prompt's pass dequantises the 4-bit weights
    "llama-3-70b llama.cpp q4_k_m cublas": lambda: _job(
        "llama-3-70b",
        runtime="llama.cpp",
        precision="int4",
        weight_bits=4.84,
        seq_len=2048,
        prompt_gemm="cublas",
    ),
    "llama-3-8b transformers 4.40": _old_transformers,
}


def _sets(
    work: WorkloadSpec, catalog: list[GpuSpec]
) -> tuple[llm_step.Columns, list[llm_step.Replica]]:
    """The catalog at every count as dense_columns makes it (with links), and its replicas."""
    terms: list[llm_step.CardTerms] = []
    card: list[int] = []
    counts: list[float] = []
    gpus: list[GpuSpec] = []
    reps: list[llm_step.Replica] = []
    for gpu in catalog:
        backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
        eff = perf.efficiencies(gpu, None)
        t = perf.llm_card(gpu, work, eff, backend)
        if t.flops <= 0 or t.attn_flops <= 0:
            continue
        for n in COUNTS:
            card.append(len(terms))
            counts.append(float(n))
            gpus.append(gpu)
            reps.append(perf.llm_replica(gpu, work, n, eff, backend))
        terms.append(t)
    dense = llm_step.dense_columns(
        perf.llm_job(work),
        llm_step.card_rows(terms),
        np.array(card, np.intp),
        np.array(counts, np.float64),
        gpus=gpus,
    )
    return dense, reps


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_a_dense_sets_steps_are_its_replicas_steps(catalog: list[GpuSpec], job: str) -> None:
    work = JOBS[job]()
    dense, reps = _sets(work, catalog)
    assert isinstance(dense.layers, float) and isinstance(dense.head_flops, float)
    assert len(reps) > 300
    for step in STEPS:
        cols = dense.parts(*step)._asdict()
        got = {k: v.tolist() for k, v in cols.items()}
        for i, rep in enumerate(reps):
            want = rep.parts(*step)  # one replica, in Python floats
            assert {k: got[k][i] for k in cols} == {k: getattr(want, k) for k in cols}, step


def test_the_sets_cover_splits_dequantising_and_every_prompt_logit(
    catalog: list[GpuSpec],
) -> None:
    """What the scalar shortcuts skip is there to be skipped: the vLLM set splits no step; the
    llama.cpp set micro-batches its prompt on a layer split and dequantises 4-bit weights; the
    old Transformers set runs the LM head over every prompt token."""
    vllm, _ = _sets(JOBS["llama-3-8b vllm"](), catalog)
    assert all(vllm._step(*s).passes == 1.0 for s in STEPS)
    assert isinstance(vllm._step(*STEPS[0]).passes, float)
    cpp, _ = _sets(JOBS["llama-3-70b llama.cpp q4_k_m cublas"](), catalog)
    prompt = cpp._step(*STEPS[0])
    assert isinstance(prompt.passes, np.ndarray) and float(prompt.passes.max()) > 1.0
    assert cpp.dequant_s.any() and np.any(np.asarray(prompt.t_deq) > 0.0)
    old, _ = _sets(_old_transformers(), catalog)
    assert old.prompt_logits.all()
