"""Host RAM of a rented instance: one below what loading the model needs is not chosen
(cost.HostNeed; docs/methodology.md "hr")."""

from __future__ import annotations

import pytest

from app.domain.cost import (
    CHECKPOINT_SHARD_GB,
    RUNTIME_RSS_GB,
    CloudOffer,
    GpuOffers,
    RentalPolicy,
    Usage,
    choose_offer,
    choose_replica_offer,
    host_need,
    price_configuration,
    price_copies,
    price_replicas,
)
from app.domain.units import vram


def _offer(name: str, usd: float, ram_gib: float | None, gpus: int = 1) -> CloudOffer:
    return CloudOffer(
        provider="cudo", instance_type=name, gpus=gpus, usd_per_hour=usd,
        spot_usd_per_hour=None, tier="on-demand", as_of="2026-11-30", source="test",
        accelerator="H100", ram_gib=ram_gib,
    )  # fmt: skip


TINY = _offer("1x2v4gb", 1.82, 4.0)
ROOMY = _offer("1x4v8gb", 1.85, 8.0)
LLAMA_8B = host_need(16.06)  # 8.03 B parameters in bf16


def test_need_is_one_checkpoint_file_plus_each_gpu_process() -> None:
    assert LLAMA_8B is not None
    assert LLAMA_8B.shard_gb == CHECKPOINT_SHARD_GB  # a 16 GB model is read 5 GB at a time
    assert LLAMA_8B.gb(1) == pytest.approx(5.0 + 0.449, abs=1e-3)
    assert LLAMA_8B.gb(8) == pytest.approx(5.0 + 8 * RUNTIME_RSS_GB)
    small = host_need(0.05)  # ResNet-50's weights: the whole file, under one shard
    assert small is not None and small.shard_gb == 0.05
    assert host_need(None) is None and host_need(0.0) is None


def test_the_cheaper_offer_with_too_little_host_ram_is_not_chosen() -> None:
    assert choose_offer([TINY, ROOMY], 1).offer is TINY  # type: ignore[union-attr]
    chosen = choose_offer([TINY, ROOMY], 1, host=LLAMA_8B)
    assert chosen is not None and chosen.offer is ROOMY
    # a model small enough to load in 4 GiB keeps the cheaper host
    fits = choose_offer([TINY, ROOMY], 1, host=host_need(2.0))
    assert fits is not None and fits.offer is TINY


def test_an_offer_with_no_ram_listed_is_not_refused() -> None:
    unknown = _offer("no-ram", 1.50, None)
    chosen = choose_offer([TINY, unknown], 1, host=LLAMA_8B)
    assert chosen is not None and chosen.offer is unknown


def test_every_gpu_process_on_the_instance_counts() -> None:
    # 5.45 GB = 5.07 GiB for one process; eight processes: 8.59 GB = 8.0 GiB, over 7.9 GiB
    eight = _offer("8x", 10.0, 7.9, gpus=8)
    assert choose_offer([eight], 1, host=LLAMA_8B) is not None
    assert choose_offer([eight], 8, host=LLAMA_8B) is None
    # a smaller instance that holds the job and its RAM need is "smaller offered"
    cheap8 = _offer("8x-cheap", 9.0, 64.0, gpus=8)
    one = _offer("1x", 9.5, 4.0)
    chosen = choose_offer([cheap8, one], 1, host=LLAMA_8B)
    assert chosen is not None and chosen.offer is cheap8 and not chosen.smaller_offered


def test_replicas_count_the_processes_an_instance_runs() -> None:
    two = _offer("2x", 3.0, 10.0, gpus=2)
    roomy2 = _offer("2x-roomy", 3.2, 32.0, gpus=2)
    # two one-GPU replicas on a 2-GPU host: 5.0 GB + 2 × 0.449 GB = 5.5 GiB, under 10 GiB
    placed = choose_replica_offer([two, roomy2], 1, 2, host=LLAMA_8B)
    assert placed is not None and placed.choice.offer is two
    tight = _offer("2x-tight", 2.9, 5.2, gpus=2)  # one process fits (5.07 GiB), two do not
    placed = choose_replica_offer([tight, two], 1, 2, host=LLAMA_8B)
    assert placed is not None and placed.choice.offer is two
    placed = choose_replica_offer([tight, two], 1, 1, host=LLAMA_8B)
    assert placed is not None and placed.choice.offer is tight


def test_the_no_rent_reason_gives_the_figures_when_host_ram_refuses_every_offer() -> None:
    offers = GpuOffers((TINY,), ())
    pricing = price_configuration(offers, 1, RentalPolicy(), Usage(), host=LLAMA_8B)
    assert pricing.rent is None
    assert pricing.rent_reason == (
        "every accepted offer of this GPU with 1 GPU or more has at most 4 GiB of host RAM, "
        f"under the least loading the model needs, {vram(5.449):.1f} GiB: one 4.7 GiB "
        "checkpoint file at a time and 0.42 GiB for its GPU process"
    )
    # without the need, the same offer is rented
    assert price_configuration(offers, 1, RentalPolicy(), Usage()).rent is not None
    # a count no instance holds is still said as that, not as host RAM
    two = price_configuration(offers, 2, RentalPolicy(), Usage(), host=LLAMA_8B)
    assert two.rent_reason is not None and two.rent_reason.startswith("one instance has at most")
    copies = price_copies(offers, 3, RentalPolicy(), Usage(), host=LLAMA_8B)
    assert copies.rent is None and "host RAM" in (copies.rent_reason or "")
    served, placed = price_replicas(offers, 1, 2, RentalPolicy(), Usage(), host=LLAMA_8B)
    assert placed is None and "host RAM" in (served.rent_reason or "")
