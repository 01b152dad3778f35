"""The efficiency table's per-snapshot lookups (efficiency.ProfileTable) are the profiles and
usable memory worked out afresh from the rows, for every catalog GPU × backend × runtime ×
precision × regime."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import efficiency, evaluate
from app.domain.efficiency import EfficiencyTable, parse_table, resolve
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec, WorkloadSpec
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
REGIMES = ("train", "train-llm", "infer", "infer-cnn", "infer-diffusion", "prefill", "decode")
PRECISIONS = ("fp32", "bf16", "fp8")  # fp32 no row names; bf16 and fp8 the power-cap rows do


@pytest.fixture(scope="module")
def table() -> EfficiencyTable:
    # a table of its own: load_efficiency's cached one keeps the profiles every other test in
    # the process looked up, which the count of distinct profiles below would include
    return load_efficiency.__wrapped__(DATA)


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


def _runtimes(table: EfficiencyTable) -> list[str]:
    named = {w.strip() for row in table.rows for w in row.match.get("runtime", "").split("|") if w}
    return sorted(named | set(table.default_runtime.values()) | {"no-such-runtime"})


def test_every_lookup_equals_a_fresh_resolution(
    table: EfficiencyTable, catalog: list[GpuSpec]
) -> None:
    runtimes = _runtimes(table)
    assert len(runtimes) > 10
    checked = 0
    for gpu in catalog:
        for backend in sorted(set(gpu.backends) | {"cuda"}):
            for runtime in runtimes:
                for regime in REGIMES:
                    for precision in PRECISIONS:
                        got = table.profile(gpu, backend, runtime, precision, regime)
                        assert got == resolve(table, gpu, backend, runtime, precision, regime)
                        checked += 1
    assert checked > 30_000
    # one profile per tuple the rows tell apart: far fewer than the lookups. The power-cap rows
    # (2026-12-05) name bf16 and, for W8A16 prompts on Ampere, fp8, so each of the three
    # precisions here projects apart: 4620 profiles with bf16 named, 6930 with fp8 too (2310
    # fp8 tuples, all equal to their unnamed twins save the 30 compute capability 8.0 and 8.6
    # prompt ones), of 49455 lookups: ~7 lookups a profile, where a cache per lookup holds ~1
    assert len(table.profiles._profiles) < checked / 6


def test_usable_memory_equals_the_rule_worked_out_afresh(
    table: EfficiencyTable, catalog: list[GpuSpec]
) -> None:
    for gpu in catalog:
        for runtime in _runtimes(table):
            for task in ("training", "inference"):
                # the serving runtime's share of the device (vLLM gpu_memory_utilization;
                # SGLang 0.5's mem_fraction_static, its reserve rule on the GPU's memory in
                # MiB at tp 1) for inference on it; a share of free memory, training or none: 1
                spec = table.serving.get(runtime)
                share = 1.0
                if task == "inference" and spec is not None and not spec.of_free:
                    share = spec.memory_utilization
                    if spec.reserve_rule is not None:
                        share = spec.reserve_rule.share(efficiency.device_mib(gpu), 1)
                work = dataclasses.replace(_job(table), runtime=runtime, task=task)
                assert evaluate.usable_gb(gpu, work) == efficiency.usable_gb(gpu, share)


def _job(table: EfficiencyTable) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=ModelSpec(family="decoder", params=1e9),
        precision="bf16",
        batch_size=1,
        efficiency=table,
    )


def test_an_edited_gpu_is_looked_up_by_its_own_values() -> None:
    rows = {
        "rows": [
            {"runtime": "x", "memory": 0.8},
            {"runtime": "x", "memory_kind": "hbm", "memory": 0.5},
            {"runtime": "x", "architecture": "Hopper|Blackwell", "kernel_us": 1.0},
        ]
    }
    table = parse_table(rows)
    gpu = read_gpu_specs(DATA)[0]
    gddr = dataclasses.replace(gpu, memory_type="GDDR6", architecture="Ampere")
    hbm = dataclasses.replace(gddr, memory_type="HBM3", architecture="hopper")
    assert table.profile(gddr, "cuda", "x", "bf16", "infer").memory == 0.8
    assert table.profile(hbm, "cuda", "x", "bf16", "infer").memory == 0.5
    assert table.profile(hbm, "cuda", "x", "bf16", "infer").kernel_us == 1.0
    assert table.profile(gddr, "cuda", "x", "bf16", "infer").kernel_us == 4.0
    # two architectures no row names share one profile
    other = dataclasses.replace(gddr, architecture="Turing")
    assert table.profile(other, "cuda", "x", "bf16", "infer") is table.profile(
        gddr, "cuda", "x", "bf16", "infer"
    )
    assert table.runtime_value("x", "memory") == 0.8
    assert table.runtime_value("y", "memory") is None
