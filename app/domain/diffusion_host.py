"""Host work of a diffusers pipeline that runs serially with its GPU (issue 21, 2026-12-06).

Two kinds, both counted from the pipelines' own code, neither in the UNet / VAE tables:

* Once per pipeline call, the prompt encoders (and SD 1.5's safety checker where the pipeline
  loads it) run eagerly before the denoising loop (after the decode, for the checker): a few
  hundred small kernels each, host-bound on any GPU, so their host time adds to the step.
  Eager diffusers already pays them inside its effective per-call figure (the ``pytorch``
  ``infer-diffusion`` row lumps "the text encoders"); a compiled job does not, since
  torch.compile is applied to the UNet (and VAE) only — so they are charged to ``torch-compile``
  jobs, at that eager per-call figure. A TensorRT pipeline runs its CLIP as an engine (one
  enqueue) and no checker: nothing.
* Once per UNet call, where the loop synchronises the host with the GPU every step
  (``WorkloadSpec.step_sync``): diffusers' PNDM and DDIM compare a device timestep on the host
  (``prev_timestep >= 0``, ``alphas_cumprod[timestep]`` with ``self.timesteps`` on the GPU) and
  its Euler of 0.21 compares a device sigma (``s_tmin <= sigma <= s_tmax``); TensorRT's
  demoDiffusion calls ``cudaStreamSynchronize`` after each CUDA-graph launch. A loop replayed
  as a CUDA graph (or a TensorRT engine) then cannot queue the next call while the GPU runs
  this one: the scheduler's calls after the sync, the next step's ``torch.cat`` and the
  compiled module's own call overhead run with the GPU idle. An eager or default-mode loop
  dispatches every kernel from the host anyway, its loop bound by max(GPU, host); the sync
  adds only the step's head there, inside the per-call figure, and is not charged.

Counts (ATen calls, views included, as ``benchmarks/gen_operator_tables.py`` counts them), traced
on 2026-12-06 with transformers 4.35.0 and diffusers 0.21.4 (the versions fal's harness pins) on
torch 2.13 (meta device for the towers, CPU for the scheduler step); the methodology's "cd"
paragraph (§6.7p) gives the script's steps.
"""

from __future__ import annotations

from app.domain.workload import WorkloadSpec

# CLIPTextModel over 77 tokens (openai/clip-vit-large-patch14's text tower: 12 layers, 768 wide,
# quick_gelu; transformers 4.35's eager attention): 682 calls a pass. OpenCLIP bigG's
# (CLIPTextModelWithProjection, 32 layers, 1280 wide, gelu, hidden states out): 1720.
CLIP_L_TEXT_CALLS = 682
BIGG_TEXT_CALLS = 1720
# Per pipeline call. SD 1.5's encode_prompt runs the text encoder on the prompt and again on
# the empty negative prompt (classifier-free guidance); SDXL's runs both encoders on the prompt
# and zeroes the negative embeddings (force_zeros_for_empty_prompt, True by default, with no
# negative prompt given: pipeline_stable_diffusion_xl.py ``zero_out_negative_prompt``).
PROMPT_CALLS = {
    "stable-diffusion-1.5": 2 * CLIP_L_TEXT_CALLS,
    "sdxl": CLIP_L_TEXT_CALLS + BIGG_TEXT_CALLS,
}
# StableDiffusionSafetyChecker (diffusers 0.21.4 safety_checker.py): CLIP ViT-L/14's vision
# tower at 224² (24 layers, 1024 wide: 1258 calls) and the projection, two cosine distances
# copied to the host and the per-concept checks (64). SD 1.5's checkpoint ships it and
# DiffusionPipeline.from_pretrained loads it unless told not to; its CPU image preprocessing
# (PIL resize and normalise, CLIPImageProcessor) is not counted.
SAFETY_CHECKER_CALLS = {"stable-diffusion-1.5": 1258 + 64}
# Per UNet call under a per-step sync: PNDM's steady-state step (SD 1.5's default scheduler)
# traced with the pipeline's guidance makes 35 calls, of which the last 21 follow its first
# host read of a device scalar, plus the next step's torch.cat before the UNet call: 22. (DDIM:
# 41 calls, 36 after its first read; Euler of 0.21: 26 and 20 with the next step's scaling.)
STEP_SYNC_CALLS = 22
# A torch.compile'd module's host cost per call around its CUDA graph: TorchDynamo's cache
# lookup 176 µs, the CUDA-graph tree's checks 128 µs and cudaGraphLaunch 41 µs, in PyTorch
# issue #150488's breakdown (fullgraph, one graph; 2025): a floor for the 2023 releases the
# tuning rows ran.
COMPILED_GRAPH_CALL_S = (176.0 + 128.0 + 41.0) * 1e-6

SERIAL_RUNTIME = "torch-compile"  # the runtime whose prompt work is charged here


def serial_host(work: WorkloadSpec, unet_calls: float, whole_pipeline: bool) -> tuple[float, float]:
    """(eager host calls, fixed host seconds) that run serially with the GPU in one step of a
    diffusion job: ``unet_calls`` UNet calls a step; ``whole_pipeline``: the step holds the
    prompt encoding and the decode (a denoising-step job does not). (0, 0) outside SD 1.5 and
    SDXL (FLUX.1's table holds its prompt encoders) and for jobs that pay none (above)."""
    m = work.model
    preset = m.operators.model if m.operators is not None else ""
    if m.family != "diffusion" or preset not in PROMPT_CALLS:
        return 0.0, 0.0
    calls, fixed = 0.0, 0.0
    if whole_pipeline and work.runtime == SERIAL_RUNTIME:
        calls += PROMPT_CALLS[preset]
        if work.safety_checker:
            calls += SAFETY_CHECKER_CALLS.get(preset, 0)
    replayed = (work.runtime == SERIAL_RUNTIME and work.cuda_graphs) or work.runtime == "tensorrt"
    if work.step_sync and replayed:
        calls += STEP_SYNC_CALLS * unet_calls
        if work.runtime == SERIAL_RUNTIME:
            fixed += COMPILED_GRAPH_CALL_S * unet_calls
    return calls, fixed
