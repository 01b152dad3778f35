"""vLLM's sampler reserve is taken at the max_num_seqs a plan deploys: inference deploys its
batch where vLLM's default would leave no room, and says the flag (issue #21: inference and
serving agree whether a job fits)."""

from __future__ import annotations

import pytest

from app.domain import efficiency
from app.domain import evaluate as ev
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_8B, LLAMA3_70B, RULES, llm_inference


def _vllm(**kw: object) -> object:
    return llm_inference(runtime="vllm", efficiency=load_efficiency(), **kw)


def test_the_reserve_follows_the_batch_up_to_the_default() -> None:
    table = load_efficiency()
    spec = efficiency.serving_spec(table, "vllm")
    assert spec is not None and spec.profile_bytes_per_logit
    rows = efficiency.default_max_seqs(spec, H100)
    peak = efficiency.profiling_peak_gb(spec.profile_bytes_per_logit, rows, LLAMA3_8B.vocab_size)
    small = ev.usable_gb(H100, _vllm(batch_size=4))  # type: ignore[arg-type]
    whole = ev.usable_gb(H100, _vllm(batch_size=rows))  # type: ignore[arg-type]
    beyond = ev.usable_gb(H100, _vllm(batch_size=4 * rows))  # type: ignore[arg-type]
    four = efficiency.profiling_peak_gb(spec.profile_bytes_per_logit, 4, LLAMA3_8B.vocab_size)
    assert small - whole == pytest.approx(peak - four)
    assert beyond == pytest.approx(whole)  # never more rows than the default reserves


def _admit(work: object) -> ev.Admitted | ev.ConfigResult:
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits())  # type: ignore[arg-type]
    return ev.admit(ev.Configuration(H100, 1), ctx)


def test_a_job_the_default_reserve_would_crowd_out_fits_and_names_the_flag() -> None:
    work = _vllm(model=LLAMA3_70B, precision="fp8", batch_size=4, seq_len=1000, output_tokens=300)
    got = _admit(work)
    assert isinstance(got, ev.Admitted)
    said = [w for w in got.warnings if "--max-num-seqs at most" in w]
    assert said and "the batch is 4" in said[0] and "default 1,024" in said[0]


def test_a_job_with_room_at_the_default_says_nothing_of_the_flag() -> None:
    got = _admit(_vllm(batch_size=4))
    assert isinstance(got, ev.Admitted)
    assert not [w for w in got.warnings if "--max-num-seqs" in w]
