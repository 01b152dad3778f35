"""The 16-bit peak the engine derives (fp32 × the architecture's tensor ratio) against every
GPU that publishes both figures: a derivation that disagrees is a wrong ratio or a wrong figure."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import perf

ROOT = Path(__file__).resolve().parents[2]
# Published exceptions the per-generation ratio cannot know, each with its reason.
KNOWN = {
    "titan-rtx": "TITAN RTX runs FP32-accumulate tensor math at full rate, unlike GeForce Turing",
    "l40": "L40 publishes half the L40S tensor rate on the same AD102 at the same fp32 rate",
}


def test_derived_16_bit_peaks_match_published_ones() -> None:
    checked, off = 0, {}
    for g in read_gpu_specs(ROOT / "data"):
        if g.vendor != "nvidia" or not g.fp16_tflops or not g.fp32_tflops:
            continue
        probe = dataclasses.replace(g, fp16_tflops=None, bf16_tflops=None, tf32_tflops=None)
        derived, is_derived = perf.peak_tflops(probe, "fp16")
        if not derived or not is_derived:
            continue
        checked += 1
        ratio = g.fp16_tflops / derived
        if not 0.9 <= ratio <= 1.1:
            off[g.slug] = round(ratio, 2)
    assert checked >= 20
    assert set(off) <= set(KNOWN), off
