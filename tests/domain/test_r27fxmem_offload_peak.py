"""Model CPU offload's peak (workload.model_offload): each component with its own transient
only, because accelerate's hook moves the previous component out and empties the cache before
the next comes in; the default placement (every component resident) unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain import workload as w
from app.domain.activations import table_transient
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
PRESETS = load_presets(DATA)
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def _work(preset: str) -> w.WorkloadSpec:
    p = PRESETS[preset]
    return w.WorkloadSpec(
        model=p.model,
        task="inference",
        precision=p.defaults["precision"],
        batch_size=1,
        runtime="pytorch",
        efficiency=load_efficiency(DATA),
    )


def test_flux_offload_peak_is_the_transformer_with_its_own_op() -> None:
    work = _work("flux-1-dev")
    m = work.model
    assert m.operators is not None and m.decoder_operators is not None
    off = w.model_offload(work)
    assert off is not None
    unet_op = table_transient(m.operators, 2.0)
    vae_op = table_transient(m.decoder_operators, 2.0)
    assert vae_op > unet_op  # the decode's op is the larger: it must not sit on the transformer
    assert off.memory.weights == pytest.approx(m.params * 2 / w.GB)
    assert off.memory.workspace == pytest.approx(unet_op / w.GB)
    assert off.memory.total == pytest.approx((m.params * 2 + unet_op) / w.GB + off.memory.framework)
    # a 24 GB GeForce card now holds it (diffusers' FLUX docs run it there with offload)
    for slug in ("rtx-4090", "rtx-3090"):
        assert off.memory.total <= ev.usable_gb(GPUS[slug], work) < w.memory_breakdown(work).total


@pytest.mark.parametrize("preset", ["sdxl", "stable-diffusion-1.5", "flux-1-dev"])
def test_default_placement_keeps_the_decode_and_slack(preset: str) -> None:
    work = _work(preset)
    full = w.memory_breakdown(work)
    m = work.model
    assert m.operators is not None and m.decoder_operators is not None
    peak = max(table_transient(m.operators, 2.0), table_transient(m.decoder_operators, 2.0))
    slack = w.INFERENCE_FRAGMENTATION * full.weights
    assert full.workspace == pytest.approx(slack + peak / w.GB)


def test_vae_is_the_peak_where_it_outweighs_the_unet() -> None:
    """A small UNet at a large batch: the VAE's decode (weights + op) can be the largest
    component; the peak then is the VAE's, its transient beside its own weights."""
    work = _work("stable-diffusion-1.5")
    big = work.with_flags(batch_size=16)
    m = big.model
    assert m.decoder_operators is not None and m.operators is not None
    off = w.model_offload(big)
    assert off is not None
    vae_w = w.pipeline_frozen_params(m)["VAE"] * 2
    vae = vae_w + 16 * table_transient(m.decoder_operators, 2.0)
    unet = m.params * 2 + 16 * table_transient(m.operators, 2.0)
    assert off.memory.total - off.memory.framework == pytest.approx(max(vae, unet) / w.GB)
