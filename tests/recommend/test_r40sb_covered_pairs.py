"""Each coverage fact once (session 40, sb): data/efficiency.yaml's `bands.covered` blocks state
each regime's runtime × architecture pairs, and the runtimes and architectures the regime
measured are read off them (efficiency.parse_table), not stored beside them; the bands writer
(benchmarks/accuracy.py covered_lines, --write-bands) writes that form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.domain.efficiency import parse_table
from app.shipped import yamlio

ROOT = Path(__file__).resolve().parents[2]
EFFICIENCY = ROOT / "data" / "efficiency.yaml"
TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
LLM = ROOT / "tests" / "data" / "llm_inference.yaml"


def _doc() -> dict[str, Any]:
    return yamlio.safe_load(EFFICIENCY.read_text(encoding="utf-8"))


def _shipped_block() -> list[str]:
    lines = EFFICIENCY.read_text(encoding="utf-8").splitlines()
    start = lines.index("  covered:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    return lines[start:end]


def test_the_shipped_blocks_state_the_pairs_alone() -> None:
    blocks = _doc()["bands"]["covered"]
    assert blocks
    for regime, block in blocks.items():
        assert "pairs" in block, regime
        assert "runtimes" not in block and "architectures" not in block, regime


def test_the_sets_read_off_the_pairs_are_the_calibration_sets(accuracy) -> None:
    # what the file stored beside the pairs before: accuracy.band_coverage's lists
    stored = accuracy.band_coverage(ROOT / "data", TRAIN, LLM)
    table = parse_table(_doc())
    assert table.covered == {
        regime: (frozenset(runtimes), frozenset(archs))
        for regime, (runtimes, archs) in stored.items()
    }
    # a file written before (the lists beside the pairs) reads the same
    old = _doc()
    for regime, (runtimes, archs) in stored.items():
        block = old["bands"]["covered"][regime]
        old["bands"]["covered"][regime] = {"runtimes": runtimes, "architectures": archs, **block}
    assert parse_table(old).covered == table.covered
    assert parse_table(old).covered_pairs == table.covered_pairs


def test_the_writer_writes_the_shipped_block(accuracy) -> None:
    rows = accuracy.calibration_rows(ROOT / "data", TRAIN, LLM)
    written = accuracy.covered_lines(
        accuracy.covered_pairs(rows),
        accuracy.multi_gpu_regimes(ROOT / "data", TRAIN, LLM),
        accuracy.multi_gpu_spans(rows),
    )
    assert written == _shipped_block()
    # and the loaded table writes itself back unchanged
    table = parse_table(_doc())
    pairs: dict[str, dict[str, list[str]]] = {}
    for regime, by_pair in table.covered_pairs.items():
        for rt, arch in by_pair:
            pairs.setdefault(regime, {}).setdefault(rt, []).append(arch)
    assert accuracy.covered_lines(pairs, table.multi_gpu, table.multi_gpu_spans) == written
