"""benchmarks/gen_operator_tables.py: tracing, attention as one operator, folding repeats."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch import nn

from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_benchmark("gen_operator_tables.py", "gen_operator_tables")


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x))) + x


class Toy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.blocks = nn.Sequential(*(Block(8) for _ in range(4)))
        self.proj = nn.Linear(8, 16)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.blocks(self.stem(x)).flatten(2).transpose(1, 2)  # (1, 64, 8)
        h = self.proj(h)
        return self.attn(h, h, h, need_weights=False)[0]


def _inputs() -> tuple[tuple[torch.Tensor, ...], dict]:
    return (torch.zeros(1, 3, 16, 16, device="meta"),), {}


def test_trace_records_every_kind_and_matches_flop_counter(gen: ModuleType) -> None:
    model = Toy().to("meta").eval()
    ops = gen.trace(model, _inputs)
    kinds = [o["kind"] for o in ops]
    assert kinds.count("conv") == 5 and kinds.count("norm") == 4
    assert kinds.count("attention") == 1  # SDPA is one operator, not its inner matmuls
    att = next(o for o in ops if o["kind"] == "attention")
    assert (att["q_len"], att["kv_len"], att["heads"], att["head_dim"]) == (64, 64, 2, 8)
    stem = ops[0]
    assert (stem["h_in"], stem["h_out"], stem["stride"], stem["c_out"]) == (16, 8, 2, 8)
    gemms = [o for o in ops if o["kind"] == "gemm"]
    assert [(g["m"], g["n"], g["k"]) for g in gemms] == [(64, 16, 8), (64, 48, 16), (64, 16, 16)]
    total = sum(gen.op_flops(o) for o in ops) / 1e9
    assert total == pytest.approx(gen.counted_gflops(model, _inputs), rel=1e-9)


def test_fold_merges_identical_blocks_with_counts(gen: ModuleType) -> None:
    ops = gen.trace(Toy().to("meta").eval(), _inputs)
    folded = gen.fold(ops)
    convs = [o for o in folded if o["kind"] == "conv"]
    assert [(o["name"], o["count"]) for o in convs] == [("stem", 1), ("blocks.[0-3].conv", 4)]
    assert sum(o["count"] for o in folded) == len(ops)
    flops = sum(gen.op_flops(o) * o["count"] for o in folded)
    assert flops == pytest.approx(sum(gen.op_flops(o) for o in ops))


def test_fold_keeps_different_layers_of_equal_shape_apart(gen: ModuleType) -> None:
    a = {"kind": "gemm", "m": 4, "n": 4, "k": 4}
    ops = [{"name": "main.0", **a}, {"name": "skip.0", **a}, {"name": "main.1", **a}]
    assert [o["count"] for o in gen.fold(ops)] == [1, 1, 1]
