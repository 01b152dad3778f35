"""A full SD 1.x/2.x UNet fine-tune is told what diffusers' recipe adds beyond the memory
counted if the job passes `--use_ema` (train_text_to_image.py's README command does): an fp32
copy of the UNet on the GPU (EMAModel, ema_unet.to(accelerator.device)), 4 bytes a UNet
parameter, 3.4 GB for SD 1.5's 860M, and `--offload_ema` as the way to keep it. Said where that
copy would not fit in the row's spare memory, as the k-bit upcast tip is; not for LoRA, nor for
SDXL (its script's README command passes no --use_ema), FLUX.1 or a custom DiT (no UNet)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.domain import rank
from app.domain.workload import ModelSpec, WorkloadSpec
from app.recommend.presets import load_presets
from tests.domain.fixtures import RTX4090
from tests.domain.test_rank import _cand

PRESETS = load_presets(Path(__file__).resolve().parents[2] / "data")
SD15 = PRESETS["stable-diffusion-1.5"].model
TIP = "--use_ema"


def _tips(work: WorkloadSpec, spare_gb: float) -> list[str]:
    c = _cand(RTX4090, work)
    c.available_gb = c.memory.total + spare_gb
    return rank.tips(c, work)


def _job(model: ModelSpec) -> WorkloadSpec:
    return WorkloadSpec(task="fine-tuning", model=model, precision="fp16", batch_size=1)


def test_the_ema_copy_is_named_where_it_would_not_fit() -> None:
    job = _job(SD15)
    tight = " ".join(_tips(job, 2.0))
    assert TIP in tight and "3.2 GiB more than counted" in tight  # 860M × 4 B = 3.44 GB
    assert "If you pass --use_ema" in tight and "--offload_ema" in tight
    assert not any(TIP in t for t in _tips(job, 5.0))


def test_a_lora_row_or_an_inference_row_is_not_told() -> None:
    job = _job(SD15)
    assert not any(TIP in t for t in _tips(replace(job, peft="lora"), 0.5))
    assert not any(TIP in t for t in _tips(replace(job, task="inference"), 0.5))


def test_sdxl_flux_and_a_custom_dit_are_not_told() -> None:
    for preset in ("sdxl", "flux-1-dev"):
        assert not any(TIP in t for t in _tips(_job(PRESETS[preset].model), 0.5)), preset
    dit = ModelSpec(family="diffusion", params=860e6, gflops_per_sample=803.0, input_size=512)
    assert not any(TIP in t for t in _tips(_job(dit), 0.5))
