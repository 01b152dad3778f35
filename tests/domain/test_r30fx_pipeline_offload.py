"""r30 review: FLUX.1 [dev] on an RTX 3060 12 GB was refused ("needs 34.9 GiB") without a
word on the memory levers people use. pipeline_offload names the ones the engine prices
(model CPU offload, with fp8 weights where the card runs them) with their peaks, and the
ones it does not (sequential CPU offload, a 4-bit transformer) as not priced."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.domain import pipeline_offload as po
from app.domain import workload as w
from app.recommend.presets import load_presets

DATA = Path(__file__).resolve().parents[2] / "data"
GIB = 2**30


@pytest.fixture(scope="module")
def flux() -> w.WorkloadSpec:
    model = load_presets(DATA)["flux-1-dev"].model
    return w.WorkloadSpec(model=model, task="inference", precision="bf16", batch_size=1)


def test_a_12_gb_card_holds_flux_under_no_priced_lever(flux: w.WorkloadSpec) -> None:
    # physics: the 11.9B-parameter transformer alone is 2 bytes a weight in bf16, 1 in fp8;
    # model CPU offload keeps it resident through the steps, so its peak is at least that
    bf16 = flux.model.params * 2 / w.GB
    fp8 = flux.model.params * 1 / w.GB
    usable = 11.8 * GIB / w.GB  # an RTX 3060 12 GB's usable memory (the engine's 11.8 GiB)
    found = po.levers(flux, usable, fp8=True, backend="cuda")
    assert [lv.precision for lv in found] == ["bf16", "fp8"]
    assert found[0].offload.memory.total >= bf16 > usable
    # the fp8 transformer beside the CUDA context alone is over a 12 GB card's usable memory
    eight = found[1].offload.memory
    assert eight.total >= fp8 + eight.framework > usable
    assert po.fitting(found) is None
    # a card without fp8 math (Ampere): one lever priced, fp8 storage named as not priced
    said = po.hint(flux, usable, fp8=False, backend="cuda")
    assert "do not hold it" in said and "model CPU offload" in said
    unpriced = said.split("not priced here: ")[1]
    for lever in ("sequential CPU offload", "4-bit NF4 or GGUF transformer", "fp8 weight"):
        assert lever in unpriced
    assert "fp8 instead of" not in said


def test_fp8_with_offload_holds_it_on_a_16_gb_fp8_card(flux: w.WorkloadSpec) -> None:
    usable = 16.0 * GIB / w.GB
    found = po.levers(flux, usable, fp8=True, backend="cuda")
    held = po.fitting(found)
    assert held is not None and held.precision == "fp8"
    assert held.label == "fp8 instead of bf16 with model CPU offload"
    said = po.hint(flux, usable, fp8=True, backend="cuda")
    assert said.startswith("; fits with fp8 instead of bf16 with model CPU offload")
    # without fp8 math no lever holds it: the bf16 transformer alone is 22.2 GiB
    assert flux.model.params * 2 / GIB > 16.0
    assert po.fitting(po.levers(flux, usable, fp8=False, backend="cuda")) is None


def test_a_card_that_holds_it_offloaded_at_its_own_precision_is_told_that_first(
    flux: w.WorkloadSpec,
) -> None:
    usable = 23.7 * GIB / w.GB  # an RTX 4090's
    found = po.levers(flux, usable, fp8=True, backend="cuda")
    assert len(found) == 1 and found[0].fits and found[0].label == "model CPU offload"


def test_training_and_a_bare_model_have_no_pipeline_levers(flux: w.WorkloadSpec) -> None:
    from dataclasses import replace

    job = replace(flux, task="fine-tuning", peft="lora")
    assert po.levers(job, 1.0, fp8=True, backend="cuda") == []
    assert po.hint(job, 1.0, fp8=True, backend="cuda") == ""
