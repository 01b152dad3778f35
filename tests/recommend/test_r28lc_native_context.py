"""Qwen3's presets take 131,072 tokens with YaRN (serving turns it on in its commands); a
training or inference job past the native 40,960 is told it needs the rope scaling."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload


def _warnings(**w: object) -> list[str]:
    _, warnings = resolve_workload(s.WorkloadIn.model_validate({"preset": "qwen3-8b", **w}))
    return warnings


def test_past_the_native_context_says_yarn() -> None:
    said = [x for x in _warnings(task="fine-tuning", peft="lora", seq_len=65_536) if "YARN" in x]
    assert said and "native context of 40,960" in said[0] and "short texts" in said[0]
    assert not any("YARN" in x for x in _warnings(task="fine-tuning", peft="lora", seq_len=8192))
