"""Where a diffusion pipeline's default placement (every component on the GPU) does not fit
one card: the memory levers the engine prices, and the ones people use that it does not.

Priced (their memory, not their speed): diffusers' model CPU offload (workload.model_offload:
one component resident at a time), at the job's precision and, for a DiT at 16 bits on a card
that runs it in fp8, with fp8 weights too. Named as not priced: sequential CPU offload
(diffusers' enable_sequential_cpu_offload(), which streams the weights in layer by layer at
every step, "extremely slow" in diffusers' memory guide,
https://huggingface.co/docs/diffusers/optimization/memory) and a 4-bit transformer
(bitsandbytes NF4 through diffusers' BitsAndBytesConfig, or Forge's flux1-dev-bnb-nf4,
https://github.com/lllyasviel/stable-diffusion-webui-forge/discussions/981; GGUF files under
https://github.com/city96/ComfyUI-GGUF), how FLUX.1 [dev] runs on 8–12 GB cards. FLUX.1 [dev]
on an RTX 3060 12 GB had been refused ("needs 34.9 GiB") with no word on either."""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.domain.units import gib
from app.domain.workload import ModelOffload, WorkloadSpec, model_offload
from app.vocab import HALF_PRECISIONS


@dataclass(frozen=True, slots=True)
class Lever:
    """One priced way to hold the pipeline on one card: its words, and its memory."""

    label: str  # "model CPU offload", "fp8 instead of bf16 with model CPU offload"
    precision: str  # the weights' precision under it
    offload: ModelOffload
    fits: bool  # its peak within the card's usable memory


def levers(run: WorkloadSpec, usable: float, *, fp8: bool, backend: str) -> list[Lever]:
    """The priced levers for ``run`` (a diffusion pipeline's inference, else none) on a card
    of ``usable`` GB: model CPU offload at the job's precision, then, where that does not fit
    and the card runs the DiT's matmuls in fp8 (``fp8``: the gate's answer), with fp8 weights."""
    off = model_offload(run, backend=backend)
    if off is None:
        return []
    out = [Lever("model CPU offload", run.precision, off, off.memory.total <= usable)]
    dit = not run.model.conv_layers and run.precision in HALF_PRECISIONS
    if not out[0].fits and fp8 and dit:
        off8 = model_offload(replace(run, precision="fp8"), backend=backend)
        if off8 is not None:
            label = f"fp8 instead of {run.precision} with model CPU offload"
            out.append(Lever(label, "fp8", off8, off8.memory.total <= usable))
    return out


def fitting(found: list[Lever]) -> Lever | None:
    """The first priced lever that holds the job (the least change first)."""
    return next((lv for lv in found if lv.fits), None)


def hint(run: WorkloadSpec, usable: float, *, fp8: bool, backend: str) -> str:
    """A misfit reason's words on them (appended, as the FSDP CPU offload hint is): the lever
    that holds the job and its peak, else each priced lever's peak and the levers not priced.
    A DiT's include a 4-bit transformer, and fp8 weight storage where the card runs no fp8
    math (ComfyUI's fp8_e4m3fn weights upcast to 16 bits layer by layer, which the engine does
    not price: its fp8 is the card's fp8 matmuls)."""
    found = levers(run, usable, fp8=fp8, backend=backend)
    if not found:
        return ""
    held = fitting(found)
    if held is not None:
        return (
            f"; fits with {held.label} (a peak of {gib(held.offload.memory.total)} GiB: "
            "only the denoiser stays on the GPU through the steps; the host copies it adds to "
            "each call are not priced)"
        )
    peaks = "; ".join(f"{lv.label} {gib(lv.offload.memory.total)} GiB" for lv in found)
    unpriced = ["sequential CPU offload"]
    if not run.model.conv_layers:
        unpriced.append("a 4-bit NF4 or GGUF transformer")
        if not fp8 and run.precision in HALF_PRECISIONS:
            unpriced.append("fp8 weight storage on a card without fp8 math")
    return (
        f"; the memory savers priced here do not hold it either (peaks: {peaks}); not priced "
        f"here: {', '.join(unpriced)}"
    )
