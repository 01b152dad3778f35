"""Multi-die modules are catalogued as the devices software sees: an MI250/MI250X OAM module is
two GCDs, each a ROCm/PyTorch device of 64 GB; a Max 1550 card is two stacks, each a device in
Level Zero's default FLAT mode. Each entry's figures are one GCD's / stack's (the module's
halved where the vendor prints only the module's, marked DERIVED), so GPU counts count GCDs."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import yaml

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain import perf
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec
from tests.domain.fixtures import RULES, llm_inference

DATA = Path(__file__).resolve().parents[2] / "data"

# Qwen2.5-32B (config.json): 32.76 B parameters, 61 GiB of bf16 weights
QWEN25_32B = ModelSpec(
    family="decoder",
    params=32.76e9,
    layers=64,
    hidden_size=5120,
    num_heads=40,
    num_kv_heads=8,
    intermediate_size=27648,
    vocab_size=152064,
    max_context=32768,
)
# the whole module's / card's figures the entries carried before (ROCm's MI250 table; stas00
# and Epoch for the MI250X; Intel ARK via Lockwood and Epoch for the Max 1550)
MODULE = {
    "mi250": {"memory_gb": 128, "memory_bandwidth_gbs": 3200, "fp32_tflops": 45.3,
              "fp16_tflops": 362.1, "bf16_tflops": 362.1, "int8_tops": 362.1, "tdp_w": 560,
              "interconnect_gbs": 600},
    "mi250x": {"memory_gb": 128, "memory_bandwidth_gbs": 3280, "fp32_tflops": 47.9,
               "fp16_tflops": 383, "bf16_tflops": 383, "int8_tops": 383, "tdp_w": 560,
               "interconnect_gbs": 800},
    "max-1550": {"memory_gb": 128, "memory_bandwidth_gbs": 3276.8, "fp32_tflops": 52.43,
                 "tdp_w": 600},
}  # fmt: skip


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


@cache
def _entries() -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for name in ("amd.yaml", "intel.yaml"):
        doc = yaml.safe_load((DATA / "gpus" / name).read_text())
        out.update({e["slug"]: e for e in doc["gpus"]})
    return out


@pytest.mark.parametrize("slug", sorted(MODULE))
def test_each_figure_is_half_the_module(slug: str) -> None:
    gpu = _gpus()[slug]
    for field, whole in MODULE[slug].items():
        assert getattr(gpu, field) == pytest.approx(whole / 2, rel=1e-3), (slug, field)
    assert gpu.dies == 1  # one GCD / stack is one die: no multi-die stream share


@pytest.mark.parametrize(
    ("slug", "unit", "source"),
    [
        ("mi250", "GCD", "amd-cdna2-whitepaper"),
        ("mi250x", "GCD", "amd-cdna2-whitepaper"),
        ("max-1550", "stack", "intel-oneapi-flat-mode"),
    ],
)
def test_entries_say_they_are_per_device_and_the_halving_is_derived(
    slug: str, unit: str, source: str
) -> None:
    entry = _entries()[slug]
    notes = str(entry["notes"])
    assert notes.startswith(f"Per {unit}:"), slug
    assert "DERIVED" in notes and "GPU counts count" in notes, slug
    assert f"one {unit}" in str(entry["name"]), slug
    assert source in entry["sources"], slug  # type: ignore[operator]
    # the module's own figure stays in the note beside its halving
    whole = MODULE[slug]["memory_bandwidth_gbs"]
    assert f"{whole:g}" in notes, slug


def test_an_mi250_gcd_is_the_mi210s_gcd() -> None:
    """The MI210 is one 104-CU CDNA 2 GCD on a PCIe card: one MI250 GCD has its memory,
    bandwidth and 16-bit rate."""
    gpus = _gpus()
    gcd, mi210 = gpus["mi250"], gpus["mi210"]
    assert gcd.memory_gb == mi210.memory_gb == 64
    assert gcd.memory_bandwidth_gbs == mi210.memory_bandwidth_gbs == 1600
    assert gcd.fp16_tflops == pytest.approx(mi210.fp16_tflops, rel=0.01)


def test_in_package_link_is_cited_and_the_fabric_is_per_gcd() -> None:
    gpus = _gpus()
    for slug, links in (("mi250", 3), ("mi250x", 4)):
        gpu = gpus[slug]
        assert gpu.interconnect is not None and "per GCD" in gpu.interconnect
        assert "in-package 400 GB/s" in gpu.interconnect
        assert gpu.interconnect_gbs == links * 100  # 100 GB/s bidirectional an IF link


def test_a_32b_model_needs_two_gcds_not_one_module() -> None:
    """Qwen2.5-32B in bf16 (61 GiB of weights) fits no single GCD (64 GiB as ROCm reports it,
    less the runtime and the KV cache): 2 GPUs, i.e. one module's 2 GCDs."""
    work = llm_inference(model=QWEN25_32B)
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits(objective="fastest"))
    for slug in ("mi250", "mi250x", "max-1550"):
        one = ev.evaluate(ev.Configuration(_gpus()[slug], 1), ctx)
        assert not one.ok and one.exclusion is not None, slug
        assert one.exclusion.code == "does_not_fit", slug
        assert ev.evaluate(ev.Configuration(_gpus()[slug], 2), ctx).ok, slug


def test_batch_one_decode_runs_at_one_gcds_bandwidth() -> None:
    """An 8B decode at batch 1 on one MI250 GPU reads one GCD's 1.6 TB/s: the MI210's speed,
    not the whole module's."""
    gpus = _gpus()
    work = llm_inference()
    gcd = perf.estimate(gpus["mi250"], work).ms_per_token
    mi210 = perf.estimate(gpus["mi210"], work).ms_per_token
    whole = replace(gpus["mi250"], **MODULE["mi250"])  # type: ignore[arg-type]
    module = perf.estimate(whole, work).ms_per_token
    assert gcd is not None and mi210 is not None and module is not None
    assert gcd == pytest.approx(mi210, rel=0.05)
    assert gcd > 1.6 * module  # the module's figures read it near twice as fast


def test_no_offer_prices_a_gcd_or_stack_entry() -> None:
    """A provider's price is per module / card; these entries are one GCD or stack. No shipped
    offer names them (an offer would need its price halved and its GPU count doubled)."""
    offers = DATA / "offers"
    for path in sorted(offers.iterdir()):
        if path.suffix not in (".yaml", ".csv"):
            continue
        text = path.read_text().lower()
        for name in ("mi250", "max-1550", "max 1550"):
            assert name not in text, (path.name, name)
