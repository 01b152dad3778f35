"""An open-loop load past a shape's saturation says how many replicas of it carry the load, at
saturation and at 80 % of it (the SRE's question; an estimate had said only "beyond")."""

from __future__ import annotations

import math
import re

from app.domain import serving as sv
from tests.domain.fixtures import H100
from tests.domain.test_servfix_max_seqs import LLAMA70, _vllm


def test_an_overloaded_shape_names_the_replicas_that_carry_the_load() -> None:
    cfg = sv.ServingConfig(2, 1, "fp8", "bf16", "vllm")
    rt = sv.planned_runtime(
        H100, LLAMA70, cfg, sv.ServingLoad(1000, 300, requests_per_s=1), _vllm()
    )
    res = sv.evaluate(H100, LLAMA70, cfg, sv.ServingLoad(1000, 300, requests_per_s=50), runtime=rt)
    (note,) = [n for n in res.notes if "beyond this configuration" in n]
    m = re.search(r"([\d.]+) requests/s at saturation: (\d+) replicas of 2 GPUs", note)
    assert m is not None, note
    per = float(m.group(1))
    assert int(m.group(2)) == math.ceil(50 / per)
    margin = math.ceil(50 / (0.8 * per))
    assert f"{margin} at 80 % of it ({margin * 2} GPUs)" in note or margin == int(m.group(2))
    # a load it carries says nothing of replicas
    ok = sv.evaluate(H100, LLAMA70, cfg, sv.ServingLoad(1000, 300, requests_per_s=0.5), runtime=rt)
    assert not any("replicas of" in n for n in ok.notes)
