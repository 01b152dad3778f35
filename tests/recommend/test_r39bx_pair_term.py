"""The runtime × architecture term's units and coverage, as the bands calibration builds them
(benchmarks/accuracy.py; app/domain/bands.py UNMEASURED_PAIR)."""

from __future__ import annotations

from pathlib import Path

from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
LLM = ROOT / "tests" / "data" / "llm_inference.yaml"


def _rows(accuracy, runtime: str, arch: str, n: int = 3) -> list:
    return [
        accuracy.CalRow(
            regime="decode",
            runtime=runtime,
            workload=f"{runtime} w{i}",
            slug=f"{arch} g{j}",
            vendor="nvidia",
            architecture=arch,
            ratio=1.0 + 0.01 * i - 0.02 * j,
        )
        for i in range(n)
        for j in range(n)
    ]


def test_a_pair_unit_needs_its_runtime_and_architecture_in_the_rest(accuracy) -> None:
    # A on Ampere and Hopper, B on Hopper and Ada: A-on-Hopper and B-on-Hopper leave both
    # their runtime and their architecture in the rest; A-on-Ampere and B-on-Ada take their
    # architecture with them (the architecture widening's units, not this one's)
    rows = [
        *_rows(accuracy, "A", "Ampere"),
        *_rows(accuracy, "A", "Hopper"),
        *_rows(accuracy, "B", "Hopper"),
        *_rows(accuracy, "B", "Ada Lovelace"),
    ]
    units = accuracy._pair_units(rows, "decode", None)
    assert [u.unit for u in units] == ["decode A Hopper", "decode B Hopper"]
    assert all(len(u.ratios) == 9 for u in units)
    # and the table those rows give records the pairs, so a row there draws the pair term
    table = accuracy._table_of(rows, [])
    assert ("A", "Ada Lovelace") not in table.covered_pairs["decode"]
    assert ("A", "Hopper") in table.covered_pairs["decode"]


def test_shipped_pairs_are_the_calibration_sets(accuracy) -> None:
    table = load_efficiency(ROOT / "data")
    pairs = accuracy.covered_pairs(accuracy.calibration_rows(ROOT / "data", TRAIN, LLM))
    assert table.covered_pairs == {
        regime: frozenset((rt, a) for rt, archs in by_rt.items() for a in archs)
        for regime, by_rt in pairs.items()
    }
    # serving: vLLM measured on Ada (an RTX 4090) and Hopper (GPUStack's DeepSeek-R1 on H200s),
    # TensorRT-LLM on Hopper and Blackwell
    assert pairs["serving"] == {
        "tensorrt-llm": ["Blackwell", "Hopper"],
        "vllm": ["Ada Lovelace", "Hopper"],
    }
    assert "runtime_architecture" in table.extrapolation
