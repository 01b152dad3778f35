"""A one-GPU LLM inference estimate made from one row of steps taken as columns
(perf.llm_one_gpu_estimate: ``_llm_perf`` of the row, for the rows a request walks, where
llm_totals.totals had worked out every row stepped) is ``perf.estimate`` of that card on one
GPU, to the last bit: on every catalog GPU with a peak to run both phases at, for jobs whose
steps differ in what bounds them (an eager loop, a layer split, CUDA graphs, 4-bit weights)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.domain.compat import _default_backends
from app.domain.gpu import GpuSpec
from tests.domain.test_llm_bound_arrays import _job

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


def _same(a: perf.PerfEstimate, b: perf.PerfEstimate) -> bool:
    """Every field equal, NaN to NaN (repr of a float is exact: the shortest that reads back)."""
    return repr(dataclasses.astuple(a)) == repr(dataclasses.astuple(b))


JOBS = {
    "llama-3-8b vllm batch 1": lambda: _job("llama-3-8b", runtime="vllm", batch_size=1),
    "llama-3-8b pytorch": lambda: _job("llama-3-8b", runtime="pytorch"),
    "llama-3-8b transformers batch 32": lambda: _job(
        "llama-3-8b", runtime="transformers", batch_size=32, seq_len=512
    ),
    "mistral-7b llama.cpp q4_k_m": lambda: _job(
        "mistral-7b", runtime="llama.cpp", precision="int4", weight_bits=4.84, seq_len=1024
    ),
}


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_a_rows_one_gpu_estimate_is_the_scalar_estimate(catalog: list[GpuSpec], job: str) -> None:
    work = JOBS[job]()
    terms: list[llm_step.CardTerms] = []
    gpus: list[GpuSpec] = []
    effs: list[perf.Efficiency] = []
    backends: list[str] = []
    for gpu in catalog:
        backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
        eff = perf.efficiencies(gpu, None)
        card = perf.llm_card(gpu, work, eff, backend)
        if card.flops <= 0 or card.attn_flops <= 0:
            continue  # no peak to run a phase at: estimated alone, never stepped
        terms.append(card)
        gpus.append(gpu)
        effs.append(eff)
        backends.append(backend)
    rows = np.arange(len(terms), dtype=np.intp)
    # as app/domain/fleet.py steps them: one GPU each, no links
    cols = llm_step.dense_columns(
        perf.llm_job(work), llm_step.card_rows(terms), rows, np.ones(len(terms))
    )
    _, pre, dec = perf.stepped_parts(cols, work)
    for j, gpu in enumerate(gpus):
        assert perf.step_row(pre, j) == tuple(c.tolist()[j] for c in pre)
        got = perf.llm_one_gpu_estimate(work, pre, dec, j, terms[j], effs[j], backends[j])
        want = perf.estimate(gpu, work, num_gpus=1, backend=backends[j])
        assert _same(got, want), gpu.slug
    assert len(gpus) > 50
