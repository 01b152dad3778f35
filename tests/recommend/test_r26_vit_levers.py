"""A ViT's inference gets the compiled-runtime what-ifs a CNN's does (the regression hunt: a ViT
latency question's what-ifs named no fix once its no-effect int8/int4 levers were dropped)."""

from __future__ import annotations

from tests.recommend.test_r26batch_levers import _labels


def test_vit_inference_is_offered_the_compiled_runtimes() -> None:
    got = _labels({"preset": "vit-b-16", "task": "inference", "batch_size": 1})
    assert "runtime torch-compile instead of pytorch" in got, got
    assert "runtime tensorrt instead of pytorch" in got, got
    compiled = _labels({"preset": "vit-b-16", "task": "inference", "runtime": "torch-compile"})
    assert not any(x.startswith("runtime ") for x in compiled), compiled
