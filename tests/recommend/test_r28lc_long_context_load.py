"""A preset's long_context block is read and checked with the presets (one reader of
data/workloads.yaml), so a malformed block fails the load with its preset named rather than as
a 500 from the deploy command's own reader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.recommend.presets import load_presets
from app.shipped import yamlio
from app.shipped.rules import DATA_DIR


def _with(tmp_path: Path, long_context: dict[str, object]) -> Path:
    doc = yamlio.safe_load((DATA_DIR / "workloads.yaml").read_text(encoding="utf-8"))
    (qwen,) = [w for w in doc["workloads"] if w["id"] == "qwen3-8b"]
    qwen["long_context"] = long_context
    doc["workloads"] = [qwen]
    (tmp_path / "workloads.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return tmp_path


def test_the_shipped_qwen3_block_is_on_its_preset() -> None:
    long = load_presets()["qwen3-8b"].long_context
    assert long is not None and long.native == 40_960
    assert long.original * long.factor == 131_072


@pytest.mark.parametrize(
    "block",
    [
        {"native": 40960, "rope_type": "yarn", "factor": 4.0},  # no original length
        {"native": 40960, "rope_type": "yarn", "original_max_position_embeddings": "x",
         "factor": 4.0},
        {"native": 40960, "rope_type": "yarn", "original_max_position_embeddings": 32768,
         "factor": 1.0},  # extends nothing
    ],
)  # fmt: skip
def test_a_malformed_block_fails_the_load_naming_its_preset(
    tmp_path: Path, block: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match="qwen3-8b"):
        load_presets(_with(tmp_path, block))
