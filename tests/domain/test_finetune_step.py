"""Fine-tuning steps (LoRA, QLoRA) as operators: what PEFT, bitsandbytes and AutoGPTQ run per
adapted layer, and the eager host dispatch that bounds a micro-batch of one short sequence."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import operators as ops_mod
from app.domain import perf
from app.domain.operators import lora_input_grad_sums
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import LLAMA3_8B

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)
A100 = {g.slug: g for g in read_gpu_specs(DATA)}["a100-sxm4-80gb"]


def _job(peft: str, seq: int, **kw: object) -> WorkloadSpec:
    base = WorkloadSpec(
        task="fine-tuning",
        model=LLAMA3_8B,
        batch_size=1,
        seq_len=seq,
        peft=peft,
        lora_rank=64,
        gradient_checkpointing=True,
        efficiency=TABLE,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _ops(work: WorkloadSpec) -> list[ops_mod.Op]:
    ops = perf.step_ops(work, True, 2.0)
    assert ops is not None
    return ops


def _block_weights() -> float:
    return sum(i * o for i, o in ops_mod.block_linears(LLAMA3_8B)) * float(LLAMA3_8B.layers or 0)


def test_block_linears_are_the_weights_lora_adapts() -> None:
    h, kv, inter = 4096, 8 * 128, 14336
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * inter  # q, o; k, v; gate, up, down
    assert _block_weights() == pytest.approx(per_layer * 32)


def test_peft_scales_the_adapter_output_in_its_own_kernel() -> None:
    t = 2048.0
    ops = ops_mod.lora_ops(LLAMA3_8B, 1, t, 16)
    scale = [o for o in ops if o.name == "lora.scale"]
    outs = sum(o for _, o in ops_mod.block_linears(LLAMA3_8B))
    # one multiply per adapted linear, reading and writing its whole output (bf16)
    assert len(scale) == 7
    assert sum(o.bytes_read for o in scale) == pytest.approx(2 * t * outs)
    assert sum(o.bytes_written for o in scale) == pytest.approx(2 * t * outs)


def test_autograd_sums_the_frozen_and_adapter_input_gradients() -> None:
    t = 1024.0
    sums = lora_input_grad_sums(LLAMA3_8B, 1, t)
    ins = sum(i for i, _ in ops_mod.block_linears(LLAMA3_8B))
    assert all(o.phase == "bwd" for o in sums)
    assert sum(o.bytes_read for o in sums) == pytest.approx(2 * 2 * t * ins)
    assert sum(o.bytes_written for o in sums) == pytest.approx(2 * t * ins)
    step = _ops(_job("lora", 1024))
    assert sum(o.count for o in step if o.name == "lora.grad_sum") == 7 * 32


def test_frozen_base_has_no_weight_gradients() -> None:
    lora = _ops(_job("lora", 1024))
    full = _ops(replace(_job("none", 1024), task="training"))
    assert not any(o.name.endswith(".wgrad") and not o.name.startswith("lora") for o in lora)
    assert any(o.name.endswith(".wgrad") for o in full)


def test_bitsandbytes_dequantises_each_linear_in_forward_recompute_and_backward() -> None:
    ops = _ops(_job("qlora", 1024))
    dq = [o for o in ops if o.name == "nf4.dequantise"]
    w = _block_weights()
    # one NF4 kernel per block linear per call: forward, checkpoint recompute, backward; it
    # reads the packed codes and the fp32 absmax the double quantisation's two kernels wrote
    assert sum(o.count for o in dq) == 7 * 32 * 3
    assert sum(o.count * o.bytes_read for o in dq) == pytest.approx(3 * w * (0.5 + 4 / 64))
    assert sum(o.count * o.bytes_written for o in dq) == pytest.approx(3 * w * 2.0)
    no_ckpt = _ops(_job("qlora", 1024, gradient_checkpointing=False))
    assert sum(o.count for o in no_ckpt if o.name == "nf4.dequantise") == 7 * 32 * 2


def test_qlora_gemms_read_the_16_bit_copy_not_the_4_bit_codes() -> None:
    t = 1024.0
    q = next(o for o in _ops(_job("qlora", 1024)) if o.kind == "gemm" and o.name.startswith("q"))
    lo = next(o for o in _ops(_job("lora", 1024)) if o.kind == "gemm" and o.name.startswith("q"))
    assert q.bytes_read == pytest.approx(lo.bytes_read)
    assert q.bytes_read >= q.k * q.n * 2.0 + t * q.k * 2.0 - 1.0


def test_autogptq_unpacks_in_torch_ops_and_reuses_the_saved_weight_in_backward() -> None:
    ops = _ops(_job("qlora", 1024, quantization="gptq"))
    dq = [o for o in ops if o.name == "gptq.dequantise"]
    w = _block_weights()
    assert not any(o.name == "nf4.dequantise" for o in ops)
    # forward and recomputed forward only; 16.5 B of elementwise traffic per weight per call,
    # charged at half the bandwidth the other memory-bound ops reach (ms-swift's timings)
    calls = 2
    share = ops_mod.GPTQ_UNPACK_BANDWIDTH_SHARE
    assert share == pytest.approx(0.5)
    assert sum(o.count * (o.bytes_read + o.bytes_written) for o in dq) == pytest.approx(
        calls * w * 16.5 / share
    )
    assert sum(o.count for o in dq) == 7 * 32 * calls * 9


def test_a_dequantisation_below_the_achieved_bandwidth_is_charged_its_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The unpack's kernels stream at a share of the bandwidth: its ops carry the bytes the
    roofline must charge for the time they take, so the step grows by the missing share."""
    full = replace(ops_mod.GPTQ_TORCH_DEQUANT, bandwidth_share=1.0)
    half = ops_mod.GPTQ_TORCH_DEQUANT
    at_full = ops_mod.dequant_ops(LLAMA3_8B, full, 2.0)
    at_half = ops_mod.dequant_ops(LLAMA3_8B, half, 2.0)
    assert sum(o.count * o.bytes for o in at_half) == pytest.approx(
        sum(o.count * o.bytes for o in at_full) / half.bandwidth_share
    )
    assert sum(o.count for o in at_half) == sum(o.count for o in at_full)
    # a GPU-bound GPTQ step grows by the unpack's bytes time for each halving of the share
    steps = []
    for share in (1.0, 0.5, 0.25):
        monkeypatch.setattr(perf, "GPTQ_TORCH_DEQUANT", replace(half, bandwidth_share=share))
        job = _job("qlora", 4096, quantization="gptq", precision="fp16")  # a fresh spec
        steps.append(perf.single_gpu(A100, job).step_s)
    assert steps[0] < steps[1] < steps[2]
    assert steps[2] - steps[1] == pytest.approx(2.0 * (steps[1] - steps[0]), rel=1e-6)


def test_one_short_sequence_is_host_bound_and_a_long_one_is_not() -> None:
    short = perf.single_gpu(A100, _job("lora", 256))
    long = perf.single_gpu(A100, _job("lora", 8192))
    assert short.step_s == pytest.approx(short.dispatch)
    assert long.step_s > 2 * long.dispatch
    # the host figure is per call: the same for both lengths
    assert short.dispatch == pytest.approx(long.dispatch)


def test_training_host_dispatch_leaves_large_batch_pretraining_gpu_bound() -> None:
    work = replace(_job("none", 4096), task="training", batch_size=8, gradient_checkpointing=False)
    one = perf.single_gpu(A100, work)
    assert one.step_s > 5 * one.dispatch


def test_host_dispatch_is_said_as_host_overhead_and_does_not_split_over_gpus() -> None:
    # the dispatch of every op from the host is not an input copy: a host-bound fine-tuning
    # step is limited by "host overhead" (and its tip), never "host transfer"
    work = _job("lora", 256)
    one = perf.single_gpu(A100, work)
    assert one.step_s == pytest.approx(one.dispatch) and one.host < one.dispatch
    assert perf.estimate(A100, work, one=one).bottleneck == "host overhead"
    # each GPU's process dispatches all of its kernels: two GPUs still wait on it
    two = perf.estimate(A100, replace(work, batch_size=2), num_gpus=2, one=one)
    assert two.step_time_s >= one.dispatch


def test_decoder_training_reads_the_llm_training_rows_and_a_cnn_does_not() -> None:
    assert perf.phase_regime(_job("lora", 256)) == "train-llm"
    cnn = replace(_job("none", 1), model=replace(LLAMA3_8B, family="cnn"), task="training")
    assert perf.phase_regime(cnn) == "train"
    host = TABLE.profile(A100, "cuda", "pytorch", "bf16", "train-llm").host_us_per_op
    assert host > 0 and TABLE.profile(A100, "cuda", "pytorch", "bf16", "train").host_us_per_op == 0


@pytest.mark.parametrize("n", [2, 4, 8])
def test_replicas_are_no_faster_per_gpu_than_one_card_at_their_share(n: int) -> None:
    """n data-parallel replicas of a micro-batch of 2 per GPU: each GPU's GEMMs run at M = 2
    sequences, as one card's micro-batch of 2 does, so no GPU of the n beats that card (the
    whole batch's time split n ways ran each share at the large batch's efficiency: 8 ×
    RX 9070 XT came out 2.8 % faster per GPU than one, and 'best value' bought 8 cards)."""
    job = _job("qlora", 2048, batch_size=2, gradient_checkpointing=False)
    one = perf.estimate(A100, job)
    many = perf.estimate(A100, replace(job, batch_size=2 * n), num_gpus=n, sharded=False)
    assert many.throughput / n <= one.throughput * (1 + 1e-12)
    assert many.throughput / n > 0.9 * one.throughput  # only the gradients' all-reduce added
    assert many.compute_s == pytest.approx(one.compute_s, rel=1e-9)
