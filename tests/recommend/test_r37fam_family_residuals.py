"""benchmarks/family_residuals.py reads the tuning sets' residuals by GPU family, operator mix
and die (2026-12-07, session 37 "fam"): a GPU's family is its catalog segment (datacenter split
by memory type), a row's class its network's operators and whether its runtime is eager, and a
row's residual is its m/p over its workload's geometric mean (the level taken out)."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain.gpu import GpuSpec
from tests.support import load_benchmark

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def mod() -> ModuleType:
    return load_benchmark("family_residuals.py", "family_residuals")


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _row(mod: ModuleType, regime: str, runtime: str, workload: str, slug: str, ratio: float) -> Any:
    return mod.acc.CalRow(regime, runtime, workload, slug, "nvidia", "ampere", ratio)


@pytest.mark.parametrize(
    ("slug", "family"),
    [
        ("a100-sxm4-40gb", "dc-hbm"),
        ("v100-sxm2-16gb", "dc-hbm"),
        ("a10", "dc-gddr"),  # GA102 in a datacenter board: GDDR6
        ("t4", "dc-gddr"),
        ("rtx-a6000", "workstation"),
        ("rtx-3090", "geforce"),
        ("rtx-4090", "geforce"),
        ("mi300x", "amd"),
    ],
)
def test_family_follows_the_catalogs_segment_and_memory(
    mod: ModuleType, gpus: dict[str, GpuSpec], slug: str, family: str
) -> None:
    assert mod.family(gpus[slug]) == family


@pytest.mark.parametrize(
    ("regime", "runtime", "workload", "cls"),
    [
        ("train", "pytorch", "resnet50 fp16", "conv-eager"),  # Lambda's NCHW CNN training
        ("train", "pytorch", "bert_large_squad fp16", "transformer-eager"),
        ("infer-diffusion", "torch-compile", "stable-diffusion-1.5 torch-compile", "conv-graph"),
        ("infer-cnn", "pytorch", "dle resnext101-32x4d pytorch fp16 8", "conv-eager"),
        ("train", "tensorflow", "lambda-tf vgg16 fp32", "conv-graph"),
        ("prefill", "llama.cpp", "llama.cpp cuda pp", "llm-graph"),
        ("decode", "transformers", "llama-2-7b transformers b1", "transformer-eager"),
        ("train-llm", "megatron", "pretrain gpt-22b", "llm-graph"),
    ],
)
def test_regime_class_reads_the_operator_mix_and_eagerness(
    mod: ModuleType, regime: str, runtime: str, workload: str, cls: str
) -> None:
    assert mod.regime_class(_row(mod, regime, runtime, workload, "a10", 1.0)) == cls


def test_precision_reads_fp32_and_tf32_words_only(mod: ModuleType) -> None:
    assert mod.precision_of(_row(mod, "train", "pytorch", "resnet50 fp32", "a10", 1)) == "fp32"
    tf32 = _row(mod, "train", "tensorflow", "lambda-tf resnet-50 tf32", "a10", 1)
    assert mod.precision_of(tf32) == "fp32"
    # a row that names no fp32/tf32 word runs 16-bit (or lower) tensor math
    assert (
        mod.precision_of(_row(mod, "train-llm", "pytorch", "pretrain mpt-1b", "a10", 1)) == "16-bit"
    )
    assert mod.precision_of(_row(mod, "train", "pytorch", "resnet50 fp16", "a10", 1)) == "16-bit"


def test_relative_takes_each_workloads_level_out(mod: ModuleType) -> None:
    rows = [
        _row(mod, "train", "pytorch", "w1", "a100-sxm4-40gb", 2.0),
        _row(mod, "train", "pytorch", "w1", "rtx-3090", 0.5),
        _row(mod, "train", "pytorch", "w2", "a100-sxm4-40gb", 1.2),
        _row(mod, "train", "pytorch", "w2", "rtx-3090", 1.2 * 1.44),
        # one GPU: nothing to rank it against, dropped
        _row(mod, "train", "pytorch", "w3", "rtx-3090", 3.0),
    ]
    out = {(r.workload, r.slug): x for r, x in mod.relative(rows)}
    assert set(out) == {(w, s) for w in ("w1", "w2") for s in ("a100-sxm4-40gb", "rtx-3090")}
    assert out[("w1", "a100-sxm4-40gb")] == pytest.approx(2.0)
    assert out[("w1", "rtx-3090")] == pytest.approx(0.5)
    assert out[("w2", "rtx-3090")] == pytest.approx(1.2)  # 1.44 ÷ √1.44
    for w in ("w1", "w2"):
        prod = math.prod(x for (k, _), x in out.items() if k == w)
        assert prod == pytest.approx(1.0)


def test_by_die_splits_one_compute_capability_across_segments(
    mod: ModuleType, gpus: dict[str, GpuSpec]
) -> None:
    rows = [
        _row(mod, "train", "pytorch", "resnet50 fp16", "a10", 1.2),
        _row(mod, "train", "pytorch", "resnet50 fp16", "rtx-3090", 1.2),
        _row(mod, "train", "pytorch", "resnet50 fp16", "a100-sxm4-40gb", 0.8),
        _row(mod, "prefill", "llama.cpp", "llama.cpp cuda pp", "rtx-3090", 1.0),
        _row(mod, "prefill", "llama.cpp", "llama.cpp cuda pp", "a100-sxm4-40gb", 1.0),
    ]
    die = mod.by_die(rows, gpus, ("conv-eager", "transformer-eager"))
    # the llama.cpp rows are not eager PyTorch: left out
    assert set(die) == {
        ("8.6", "dc-gddr", "16-bit"),
        ("8.6", "geforce", "16-bit"),
        ("8.0", "dc-hbm", "16-bit"),
    }
    assert die[("8.6", "dc-gddr", "16-bit")] == pytest.approx(die[("8.6", "geforce", "16-bit")])
    assert die[("8.6", "geforce", "16-bit")][0] > die[("8.0", "dc-hbm", "16-bit")][0]
