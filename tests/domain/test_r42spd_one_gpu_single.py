"""A card's one-GPU time, which every larger count's scaling efficiency divides by
(perf._llm_single), is kept from the card's one-GPU estimate where the request made one (its
time is the same two steps of the same replica, added the same way: perf.keep_single) rather
than stepped again: the kept time is ``_llm_single``'s own on a fresh job, to the last bit,
both for an estimate made replica by replica and for one made from a row of the catalog's
columns (app/domain/fleet.py), and a larger count estimated after it is the estimate made on a
job that kept nothing."""

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

JOBS = {
    "llama-3-8b vllm": lambda: _job("llama-3-8b", runtime="vllm"),
    "llama-3-8b transformers batch 32": lambda: _job(
        "llama-3-8b", runtime="transformers", batch_size=32, seq_len=512
    ),
    "mistral-7b llama.cpp q4_k_m": lambda: _job(
        "mistral-7b", runtime="llama.cpp", precision="int4", weight_bits=4.84, seq_len=1024
    ),
}


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


def _kept(work: WorkloadSpec, gpu: GpuSpec, backend: str) -> object:
    return perf.llm_job(work).per_card.get(("single", gpu, backend))


def _cards(catalog: list[GpuSpec], work: WorkloadSpec) -> list[tuple[GpuSpec, str]]:
    out = []
    for gpu in catalog:
        backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
        card = perf.llm_card(gpu, work, perf.efficiencies(gpu, None), backend)
        if card.flops > 0 and card.attn_flops > 0:
            out.append((gpu, backend))
    return out


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_a_one_gpu_estimate_keeps_the_single_gpu_time(catalog: list[GpuSpec], job: str) -> None:
    work = JOBS[job]()
    cards = _cards(catalog, work)
    for gpu, backend in cards:
        eff = perf.efficiencies(gpu, None)
        assert _kept(work, gpu, backend) is None
        one = perf.estimate(gpu, work, num_gpus=1, backend=backend)
        # kept (the seeding this pass added: before it nothing was kept here)
        assert _kept(work, gpu, backend) == (eff, one.step_time_s), gpu.slug
        # and it is the time _llm_single works out on a job that kept nothing
        assert one.step_time_s == perf._llm_single(gpu, JOBS[job](), eff, backend), gpu.slug
        two = perf.estimate(gpu, work, num_gpus=2, backend=backend)
        alone = perf.estimate(gpu, JOBS[job](), num_gpus=2, backend=backend)
        assert repr(dataclasses.astuple(two)) == repr(dataclasses.astuple(alone)), gpu.slug
    assert len(cards) > 50


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_a_columns_one_gpu_row_is_the_single_gpu_time(catalog: list[GpuSpec], job: str) -> None:
    work = JOBS[job]()
    cards = _cards(catalog, work)
    terms = [perf.llm_card(g, work, perf.efficiencies(g, None), b) for g, b in cards]
    rows = np.arange(len(terms), dtype=np.intp)
    cols = llm_step.dense_columns(
        perf.llm_job(work), llm_step.card_rows(terms), rows, np.ones(len(terms))
    )
    _, pre, dec = perf.stepped_parts(cols, work)
    for j, (gpu, backend) in enumerate(cards):
        eff = perf.efficiencies(gpu, None)
        est = perf.llm_one_gpu_estimate(work, pre, dec, j, terms[j], eff, backend)
        # what fleet.one_gpu_estimate keeps: _llm_single's time on a fresh job
        assert est.step_time_s == perf._llm_single(gpu, JOBS[job](), eff, backend), gpu.slug
