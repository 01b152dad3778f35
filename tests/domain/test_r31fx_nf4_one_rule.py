"""r31 review: NF4 (bitsandbytes) on a Mac had two answers: QLoRA refused from an older
bitsandbytes page ("Apple Silicon planned"), while NF4 inference ran, and the bitsandbytes
0.50 guide the rules cite lists Apple Silicon as supported. One rule now holds, read by both
(compat.FORMAT_FEATURES): bitsandbytes 0.50's 4-bit ops run on MPS (bitsandbytes PR #1983,
with a slower fallback below macOS 26: experimental); its 8-bit optimizers do not yet."""

from __future__ import annotations

from pathlib import Path

import yaml

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
MAC = next(g for g in read_gpu_specs(DATA) if g.slug == "apple-m2-max")


def test_qlora_and_nf4_inference_on_a_mac_read_one_rule() -> None:
    rules = load_rules(DATA)
    qlora = compat.feature_status(MAC, "bitsandbytes_4bit", rules, "mps")
    assert qlora is not None and qlora.status == "experimental" and qlora.note
    why, caveats = compat.job_support(MAC, compat.job_features("qlora", "adamw"), rules, "mps")
    assert why is None and caveats and "experimental" in caveats[0]
    for runtime in ("transformers", "pytorch"):
        nf4 = compat.weights_status(MAC, runtime, "int4", rules, "mps", "nf4")
        assert nf4 == qlora  # the same rule, the same words


def test_the_mac_rule_cites_the_current_release_not_the_older_page() -> None:
    data = yaml.safe_load((DATA / "frameworks.yaml").read_text())
    mac = [
        r
        for r in data["features"]
        if str(r["feature"]).startswith("bitsandbytes") and r.get("vendor") == "apple"
    ]
    assert len(mac) == 2  # one rule a feature
    for rule in mac:
        assert rule["source"] == "bnb-mps-backend" and rule["source"] in data["sources"]
    rules = load_rules(DATA)
    adam8 = compat.feature_status(MAC, "bitsandbytes_8bit_optim", rules, "mps")
    assert adam8 is not None and adam8.status == "unsupported"
