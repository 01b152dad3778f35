"""The app and the calibration agree on which serving rows are outside the serving base band
(bw, 2026-12-07): every tuning-set serving workload that benchmarks/accuracy.py flags MoE or
4-bit (``_flags``: held out of the base band, a unit of that term) is flagged so by the band
inputs the answer draws (rank.serving_band_inputs), and no other."""

from __future__ import annotations

from types import ModuleType

import yaml

from app.domain import rank
from app.domain import serving as sv
from app.recommend.presets import load_presets
from app.shipped.paths import shipped_path
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100


def test_serving_band_inputs_flag_what_the_calibration_holds_out(accuracy: ModuleType) -> None:
    from benchmarks import serving_accuracy

    data = shipped_path("data")
    presets = load_presets(data)
    table = load_efficiency(data)
    decode = table.profile(H100, "cuda", "vllm", "bf16", "decode")
    runtime = sv.runtime_profile(table, "vllm", decode)
    seen = set()
    for path in serving_accuracy.DEFAULT_FILES:
        if path.name in accuracy.SERVING_BAND_HELD_BACK:
            continue
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        # as the serving validation reads a file (serving_accuracy.predict)
        meta, raws = (
            serving_accuracy._heldout_rows(doc)
            if "measurements" in doc
            else (doc["source"], doc["rows"])
        )
        for row in raws:
            cfg = serving_accuracy.row_config(row, meta)
            label = f"{row['model']} {cfg.weight_precision} tp{cfg.gpus_per_replica}"
            moe, four_bit, _ = accuracy._flags("serving", label, presets)
            model = presets[row["model"]].model
            x = rank.serving_band_inputs(H100, cfg, runtime, model=model)
            assert (x.moe, x.four_bit) == (moe, four_bit), label
            seen.add((moe, four_bit))
    # the tuning sets hold dense, MoE and fp4 rows: each kind was compared
    assert {(False, False), (True, False), (False, True)} <= seen
