"""A preset's shipped operator table (data/operators/<preset>.yaml) reaches the engine."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from app.recommend import schemas as s
from app.recommend.presets import load_presets
from app.recommend.workloads import resolve_workload

ROOT = Path(__file__).resolve().parents[2]

TABLE = {
    "model": "resnet-50",
    "source": "hand-written for this test",
    "input": {"channels": 3, "height": 224, "width": 224},
    "gflops_forward": 0.24,
    "ops": [
        {"kind": "conv", "name": "stem", "count": 1, "c_in": 3, "c_out": 64, "h_in": 224,
         "w_in": 224, "h_out": 112, "w_out": 112, "r": 7, "s": 7, "stride": 2, "groups": 1},
        {"kind": "gemm", "name": "fc", "count": 1, "m": 1, "n": 1000, "k": 2048},
    ],
}  # fmt: skip


def _data_with_table(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("workloads.yaml", "efficiency.yaml", "frameworks.yaml"):
        shutil.copy(ROOT / "data" / name, data / name)
    (data / "operators").mkdir()
    (data / "operators" / "resnet-50.yaml").write_text(yaml.safe_dump(TABLE), encoding="utf-8")
    return data


def test_a_shipped_table_rides_on_its_preset_and_is_dropped_when_the_shape_changes(
    tmp_path: Path,
) -> None:
    # the shape is the architecture: a new image side keeps the table, rescaled to it
    # (tests/domain/test_table_resize.py); a new depth drops it
    data = _data_with_table(tmp_path)
    assert load_presets(data)["resnet-50"].model.operators is not None
    assert load_presets(data)["bert-base"].model.operators is None  # no file: whole-model path
    as_shipped, _ = resolve_workload(s.WorkloadIn(preset="resnet-50"), data)
    assert as_shipped.model.operators is not None
    assert as_shipped.model.operators.ops[0]["name"] == "stem"
    bigger = s.WorkloadIn.model_validate({"preset": "resnet-50", "model": {"input_size": 448}})
    resized, _ = resolve_workload(bigger, data)
    assert resized.model.input_size == 448 and resized.model.operators is not None
    assert resized.model.operators.ops[0]["h_in"] == 448
    deeper = s.WorkloadIn.model_validate({"preset": "resnet-50", "model": {"layers": 101}})
    assert resolve_workload(deeper, data)[0].model.operators is None
