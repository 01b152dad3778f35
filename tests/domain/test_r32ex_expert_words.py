"""An expert's read of a row's words (session 32, review "ex"): an LLM inference estimate says its
prompt and decode apart (a llama.cpp user asks for tg and pp; the row gave one end-to-end
rate), and the wall figure says it is the steady draw (it sat below the supply the line asks
for)."""

from __future__ import annotations

import pytest

from app.domain import rank
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import RTX4090, candidate
from tests.domain.fixtures import llm_inference as _llm

TABLE = load_efficiency()


_cand = candidate


def _latency_line(c: rank.Candidate) -> str | None:
    return next((x for x in rank.explain(c, 1, c, rank.UNRANKED) if x.startswith("First")), None)


def test_an_llm_inference_estimate_says_its_prompt_and_its_decode_apart() -> None:
    """The "Expected" rate is prompt and generation together (134 tokens/s for 2,048 + 256 on
    an RTX 4090): the line after it gives the first token and the decode step, from the same
    estimate, right after the rate. A ranked row carries them in its fields alone (the answer
    page sat 0.1 KB under its 150 KB budget; the line on every row took it over)."""
    c = _cand(RTX4090, _llm(efficiency=TABLE, seq_len=512, output_tokens=128))
    p = c.perf
    assert p.ttft_ms and p.ms_per_token
    line = _latency_line(c)
    assert line is not None
    said = rank.explain(c, 1, c, rank.UNRANKED)
    assert said[said.index(line) - 1].startswith("Expected ")
    assert f"First token after ~{rank.significant(p.ttft_ms)} ms (the 512-token prompt: " in line
    assert f"~{rank.significant(512 / p.ttft_ms * 1e3)} tokens/s)" in line
    decode = rank.significant(1e3 / p.ms_per_token)
    assert f"then one every ~{rank.significant(p.ms_per_token)} ms (~{decode} tokens/s)." in line
    # decoding alone is faster than the whole request's rate, which carries the prompt
    assert 1e3 / p.ms_per_token > p.throughput
    assert not any(x.startswith("First") for x in rank.explain(c, 1, c, "fastest"))


def test_a_batch_says_its_prompts_and_a_per_sequence_decode() -> None:
    c = _cand(RTX4090, _llm(efficiency=TABLE, seq_len=512, batch_size=4))
    line = _latency_line(c)
    assert line is not None and c.perf.ttft_ms
    assert "(4 prompts of 512 tokens: " in line
    assert f"~{rank.significant(4 * 512 / c.perf.ttft_ms * 1e3)} tokens/s)" in line
    assert line.endswith("tokens/s per sequence).")


@pytest.mark.parametrize("task", ["training", "fine-tuning"])
def test_other_jobs_get_no_prompt_and_decode_line(task: str) -> None:
    c = _cand(RTX4090, _llm(efficiency=TABLE, task=task, seq_len=512, optimizer="adamw"))
    assert _latency_line(c) is None


def test_the_wall_figure_says_it_is_the_steady_draw() -> None:
    """One RTX 4090: "plan ≥ 675 W of supply for the card alone" beside "about 674 W at the
    wall" with the host read as a contradiction; the wall figure is the draw while it runs, the
    supply's margin is for spikes."""
    c = _cand(RTX4090, _llm(efficiency=TABLE))
    c.acquisition = "buy"
    tip = next(t for t in rank.tips(c, c.work) if "GPU power" in t)
    psu = RTX4090.tdp_w * rank.PSU_HEADROOM  # type: ignore[operator]
    wall = (RTX4090.tdp_w + rank.HOST_W_TWO_CARDS) / rank.PSU_EFFICIENCY  # type: ignore[operator]
    assert wall < psu  # the case the words must explain
    assert (
        f"about {rank.significant(wall)} W at the wall while it runs (the supply's margin is "
        "for power spikes), within" in tip
    )
