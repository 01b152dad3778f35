"""A layer split's low "scaling" is the cards taking turns on each token, not its link: the
multi-card tip of a Transformers device_map row named "an NVLink/NVSwitch part scales
better" as the remedy (7 × RTX 4090 holding Llama 3.1 70B in bf16: 14 % scaling, the link
0.2 % of the time), a part that would decode no faster under the same runtime."""

from __future__ import annotations

from dataclasses import replace

from app.domain import rank
from tests.domain.fixtures import RTX4090, candidate, preset_inference


def _tips(runtime: str, n: int) -> tuple[rank.Candidate, str]:
    job = preset_inference("llama-3.1-70b", runtime=runtime, seq_len=4096, output_tokens=256)
    c = candidate(RTX4090, job, n)
    return c, " ".join(rank.tips(c, job))


def test_a_device_map_split_is_not_told_a_faster_link_would_scale_it() -> None:
    c, said = _tips("transformers", 7)
    assert rank.replica_span(c.gpu, c.work, c.perf) == "layers"
    assert c.perf.scaling_efficiency < 0.2  # the cards take turns: about one card's speed
    # the link is a sliver of the time: no link makes the turns shorter
    assert c.perf.comm_s < 0.01 * c.perf.step_time_s
    assert "NVLink/NVSwitch part scales better" not in said
    assert "talk over" not in said
    assert "places whole layers on each of the 7 cards (device_map)" in said
    assert "more cards add memory, not decode speed" in said


def test_a_tensor_parallel_split_still_gets_the_link_remedy() -> None:
    # vLLM splits every layer: its all-reduces ride the link, and a poor link is the remedy
    c, said = _tips("vllm", 8)
    assert rank.replica_span(c.gpu, c.work, c.perf) == "tensor"
    assert "places whole layers" not in said
    if c.perf.scaling_efficiency < rank.POOR_SCALING:
        assert "talk over" in said


def test_one_card_gets_no_multi_card_tip() -> None:
    job = preset_inference("llama-3.1-8b", runtime="transformers")
    c = replace(candidate(RTX4090, job, 1))
    assert "places whole layers" not in " ".join(rank.tips(c, job))
