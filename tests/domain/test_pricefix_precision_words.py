"""A 16-bit job the estimate runs at the FP32 rate says so: a Pascal card's words had said
"estimated at fp16" beside compute_precision fp32."""

from __future__ import annotations

import pytest

from app.domain import evaluate as ev
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import BERT_LARGE, GTX1080TI, RULES, T4


def _row(gpu: object, precision: str) -> ev.ConfigResult:
    job = WorkloadSpec(
        task="training", model=BERT_LARGE, batch_size=8, precision=precision, seq_len=128
    )
    ctx = ev.Context(work=job, rules=RULES, limits=ev.Limits(objective="fastest"))
    return ev.evaluate(ev.Configuration(gpu, 1), ctx)  # type: ignore[arg-type]


@pytest.mark.parametrize("asked", ["bf16", "fp16"])
def test_pascal_16_bit_work_is_said_to_run_at_fp32_speed_with_16_bit_storage(asked: str) -> None:
    res = _row(GTX1080TI, asked)
    assert res.ok and res.work is not None and res.perf is not None
    # the engine's own facts: tensors kept in fp16, math at the FP32 rate
    assert (res.work.precision, res.perf.compute_precision) == ("fp16", "fp32")
    (said,) = [w for w in res.warnings if "GTX 1080 Ti" in w]
    assert "estimated at FP32 speed (fp32 math, fp16 storage)" in said
    assert "estimated at fp16" not in said
    assert ("no bf16 support" in said) == (asked == "bf16")


def test_a_card_with_fast_16_bit_math_keeps_the_plain_fallback_words() -> None:
    res = _row(T4, "bf16")
    assert res.ok and res.perf is not None and res.perf.compute_precision == "fp16"
    assert res.warnings == ("T4 has no bf16 support; estimated at fp16",)
    assert _row(T4, "fp16").warnings == ()
    assert _row(GTX1080TI, "fp32").warnings == ()
