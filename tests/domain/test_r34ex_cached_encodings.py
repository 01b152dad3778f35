"""A diffusion fine-tune whose trainer caches its text encoders' outputs and its latents holds
neither the text encoders nor the VAE (workload.WorkloadSpec.cached_encodings), and the planner
adds that saver only where the job needs it (evaluate._build_ladder). Published: SimpleTuner's
FLUX quickstart (text embeds and latents cached) fits a rank-16 NF4 LoRA of FLUX.1 [dev] in "a
bit more than 9G", and kohya-ss sd-scripts' docs/flux_train_network.md trains it on 16 GB and
12 GB cards with --cache_text_encoder_outputs --cache_latents."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import evaluate as ev
from app.domain import workload as w
from app.recommend.presets import load_presets
from tests.domain.fixtures import LLAMA3_8B

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def presets() -> dict[str, w.ModelSpec]:
    loaded = load_presets(DATA)
    return {k: loaded[k].model for k in ("sdxl", "flux-1-dev")}


def _tune(model: w.ModelSpec, peft: str, **flags: object) -> w.WorkloadSpec:
    one_pass = replace(model, passes_per_sample=1)
    job = w.WorkloadSpec(
        model=one_pass, task="fine-tuning", precision="bf16", batch_size=1, peft=peft,
        lora_rank=16, gradient_checkpointing=True,
    )  # fmt: skip
    return job.with_flags(**flags) if flags else job


def test_cached_encodings_drop_exactly_the_frozen_encoders_and_vae(
    presets: dict[str, w.ModelSpec],
) -> None:
    for name, model in presets.items():
        held = w.memory_breakdown(_tune(model, "lora"))
        cached = w.memory_breakdown(_tune(model, "lora", cached_encodings=True))
        frozen = sum(w.PIPELINE_FROZEN_PARAMS[name].values()) * 2 / w.GB  # 16-bit
        assert held.weights - cached.weights == pytest.approx(frozen), name
        # nothing else moves: the denoiser, its adapters and activations are the same
        assert cached.activations == pytest.approx(held.activations)
        assert cached.adapters == pytest.approx(held.adapters)
        assert any("not held" in n and "cached before training" in n for n in cached.notes)
        assert not any(n.startswith("weights include") for n in cached.notes)


def test_flux_nf4_lora_with_cached_encodings_is_simpletuners_9_gb(
    presets: dict[str, w.ModelSpec],
) -> None:
    """SimpleTuner, documentation/quickstart/FLUX.md: a rank-16 LoRA "a bit more than 9G VRAM
    when quantising to NF4", text embeds cached; holding the 4.8B T5-XXL beside it was 19.9 GB."""
    held = w.memory_breakdown(_tune(presets["flux-1-dev"], "qlora"))
    cached = w.memory_breakdown(_tune(presets["flux-1-dev"], "qlora", cached_encodings=True))
    assert held.total > 16.0  # the T5-XXL alone is 9.5 GB at 16 bits
    assert 9.0 < cached.total < 11.0


def test_inference_ignores_the_training_cache(presets: dict[str, w.ModelSpec]) -> None:
    infer = w.WorkloadSpec(model=presets["sdxl"], task="inference", precision="fp16")
    assert w.memory_breakdown(infer.with_flags(cached_encodings=True)).weights == pytest.approx(
        w.memory_breakdown(infer).weights
    )


def test_the_ladder_caches_encodings_after_checkpointing_and_only_for_pipelines(
    presets: dict[str, w.ModelSpec],
) -> None:
    allowed = frozenset(ev.SAVER_LABELS)
    job = _tune(presets["flux-1-dev"], "qlora", gradient_checkpointing=False)
    steps = [savers for savers, _ in ev._build_ladder(job, allowed)]
    assert steps[:3] == [(), ("checkpointing",), ("checkpointing", "cache_encodings")]
    # not where the request did not leave it to the engine
    bare = ev._build_ladder(job, allowed - {"cache_encodings"})
    assert all("cache_encodings" not in savers for savers, _ in bare)
    # a decoder LLM has no pipeline to cache
    llm = w.WorkloadSpec(task="fine-tuning", model=LLAMA3_8B, peft="lora", batch_size=4)
    assert all("cache_encodings" not in s for s, _ in ev._build_ladder(llm, allowed))
    # a training step of the saver runs with the flag set
    assert ev._with_savers(job, ("cache_encodings",), None).cached_encodings
