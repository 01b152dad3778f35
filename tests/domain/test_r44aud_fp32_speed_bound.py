"""A 16-bit job run at the FP32 rate on a card without faster 16-bit math: "fp16 saves memory on
it, not time" is true where the math sets the time and false where memory bandwidth does. It
had led the summary of an M4 Max's bandwidth-bound Llama 3.1 8B decode under MLX, whose 16-bit
weights are half the bytes each token reads, a saving the estimate itself prices."""

from __future__ import annotations

from app.domain import evaluate as ev
from app.domain.workload import ModelSpec, WorkloadSpec
from tests.domain.fixtures import GTX1080TI, RULES, llm_inference

# TinyLlama 1.1B's shape (config.json): small enough for an 11 GB card in 16 bits
TINY = ModelSpec(
    family="decoder", params=1.1e9, layers=22, hidden_size=2048, num_heads=32,
    num_kv_heads=4, intermediate_size=5632, vocab_size=32000, max_context=2048,
)  # fmt: skip


def _row(job: WorkloadSpec) -> ev.ConfigResult:
    ctx = ev.Context(work=job, rules=RULES, limits=ev.Limits(objective="fastest"))
    return ev.evaluate(ev.Configuration(GTX1080TI, 1), ctx)


def _said(res: ev.ConfigResult) -> str:
    (said,) = [w for w in res.warnings if "FP32 speed" in w]
    return said


def test_a_bandwidth_bound_decode_is_not_told_16_bits_save_no_time() -> None:
    res = _row(llm_inference(model=TINY, precision="fp16", seq_len=512, output_tokens=256))
    assert res.ok and res.perf is not None
    assert res.perf.compute_precision == "fp32"
    assert (res.perf.decode_bottleneck or res.perf.bottleneck) == "memory bandwidth"
    said = _said(res)
    assert "not time" not in said
    assert "(fp32 math, fp16 storage)" in said
    assert "saves time here as well as memory" in said
    # the engine prices what the words say: fp32 weights read twice the bytes, slower
    fp32 = _row(llm_inference(model=TINY, precision="fp32", seq_len=512, output_tokens=256))
    assert fp32.perf is not None and fp32.perf.throughput < 0.75 * res.perf.throughput


def test_a_compute_bound_row_keeps_not_time() -> None:
    from tests.domain.fixtures import BERT_LARGE

    job = WorkloadSpec(
        task="training", model=BERT_LARGE, batch_size=8, precision="fp16", seq_len=128
    )
    res = _row(job)
    assert res.ok and res.perf is not None and res.perf.bottleneck == "compute"
    assert "fp16 saves memory on it, not time" in _said(res)
