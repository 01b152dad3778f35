"""An LLM inference job's figures for many rows at once (llm_totals.totals, issue 21's arrays)
are the scalar ``perf._llm_perf`` row by row, to the last bit: on steps stepped from catalog
GPUs at several counts and jobs, and on steps made to hit its edges (ties between parts, a
host-bound decode, NaN and infinite parts). The job's runtime release is read once per
columns call (llm_step._prompt_logits_column), with the answer ``all_prompt_logits`` gives
card by card."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, llm_totals, perf
from app.domain.compat import _default_backends
from app.domain.gpu import GpuSpec
from tests.domain.test_llm_bound_arrays import _job

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


class _Row(NamedTuple):
    """One row of llm_step.StepColumns, as ``perf._llm_perf`` reads a step."""

    seconds: float
    gpu_s: float
    compute_s: float
    memory_s: float
    launch_s: float
    host_s: float
    comm_s: float


def _rows(step: llm_step.StepColumns) -> list[_Row]:
    return [_Row(*r) for r in zip(*(c.tolist() for c in step), strict=True)]


def _same(a: perf.PerfEstimate, b: perf.PerfEstimate) -> bool:
    """Every field equal, NaN to NaN (repr of a float is exact: the shortest that reads back)."""
    return repr(dataclasses.astuple(a)) == repr(dataclasses.astuple(b))


JOBS = {
    # the open question's job under vLLM, an eager loop (host-bound decode), Transformers'
    # layer split, llama.cpp's micro-batched layer split, fp8 tensor parallel
    "llama-3-8b vllm": lambda: _job("llama-3-8b", runtime="vllm", batch_size=1),
    "llama-3-8b pytorch": lambda: _job("llama-3-8b", runtime="pytorch"),
    "llama-3-8b transformers batch 1": lambda: _job(
        "llama-3-8b", runtime="transformers", batch_size=1
    ),
    "llama-3-70b llama.cpp q4_k_m": lambda: _job(
        "llama-3-70b", runtime="llama.cpp", precision="int4", weight_bits=4.84, seq_len=512
    ),
    "llama-3-70b vllm fp8": lambda: _job("llama-3-70b", runtime="vllm", precision="fp8"),
}


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_the_figures_of_stepped_columns_are_the_scalar_ones_row_by_row(
    catalog: list[GpuSpec], job: str
) -> None:
    """Rows of every catalog GPU at 1, 2, 4 and 8 GPUs, stepped as columns with their links:
    ``totals`` then ``_stepped_estimate`` of each row is ``_llm_perf`` of its two steps, with
    the one-GPU time a row of more GPUs divides its scaling by."""
    work = JOBS[job]()
    cards: list[int] = []
    terms: list[llm_step.CardTerms] = []
    effs: list[perf.Efficiency] = []
    backends: list[str] = []
    gpus: list[GpuSpec] = []
    counts: list[int] = []
    for gpu in catalog:
        backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
        eff = perf.efficiencies(gpu, None)
        card = perf.llm_card(gpu, work, eff, backend)
        if card.flops <= 0 or card.attn_flops <= 0:
            continue  # no peak to run a phase at: estimated alone, never stepped
        for n in (1, 2, 4, 8):
            cards.append(len(terms))
            gpus.append(gpu)
            counts.append(n)
        terms.append(card)
        effs.append(eff)
        backends.append(backend)
    job_terms = perf.llm_job(work)
    cols = llm_step.dense_columns(
        job_terms,
        llm_step.card_rows(terms),
        np.array(cards, np.intp),
        np.array(counts, np.float64),
        gpus=gpus,
    )
    b, s, out = work.batch_size, work.seq_len, max(1, work.output_tokens)
    pre = cols.parts(0.0, 0.0, float(b * s), float(s))
    dec = cols.parts(float(b), s + out / 2.0, 0.0, float(s))
    steps = perf.decode_steps(work)
    alone = (pre.seconds + steps * dec.seconds).tolist()
    # a row of n GPUs divides by its card's time on one (the row of the same card at 1)
    single = [alone[j - {1: 0, 2: 1, 4: 2, 8: 3}[n]] for j, n in enumerate(counts)]
    figures = llm_totals.totals(
        b * out, steps, np.array(counts, np.float64), pre, dec, np.array(single)
    )
    pre_rows, dec_rows = _rows(pre), _rows(dec)
    checked = 0
    for j, (c, n) in enumerate(zip(cards, counts, strict=True)):
        card, eff, be = terms[c], effs[c], backends[c]
        mode = card.math or card.mode
        want = perf._llm_perf(
            work, n, pre_rows[j], dec_rows[j], single[j] if n > 1 else None, mode, eff, be
        )
        got = perf._stepped_estimate(figures, j, work, n, card, eff, be)
        assert _same(got, want), (gpus[j].slug, n)
        checked += 1
    assert checked > 100
    names = set(figures.bottleneck) | set(figures.decode_bottleneck)
    assert names <= set(llm_totals.PARTS)


def test_edges_pick_the_part_max_picks() -> None:
    """Ties name the first part, as ``max`` over the parts' dict does; a NaN part after the
    first is never the bottleneck (``max`` keeps the part before it), a NaN first part is;
    an infinite part is; a decode step the host outlasts is host time."""
    nan, inf = math.nan, math.inf
    # columns: seconds, gpu_s, compute_s, memory_s, launch_s, host_s, comm_s
    pre = [
        (1.0, 1.0, 0.5, 0.5, 0.0, 0.0, 0.0),  # compute ties memory: compute
        (1.0, 1.0, 0.1, nan, 0.2, 0.0, 0.0),  # NaN memory: never taken after compute
        (1.0, 1.0, nan, 0.3, 0.0, 0.0, 0.0),  # NaN first: kept
        (1.0, 1.0, 0.1, 0.2, inf, 0.0, 0.0),  # infinite launches
        (0.2, 0.2, 0.1, 0.1, 0.0, 0.0, 0.01),  # host-bound decode below
        (0.2, 0.2, 0.1, 0.1, 0.0, 0.0, 0.0),  # host just equal to the GPU: not host-bound
        (0.2, 0.2, 0.1, 0.1, 0.0, 0.0, 0.0),  # a NaN host time: no excess (max(0.0, NaN))
    ]
    dec = [
        (0.01, 0.01, 0.002, 0.002, 0.001, 0.0, 0.0),
        (0.01, 0.01, 0.001, 0.004, 0.004, 0.0, 0.0),
        (0.01, 0.01, 0.001, 0.002, 0.0, 0.0, 0.0),
        (0.01, 0.01, 0.001, 0.002, 0.0, 0.0, 0.0),
        (0.02, 0.01, 0.004, 0.006, 0.001, 0.02, 0.001),
        (0.01, 0.01, 0.004, 0.006, 0.001, 0.01, 0.0),
        (0.01, 0.01, 0.004, 0.006, 0.001, nan, 0.0),
    ]
    counts = [1, 2, 1, 4, 2, 1, 1]
    single = [0.0, 2.5, 0.0, 3.0, 1.7, 0.0, 0.0]
    work = _job("llama-3-8b", runtime="pytorch", output_tokens=64)
    steps = perf.decode_steps(work)
    tokens = work.batch_size * work.output_tokens

    def cols(rows: Sequence[tuple[float, ...]]) -> llm_step.StepColumns:
        return llm_step.StepColumns(*(np.array(c, np.float64) for c in zip(*rows, strict=True)))

    own = [pre[j][0] + steps * dec[j][0] for j in range(len(pre))]
    single = [s if n > 1 else own[j] for j, (s, n) in enumerate(zip(single, counts, strict=True))]
    figures = llm_totals.totals(
        tokens, steps, np.array(counts, np.float64), cols(pre), cols(dec), np.array(single)
    )
    gpu = read_gpu_specs(DATA)[0]
    backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
    eff = perf.efficiencies(gpu, None)
    card = perf.llm_card(gpu, work, eff, backend)
    mode = card.math or card.mode
    for j, n in enumerate(counts):
        p, d = _Row(*pre[j]), _Row(*dec[j])
        want = perf._llm_perf(work, n, p, d, single[j] if n > 1 else None, mode, eff, backend)
        got = perf._stepped_estimate(figures, j, work, n, card, eff, backend)
        assert _same(got, want), j
    assert figures.bottleneck[0] == "compute"  # a tie: the first
    assert figures.bottleneck[2] == "compute"  # NaN first: max keeps it
    assert figures.bottleneck[3] == "kernel launches"
    assert figures.bottleneck[4] == "host overhead"
    assert figures.decode_bottleneck[5] != "host overhead"  # the host no slower than the GPU
    assert math.isfinite(figures.overhead_s[6])


@pytest.mark.parametrize("release", ["", "4.44.2", "4.45.0", "v4.30", "nonsense"])
def test_the_prompt_logits_column_reads_the_release_once_with_each_cards_answer(
    catalog: list[GpuSpec], release: str
) -> None:
    """``_prompt_logits_column`` is ``all_prompt_logits`` of each row's card runtime at the
    job's release: Transformers before 4.45 computes every prompt position's logits, an
    unstated or unreadable release is a current one (none does)."""
    rows = []
    for runtime in ("transformers", "vllm", "llama.cpp"):
        work = _job("llama-3-8b", runtime=runtime)
        for gpu in catalog[:20]:
            backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
            rows.append((perf.llm_card(gpu, work, perf.efficiencies(gpu, None), backend), work))
    job = dataclasses.replace(perf.llm_job(rows[0][1]), runtime_release=release)
    cards = llm_step.card_rows([t for t, _ in rows])
    card = np.arange(len(rows), dtype=np.intp)[::-1].copy()
    got = llm_step._prompt_logits_column(job, cards, card).tolist()
    want = [
        1.0 if llm_step.all_prompt_logits(rows[c][0].prefill.runtime, job.runtime_release) else 0.0
        for c in card.tolist()
    ]
    assert got == want
    every = [rows[c][0].prefill.runtime == "transformers" for c in card.tolist()]
    old = release == "4.44.2"  # "v4.30" reads as no release (_release): a current one
    assert got == [1.0 if old and e else 0.0 for e in every]
