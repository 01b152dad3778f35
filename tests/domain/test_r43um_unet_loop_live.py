"""What a UNet call holds at its peak (activations.table_transient, workload._diffusion_transients):
the skip tensors diffusers' UNet2DConditionModel keeps from its down path for its up path
(``down_block_res_samples``), and the classifier-free-guidance pair the pipeline runs as one
call on 2 × batch latents (``torch.cat([latents] * 2)``) — the same latents per call the time
path prices (perf._guidance). Expected sizes are counted from SDXL's architecture
(block_out_channels 320/640/1280, two layers a down block, 128² latents at 1024²), not read
back from the engine."""

from __future__ import annotations

import pytest

from app.domain import perf
from app.domain import workload as w
from app.domain.activations import table_transient, unet_skips
from tests.domain.fixtures import preset_inference

# SDXL at 1024²: the latent is 128², the down path 128² → 64² → 32²
H0, H1, H2 = 128 * 128, 64 * 64, 32 * 32
# conv_in; down_blocks.0's two resnets and its downsampler; down_blocks.1's two transformer
# outputs and its downsampler; down_blocks.2's two transformer outputs (no downsampler)
SDXL_SKIPS = 320 * H0 * 3 + 320 * H1 + 640 * H1 * 2 + 640 * H2 + 1280 * H2 * 2


_work = preset_inference


def test_sdxl_unet_holds_its_down_path_for_the_up_path() -> None:
    table = _work("sdxl").model.operators
    assert table is not None
    skips = unet_skips(table)
    assert max(skips) == SDXL_SKIPS  # all nine, beside the mid block's and up_blocks.0's ops
    names = [str(o.get("name") or "") for o in table.ops]
    # none before the first push, none once the up path has taken them all
    assert skips[names.index("conv_in")] == 0.0
    assert skips[-1] == 0.0


def test_sdxl_unet_peak_is_its_last_up_block_with_that_blocks_skips() -> None:
    """up_blocks.2's first resnet at its SiLU: the concatenation (640 + 320 channels at 128²)
    held for the closing add, the group norm's output and the SiLU's, and the three 320-channel
    skips the block's ``res_samples`` still holds — four tensors of 960 channels, where the old
    count (no skips) had three."""
    table = _work("sdxl").model.operators
    assert table is not None
    cat = 960 * H0
    assert table_transient(table, 2.0) == pytest.approx(2.0 * (3 * cat + 3 * 320 * H0))


@pytest.mark.parametrize("preset", ["sdxl", "stable-diffusion-1.5"])
def test_a_guided_pipelines_unet_call_runs_on_the_pair(preset: str) -> None:
    work = _work(preset, batch=4)
    m = work.model
    assert m.operators is not None
    assert w.guidance_latents(m) == 2 == perf._guidance(m)
    denoise, _ = w._diffusion_transients(work, 2.0)
    assert denoise == pytest.approx(4 * 2 * table_transient(m.operators, 2.0))


def test_flux_is_guidance_distilled_and_has_no_skips() -> None:
    work = _work("flux-1-dev", batch=4)
    m = work.model
    assert m.operators is not None and m.decoder_operators is not None
    assert w.guidance_latents(m) == 1 == perf._guidance(m)
    assert max(unet_skips(m.operators)) == 0.0  # a DiT: no down path
    denoise, _ = w._diffusion_transients(work, 2.0)
    assert denoise == pytest.approx(4 * table_transient(m.operators, 2.0))


def test_a_vae_decoder_holds_no_skips() -> None:
    dec = _work("sdxl").model.decoder_operators
    assert dec is not None
    assert max(unet_skips(dec)) == 0.0


def test_sdxl_model_offload_peak_is_the_unet_with_its_pair() -> None:
    """Under model CPU offload at one image the UNet's phase is the peak (5.1 GB of weights
    beside the pair's activations, where the VAE's decode holds 3.4 GB beside 0.3)."""
    work = _work("sdxl", batch=1)
    off = w.model_offload(work)
    assert off is not None
    denoise, _ = w._diffusion_transients(work, 2.0)
    assert off.memory.weights == pytest.approx(work.weight_bytes / w.GB)
    assert off.memory.workspace == pytest.approx(denoise / w.GB)
    assert denoise == pytest.approx(2 * table_transient(work.model.operators, 2.0))  # type: ignore[arg-type]
