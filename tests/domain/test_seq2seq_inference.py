"""Encoder-decoder inference (Whisper, T5, BART) is the encoder's pass plus output_tokens
decoder steps, each decoder step the one LLM step (eager host dispatch, cross-attention over
the cached encoder K/V); memory holds the cross-attention and self-attention caches."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import perf, seq2seq
from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, T4

TABLE = load_efficiency(Path(__file__).resolve().parents[2] / "data")

# data/workloads.yaml whisper-large-v3: 32 encoder + 32 decoder layers, 30-second windows
WHISPER_LARGE = ModelSpec(
    family="encoder-decoder",
    params=1.55e9,
    layers=32,
    hidden_size=1280,
    num_heads=20,
    num_kv_heads=20,
    intermediate_size=5120,
    vocab_size=51866,
    max_context=448,
    input_size=30,
)


def _whisper(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="inference",
        model=WHISPER_LARGE,
        precision="fp16",
        batch_size=1,
        seq_len=448,
        output_tokens=128,
        runtime="pytorch",
        efficiency=TABLE,
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def test_the_encoder_runs_over_1500_frames_per_30_second_window():
    assert seq2seq.encoder_tokens(_whisper()) == 1500
    t5 = replace(WHISPER_LARGE, input_size=None)
    assert seq2seq.encoder_tokens(_whisper(model=t5, seq_len=512)) == 512


def test_the_halves_split_the_parameters():
    enc = seq2seq.encoder_model(WHISPER_LARGE)
    dec = seq2seq.decoder_model(WHISPER_LARGE)
    # 32 × (4 × 1280² + 2 × 1280 × 5120) = 629 M; the decoder's step reads the rest but the
    # cross-attention K/V projections (32 × 2 × 1280² = 105 M)
    assert enc.params == pytest.approx(629.1e6, rel=1e-3)
    assert dec.params == pytest.approx(1.55e9 - 629.1e6 - 104.9e6, rel=1e-3)
    assert enc.family == "encoder" and dec.family == "decoder"


def test_whisper_inference_includes_output_tokens_eager_decoder_steps():
    """Eager PyTorch: each decoder step's host dispatch (openai/whisper's counted calls per
    layer, seq2seq.LAYER_CALLS, and its search's, × the decode profile's µs per op) is paid
    output_tokens times after the encoder's pass; one forward pass over 448 tokens (the former
    price, ~40 ms) is far below it."""
    work = _whisper()
    est = perf.estimate(A100, work, backend="cuda")
    enc_work, _ = seq2seq.halves(work)
    enc = perf.single_gpu(A100, enc_work, backend="cuda")
    prof = TABLE.profile(A100, "cuda", "pytorch", "fp16", "decode")
    calls = 32 * seq2seq.LAYER_CALLS["pytorch"] + seq2seq.search_calls("pytorch", 1, 1)
    host_step = calls * prof.host_us_per_op * 1e-6
    assert host_step > 0
    assert est.step_time_s >= enc.step_s + 128 * host_step
    assert est.latency_ms == pytest.approx(est.step_time_s * 1e3)
    assert est.unit == "samples/s" and est.throughput == pytest.approx(1 / est.step_time_s)
    assert est.bottleneck == "host overhead"
    # the row reads the decoder's pace per token and the time to its first token
    assert est.ms_per_token is not None and est.ms_per_token >= host_step * 1e3
    assert est.ttft_ms == pytest.approx((enc.step_s + est.ms_per_token / 1e3) * 1e3)
    fewer = perf.estimate(A100, _whisper(output_tokens=32), backend="cuda")
    assert est.step_time_s - fewer.step_time_s == pytest.approx(96 * host_step, rel=0.05)


def test_a_cuda_graph_runtime_pays_no_host_dispatch_per_decoder_step():
    eager = perf.estimate(A100, _whisper(), backend="cuda")
    graphs = perf.estimate(A100, _whisper(runtime="torch-compile"), backend="cuda")
    assert graphs.step_time_s < eager.step_time_s / 2
    assert graphs.bottleneck != "host overhead"


def test_each_decoder_step_reads_the_cached_encoder_kv():
    """A step's cross-attention reads 2 × 32 × 1280 × 1500 fp16 values per sequence (246 MB):
    where the GPU bounds the step (CUDA graphs, 8 windows a batch) a longer window costs each
    step its frames' bytes more."""
    short = replace(WHISPER_LARGE, input_size=20)
    graphs = dict(runtime="torch-compile", output_tokens=100, batch_size=8)

    def decoder_s(work: WorkloadSpec) -> float:
        enc = perf.single_gpu(A100, seq2seq.halves(work)[0], backend="cuda")
        return perf.estimate(A100, work, backend="cuda").step_time_s - enc.step_s

    per_step = (decoder_s(_whisper(**graphs)) - decoder_s(_whisper(model=short, **graphs))) / 100
    cross_bytes = 8 * 2 * 32 * 1280 * 500 * 2.0  # the 500 frames more, per step
    bw = A100.memory_bandwidth_gbs * 1e9 * 0.88
    assert per_step == pytest.approx(cross_bytes / bw, rel=0.05)


def test_memory_holds_the_cross_attention_and_self_kv_caches():
    mem = memory_breakdown(_whisper())
    cross = 2 * 32 * 1280 * 1500 * 2.0
    self_kv = 2 * 32 * 1280 * 129 * 2.0
    assert mem.kv_cache * 1e9 == pytest.approx(cross + self_kv, rel=1e-6)
    beams = memory_breakdown(_whisper(beams=5))
    assert beams.kv_cache == pytest.approx(5 * mem.kv_cache)


def test_beam_search_runs_batch_times_beams_decoder_sequences():
    one = perf.estimate(A100, _whisper(runtime="torch-compile"), backend="cuda")
    five = perf.estimate(A100, _whisper(runtime="torch-compile", beams=5), backend="cuda")
    assert five.step_time_s > one.step_time_s


def test_beam_search_reorders_the_caches_each_step_as_the_runtime_does():
    """transformers' EncoderDecoderCache.reorder_cache gathers both caches every step (8 host
    calls a layer); a bare loop (openai/whisper) the self-attention cache alone (4), and its
    search's Python grows from greedy's 38 calls to beam search's 234 (seq2seq.search_calls)."""
    for runtime, calls, search in (("transformers", 8.0, 0.0), ("pytorch", 4.0, 234.0 - 38.0)):
        prof = TABLE.profile(A100, "cuda", runtime, "fp16", "decode")
        one = perf.estimate(A100, _whisper(runtime=runtime), backend="cuda")
        five = perf.estimate(A100, _whisper(runtime=runtime, beams=5), backend="cuda")
        # host-bound at 5 beams too
        extra = (32 * calls + search) * prof.host_us_per_op * 1e-6
        assert five.ms_per_token is not None and one.ms_per_token is not None
        assert five.ms_per_token - one.ms_per_token == pytest.approx(extra * 1e3, rel=0.02)


def test_openai_whispers_search_python_is_counted_per_sequence():
    """whisper/decoding.py per step: the logit filters (6 + 14 a sequence) and beam search
    (3 + (7 + 4 × (beams + 1)) a sequence) or greedy (18); other runtimes count none."""
    assert seq2seq.search_calls("pytorch", 5, 5) == 6 + 14 * 5 + 3 + 5 * (7 + 4 * 6)  # 234
    assert seq2seq.search_calls("pytorch", 1, 1) == 6 + 14 + 18
    assert seq2seq.search_calls("pytorch", 10, 5) == 2 * 234 - 6 - 3
    assert seq2seq.search_calls("transformers", 5, 5) == 0.0


def test_openai_whispers_layer_dispatches_its_counted_calls():
    """A host-bound greedy step of the bare loop (pytorch: openai/whisper) = 32 layers × its
    block's 74 counted calls + the search's 38, at the decode profile's µs per op."""
    prof = TABLE.profile(A100, "cuda", "pytorch", "fp16", "decode")
    est = perf.estimate(A100, _whisper(), backend="cuda")
    want = (32 * seq2seq.LAYER_CALLS["pytorch"] + 38) * prof.host_us_per_op * 1e-3
    assert est.ms_per_token == pytest.approx(want, rel=0.01)


def test_the_search_runs_after_the_gpu_not_beside_it(monkeypatch: pytest.MonkeyPatch):
    """On a GPU-bound step the search's calls add to the GPU's time in full (its .tolist()
    waits for the forward), where a max(GPU, host) would hide them: 64 windows × 5 beams on a
    T4, whose GPU binds the forward."""
    big = _whisper(batch_size=64, beams=5)
    prof = TABLE.profile(T4, "cuda", "pytorch", "fp16", "decode")
    fwd_host = 32 * (seq2seq.LAYER_CALLS["pytorch"] + 4.0) * prof.host_us_per_op * 1e-6
    post = seq2seq.search_calls("pytorch", 320, 5) * prof.host_us_per_op * 1e-6
    with_search = perf.single_gpu(T4, big, backend="cuda").token_s
    monkeypatch.setattr(seq2seq, "search_calls", lambda *_: 0.0)
    without = perf.single_gpu(T4, big, backend="cuda").token_s
    assert without > fwd_host + post  # the GPU binds the forward
    assert with_search - without == pytest.approx(post, rel=1e-6)
