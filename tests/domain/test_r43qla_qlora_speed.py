"""QLoRA's speed cost (helper "qla", 2026-12-07): bitsandbytes dequantises a double-quantised
NF4 base in three kernels per linear per call (the 8-bit absmax to fp32, its offset, the NF4
codes to 16 bits), and the engine's QLoRA − LoRA step time at the same shape is checked
against published pairs (tests/data/qlora_lora_pairs.yaml, never tuned on)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import operators as ops_mod
from app.domain import perf
from app.domain.kernels import CLASSES, op_time
from app.shipped import yamlio
from benchmarks.finetune import finetune_job
from benchmarks.llm_pretrain import decoder
from tests.domain.fixtures import LLAMA3_8B
from tests.domain.test_finetune_step import _job

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PAIRS = yamlio.safe_load((ROOT / "tests" / "data" / "qlora_lora_pairs.yaml").read_text("utf-8"))
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
LINEARS = len(ops_mod.block_linears(LLAMA3_8B))
LAYERS = int(LLAMA3_8B.layers or 0)


def test_a_double_quantised_base_runs_three_kernels_per_linear_per_call() -> None:
    ops = perf.step_ops(_job("qlora", 1024), True, 2.0)
    assert ops is not None
    w = sum(i * o for i, o in ops_mod.block_linears(LLAMA3_8B)) * LAYERS
    calls = 3  # forward, checkpoint recompute, backward
    expected = {  # bytes read, written per weight: functional.dequantize_4bit's nested path
        "nf4.absmax": (1 / 64, 4 / 64),  # dequantize_blockwise: 8-bit codes to fp32
        "nf4.offset": (4 / 64, 4 / 64),  # absmax += offset
        "nf4.dequantise": (0.5 + 4 / 64, 2.0),  # packed codes and fp32 absmax to bf16
    }
    for name, (read, written) in expected.items():
        stage = [o for o in ops if o.name == name]
        assert sum(o.count for o in stage) == LINEARS * LAYERS * calls
        assert sum(o.count * o.bytes_read for o in stage) == pytest.approx(calls * w * read)
        assert sum(o.count * o.bytes_written for o in stage) == pytest.approx(calls * w * written)
    dq = ops_mod.NF4_DEQUANT
    assert dq.kernels == 3
    assert dq.read_b == pytest.approx(1 / 64 + 4 / 64 + 0.5 + 4 / 64)
    assert dq.write_b == pytest.approx(4 / 64 + 4 / 64 + 2.0)


def test_each_dequantisation_kernel_is_a_host_call() -> None:
    lora = perf._train_host_calls(_job("lora", 256))
    qlora = perf._train_host_calls(_job("qlora", 256))
    assert qlora[0] == lora[0]
    assert qlora[1] - lora[1] == pytest.approx(3 * LINEARS * LAYERS * 3)


def _steps(row: dict[str, Any]) -> tuple[float, float]:
    model = decoder(PAIRS["models"][row["model"]])
    out = []
    for peft in ("lora", "qlora"):
        job = {
            "peft": peft,
            "precision": "bf16",
            "micro_batch": 1,
            "grad_accum": 1,
            "seq_len": row["seq_len"],
            "checkpointing": row["checkpointing"],
            "lora_rank": row["lora_rank"],
        }
        out.append(finetune_job(GPUS[row["gpu_slug"]], model, job, DATA)[1].step_time_s)
    return out[0], out[1]


# What the bytes and launches of the dequantisation reach of the published QLoRA − LoRA time
# (methodology §6.7y "qla"): a fifth to a quarter. The rest is bitsandbytes' NF4 kernel itself
# running well below the streaming rate the engine gives a memory-bound kernel — 2023's
# branching decode tree (the bnb PR #1747 LUT rewrite is 1.36–2.07× faster on A100 and H100) —
# which no published absolute kernel timing prices yet; the check holds that known miss to a
# factor of 7 (the old single-kernel pricing was 8–15× short on the litgpt rows).
SHORT_BY_AT_MOST = 7.0


@pytest.mark.parametrize(
    "row", PAIRS["rows"], ids=[f"{r['model']}-{r['quant']}" for r in PAIRS["rows"]]
)
def test_qlora_costs_more_than_lora_at_the_same_shape(row: dict[str, Any]) -> None:
    lora, qlora = _steps(row)
    published = row["qlora_s"] - row["lora_s"]
    extra = qlora - lora
    assert qlora > lora
    # the engine still under-prices it: a later session that prices the kernel's own rate
    # should find these rows closer and tighten the factor
    assert extra < published
    assert extra * SHORT_BY_AT_MOST > published


# PR #2051's baseline times the dequantisation and the matmul as one public call: the engine's
# three kernels at the streaming rate plus the GEMM come within this factor below it (1.44×
# and 1.18× on the two cells; the old single-kernel price was 1.80× and 1.71× below). Today's
# branch-free kernel still streams below the rate the engine gives it, by less than 2023's did.
KERNEL_BELOW_BY_AT_MOST = 1.6


@pytest.mark.parametrize("cell", PAIRS["kernel_checks"], ids=lambda c: f"{c['n']}x{c['k']}")
def test_the_dequantise_and_matmul_call_against_a_published_kernel_timing(
    cell: dict[str, Any],
) -> None:
    work = replace(_job("qlora", int(cell["m"])), model=LLAMA3_8B)
    on = perf._on_gpu(GPUS[cell["gpu_slug"]], work, "pytorch", None, "cuda")
    assert on.rates is not None
    rates = dict(zip(CLASSES, on.rates, strict=True))
    launch = on.prof.kernel_us * 1e-6
    w = float(cell["n"] * cell["k"])
    dq = ops_mod.NF4_DEQUANT
    stages = [
        ops_mod.Op("elementwise", n, ops_mod.MEMORY, 1.0, 0.0, w * r, w * wr, "bf16")
        for n, r, wr in dq.stages
    ]
    ops = [*stages, ops_mod.gemm("linear", float(cell["m"]), float(cell["n"]), float(cell["k"]))]
    engine_us = 1e6 * sum(op_time(o, rates, on.bw, launch, on.sms, on.balance) for o in ops)
    measured = float(cell["measured_us"])
    assert engine_us < measured
    assert engine_us * KERNEL_BELOW_BY_AT_MOST > measured
