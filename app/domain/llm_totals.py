"""An LLM inference job's figures from its prompt step and its decode steps, for many rows at
once (issue 21: a request's configurations as arrays): what ``perf._llm_perf`` works out of
one row's two steps, here over whole columns (llm_step.StepColumns), to the last bit. IEEE
+, −, × and ÷ are exact in numpy as in Python, ``max(0.0, x)`` is ``x > 0.0``'s pick, and the
largest part is the first largest in the parts' order, as ``max`` over a dict finds it, so a
row's figures are the scalar path's. tests/domain/test_r30sp_llm_totals.py holds the two
equal."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from app.domain.llm_step import StepColumns

# What a job's time is made of, in the order ``perf._llm_perf`` weighs them (the first of
# equal parts names the bottleneck)
PARTS = ("compute", "memory bandwidth", "host overhead", "kernel launches", "interconnect")


class Totals(NamedTuple):
    """Each row's figures as plain floats and words (``tolist``: what an estimate holds)."""

    throughput: list[float]
    step_time_s: list[float]
    bottleneck: list[str]
    decode_bottleneck: list[str]
    compute_s: list[float]
    memory_s: list[float]
    overhead_s: list[float]
    comm_s: list[float]
    scaling_efficiency: list[float]
    latency_ms: list[float]
    ttft_ms: list[float]
    ms_per_token: list[float]


def totals(
    tokens: int,
    steps: int,
    n: NDArray[np.float64],
    pre: StepColumns,
    dec: StepColumns,
    single: NDArray[np.float64] | None = None,
) -> Totals:
    """The figures of rows whose prompt step is ``pre`` and whose ``steps`` decode steps are
    each ``dec``, on ``n`` GPUs, for ``tokens`` generated tokens (batch × output); ``single``:
    each row's job time on one of its GPUs (a one-GPU row's is its own time: None where every
    row is one GPU's)."""
    ttft, tpot = pre.seconds, dec.seconds
    with np.errstate(divide="ignore", invalid="ignore"):
        total = ttft + steps * tpot
        comm = pre.comm_s + steps * dec.comm_s
        one = total if single is None else single
        excess = dec.host_s - dec.gpu_s
        host_excess = np.where(excess > 0.0, excess, 0.0)
        # a decode step the host outlasts counts whole as host time (perf._llm_perf)
        host_bound = host_excess > 0.0
        gpu_dec = np.where(host_bound, 0.0, float(steps))
        parts = (
            pre.compute_s + gpu_dec * dec.compute_s,
            pre.memory_s + gpu_dec * dec.memory_s,
            np.where(host_bound, steps * dec.host_s, 0.0),
            pre.launch_s + gpu_dec * dec.launch_s,
            comm * n,
        )
        step_parts = (
            dec.compute_s,
            dec.memory_s,
            np.where(host_bound, dec.host_s, 0.0),
            dec.launch_s,
            dec.comm_s * n,
        )
        return Totals(
            throughput=(tokens / total).tolist(),
            step_time_s=total.tolist(),
            bottleneck=_named(parts),
            decode_bottleneck=_named(step_parts),
            compute_s=(pre.compute_s + steps * dec.compute_s).tolist(),
            memory_s=(pre.memory_s + steps * dec.memory_s).tolist(),
            overhead_s=(pre.launch_s + steps * (dec.launch_s + host_excess)).tolist(),
            comm_s=comm.tolist(),
            scaling_efficiency=(one / total / n).tolist(),
            latency_ms=(total * 1e3).tolist(),
            ttft_ms=(ttft * 1e3).tolist(),
            ms_per_token=(tpot * 1e3).tolist(),
        )


def _named(parts: tuple[NDArray[np.float64], ...]) -> list[str]:
    """Each row's largest part, named (``PARTS``): the first of equals, as ``max`` keeps its
    first candidate unless a later one is larger (argmax's first maximum). A NaN part, which
    ``max`` never takes after the first candidate and argmax would, is compared in turn."""
    stacked = np.array(parts)
    if np.isnan(stacked).any():
        best = parts[0]
        at = np.zeros(len(best), np.intp)
        for j, p in enumerate(parts[1:], 1):
            more = p > best
            at = np.where(more, j, at)
            best = np.where(more, p, best)
    else:
        at = stacked.argmax(axis=0)
    return [PARTS[i] for i in at.tolist()]
