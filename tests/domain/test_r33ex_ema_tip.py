"""A full Stable Diffusion fine-tune is told what diffusers' own recipe adds beyond the memory
counted: its README command runs `--use_ema`, an fp32 copy of the UNet on the GPU (EMAModel,
ema_unet.to(accelerator.device)), 4 bytes a UNet parameter, 3.4 GB for SD 1.5's 860M. Said where
that copy would not fit in the row's spare memory, as the k-bit upcast tip is; not for LoRA."""

from __future__ import annotations

from dataclasses import replace

from app.domain import rank
from app.domain.workload import ModelSpec, WorkloadSpec
from tests.domain.fixtures import RTX4090
from tests.domain.test_rank import _cand

SD15 = ModelSpec(family="diffusion", params=860e6, gflops_per_sample=803.0, input_size=512)
TIP = "--use_ema"


def _tips(work: WorkloadSpec, spare_gb: float) -> list[str]:
    c = _cand(RTX4090, work)
    c.available_gb = c.memory.total + spare_gb
    return rank.tips(c, work)


def test_the_ema_copy_is_named_where_it_would_not_fit() -> None:
    job = WorkloadSpec(task="fine-tuning", model=SD15, precision="fp16", batch_size=1)
    tight = " ".join(_tips(job, 2.0))
    assert TIP in tight and "3.2 GiB more than counted" in tight  # 860M × 4 B = 3.44 GB
    assert not any(TIP in t for t in _tips(job, 5.0))


def test_a_lora_row_or_an_inference_row_is_not_told() -> None:
    job = WorkloadSpec(task="fine-tuning", model=SD15, precision="fp16", batch_size=1)
    assert not any(TIP in t for t in _tips(replace(job, peft="lora"), 0.5))
    assert not any(TIP in t for t in _tips(replace(job, task="inference"), 0.5))
