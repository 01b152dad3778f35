"""A diffusion denoiser's training step streams its traced table's saved tensors, not the CNN
proxy's (expert review xr2, a vision researcher's FLUX.1 LoRA).

Diffusion training runs the whole-model step (no shipped table prices it: ``perf.table_prices``),
whose element-wise traffic is TRAINING_TRAFFIC × the bytes the step stores for backward. Those
bytes came from the CNN proxy (``workload.ACT_MB_PER_GFLOP_16BIT``: ResNet-50's ~6 MB per forward
GFLOP), while the memory breakdown already read the traced table (``activations.unet_saved``).
For FLUX.1's 12 B transformer the proxy stores 10× what the table does (450 GB against 44 GB a
1024² sample) and priced a QLoRA step memory-bound at 3.4 s on an RTX 4090 where Hugging Face's
flux-qlora post (huggingface/blog flux-qlora.md: 512 × 768, batch 1, gradient accumulation 4,
checkpointing, 8-bit AdamW, rank 4, cached latents and text embeddings) ran 700 optimizer steps
of 4 samples in ~41 minutes: 0.88 s a sample.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import perf
from app.domain.activations import unet_saved
from app.domain.workload import WorkloadSpec, activation_bytes, training_policy
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from tests.domain.fixtures import RTX4090

# huggingface/blog flux-qlora.md: 700 steps × 4 accumulated samples in ~41 minutes
FLUX_QLORA_4090_S_PER_SAMPLE = 41 * 60 / (700 * 4)


def _spec(**fields: Any) -> WorkloadSpec:
    spec, _ = resolve_workload(s.WorkloadIn.model_validate(fields))
    return spec


def _saved(spec: WorkloadSpec) -> float:
    assert spec.model.operators is not None
    pol = training_policy(spec)
    per = unet_saved(
        spec.model.operators, compute=pol.compute, norm=pol.residual, checkpointing=False
    )
    return per * spec.batch_size


@pytest.mark.parametrize(
    ("preset", "peft", "proxy_over_table"),
    [("flux-1-dev", "lora", 9.0), ("sdxl", "lora", 5.0), ("stable-diffusion-1.5", "none", 4.0)],
)
def test_training_traffic_scales_the_traced_saved_tensors(
    preset: str, peft: str, proxy_over_table: float
) -> None:
    spec = _spec(preset=preset, task="fine-tuning", peft=peft, batch_size=2)
    job = perf._whole_model_job(spec, True, 2.0)
    passes = 2.0 if peft == "lora" else 3.0
    saved = _saved(spec)
    assert job.traffic == pytest.approx(saved * perf.TRAINING_TRAFFIC * passes / 3.0)
    # the proxy these jobs had read stores several times what the table traces
    proxy = activation_bytes(spec, spec.batch_size, flash_attention=True, checkpointing=False)
    assert proxy > proxy_over_table * saved


def test_inference_keeps_the_proxy() -> None:
    # compiled 8-bit UNets are scored on the whole-model inference step: left as it was
    spec = _spec(preset="sdxl", task="inference", batch_size=1)
    acts = activation_bytes(spec, 1.0, flash_attention=True, act_bytes=2.0, checkpointing=False)
    assert perf._stored_bytes(spec, 1.0, True, 2.0) == acts


def test_flux_qlora_on_an_rtx_4090_is_compute_bound_near_the_published_rate() -> None:
    spec = _spec(
        preset="flux-1-dev",
        task="fine-tuning",
        peft="qlora",
        lora_rank=4,
        batch_size=1,
        model={"input_size": 624},  # 624² ≈ 512 × 768 pixels, a multiple of 16
        gradient_checkpointing=True,
        optimizer="adam8bit",
        cache_encodings=True,
    )
    one = perf.single_gpu(RTX4090, spec)
    assert one.t_act < one.t_comp  # was 2.7 s of streaming against 0.85 s of math
    ratio = one.step_s / FLUX_QLORA_4090_S_PER_SAMPLE
    assert 1 / 1.5 < ratio < 1.5  # 3.9 before
