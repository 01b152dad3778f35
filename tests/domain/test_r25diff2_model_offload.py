"""A diffusion pipeline under diffusers' model CPU offload (workload.model_offload): one
component resident at a time, every component copied in once a call; the default placement
(all resident) unchanged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import workload as w
from app.recommend.presets import load_presets

DATA = Path(__file__).resolve().parents[2] / "data"
FROZEN = 123_060_480 + 694_659_840 + 83_653_863  # CLIP-L, OpenCLIP bigG, the VAE


@pytest.fixture(scope="module")
def sdxl() -> w.ModelSpec:
    return load_presets(DATA)["sdxl"].model


def _infer(model: w.ModelSpec, **kw: object) -> w.WorkloadSpec:
    return w.WorkloadSpec(model=model, task="inference", precision="fp16", batch_size=1, **kw)  # type: ignore[arg-type]


def test_offload_keeps_only_the_unet_resident(sdxl: w.ModelSpec) -> None:
    job = _infer(sdxl)
    full = w.memory_breakdown(job)
    off = w.model_offload(job)
    assert off is not None
    unet = sdxl.params * 2 / w.GB
    assert off.memory.weights == pytest.approx(unet)
    # the encoders and VAE leave the peak; workspace and context stay the default's
    # the frozen text encoders and VAE leave the card, and so does the VAE decode's transient
    # (accelerate's CpuOffload moves the previous component out before the next comes in)
    assert full.total - off.memory.total > FROZEN * 2 / w.GB
    assert off.memory.workspace < full.workspace
    assert off.memory.framework == full.framework
    # an 8 GB card's 8.0 GiB: the default misses it, the offloaded pipeline does not
    assert full.total > 8 * 2**30 / 1e9 > off.memory.total
    assert not any("text encoders" in n for n in off.memory.notes)
    # every call copies all of them in again: maybe_free_model_hooks offloads them at its end
    assert off.moved_bytes == pytest.approx((sdxl.params + FROZEN) * 2)


def test_the_default_placement_still_holds_every_component(sdxl: w.ModelSpec) -> None:
    job = _infer(sdxl)
    w.model_offload(job)
    assert w.memory_breakdown(job).weights == pytest.approx((sdxl.params + FROZEN) * 2 / w.GB)


def test_fp32_offload_moves_four_bytes_a_parameter(sdxl: w.ModelSpec) -> None:
    off = w.model_offload(replace(_infer(sdxl), precision="fp32"))
    assert off is not None
    assert off.moved_bytes == pytest.approx((sdxl.params + FROZEN) * 4)


def test_nothing_to_offload_outside_a_pipelines_inference(sdxl: w.ModelSpec) -> None:
    lora = w.WorkloadSpec(
        model=sdxl, task="fine-tuning", precision="fp16", batch_size=1, peft="lora", lora_rank=8
    )
    assert w.model_offload(lora) is None  # training encodes every batch
    bare = replace(sdxl, operators=None, decoder_operators=None)
    assert w.model_offload(_infer(bare)) is None  # a UNet with no known pipeline
