"""Spot rentals: the checkpoint a training job writes, Young's and Daly's intervals, the
waste they leave, and the overhead at which spot stops being the cheaper rental."""

from __future__ import annotations

import math

import pytest

from app.domain import spot
from app.domain.cost import CloudOffer, OfferChoice
from app.domain.workload import WorkloadSpec, lora_params, memory_breakdown
from tests.domain.fixtures import LLAMA3_8B, RESNET50


def _train(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="fine-tuning", model=LLAMA3_8B, precision="bf16", batch_size=1, seq_len=2048
    )
    return WorkloadSpec(**{**base, **kw})  # type: ignore[arg-type]


def test_full_adamw_checkpoint_is_fp32_weights_and_two_moments() -> None:
    # 4 bytes of fp32 master weight + 8 of Adam moments per parameter: 12 bytes
    assert spot.checkpoint_gb(_train()) == pytest.approx(LLAMA3_8B.params * 12 / 1e9)
    assert spot.checkpoint_gb(_train(optimizer="sgd")) == pytest.approx(LLAMA3_8B.params * 8 / 1e9)


def test_checkpoint_is_the_memory_models_master_and_optimizer_on_all_gpus() -> None:
    """The same state the memory breakdown holds, its sharded parts summed over the GPUs."""
    work = _train()
    for n in (1, 4):
        mem = memory_breakdown(work, num_gpus=n)
        assert spot.checkpoint_gb(work) == pytest.approx((mem.master_weights + mem.optimizer) * n)
    fp32 = _train(precision="fp32", model=RESNET50, task="training")
    mem = memory_breakdown(fp32)
    assert mem.master_weights == 0.0  # fp32 training steps its weights themselves
    assert spot.checkpoint_gb(fp32) == pytest.approx(mem.weights + mem.optimizer)


def test_lora_checkpoints_its_adapters_not_the_frozen_base() -> None:
    work = _train(peft="lora")
    adapters = lora_params(LLAMA3_8B, work.lora_rank)
    assert spot.checkpoint_gb(work) == pytest.approx(adapters * 12 / 1e9)
    assert spot.checkpoint_gb(work) < spot.checkpoint_gb(_train()) / 50


def test_young_interval_minimises_the_first_order_waste() -> None:
    c, m, r = 0.05, 10.0, 0.2  # hours: a 3-minute save, an interruption every 10 h
    tau = spot.young_interval(c, m)
    assert tau == pytest.approx(math.sqrt(2 * c * m))
    best = spot.overhead_fraction(c, r, m)
    # at Young's interval the save and lost-work terms are equal: sqrt(2C/M) + R/M
    assert best == pytest.approx(math.sqrt(2 * c / m) + r / m)
    for other in (tau * 0.5, tau * 0.9, tau * 1.1, tau * 2.0):
        assert spot.overhead_fraction(c, r, m, interval_h=other) > best


def test_daly_refines_young_and_caps_at_the_mean_uptime() -> None:
    # small C/M: Daly's estimate approaches Young's (both ~ sqrt(2CM))
    assert spot.daly_interval(1e-4, 100.0) == pytest.approx(spot.young_interval(1e-4, 100.0), 1e-2)
    # Daly 2006 eq. 37 by hand at C = 0.5 h, M = 4 h
    r = 0.5 / 8.0
    assert spot.daly_interval(0.5, 4.0) == pytest.approx(
        math.sqrt(4.0) * (1 + math.sqrt(r) / 3 + r / 9) - 0.5
    )
    assert spot.daly_interval(10.0, 4.0) == 4.0  # C >= 2M


def test_overhead_rejects_impossible_inputs() -> None:
    with pytest.raises(ValueError, match="mtbi_h"):
        spot.young_interval(0.1, 0.0)
    with pytest.raises(ValueError, match="restart_h"):
        spot.overhead_fraction(0.1, -1.0, 5.0)


def test_break_even_overhead() -> None:
    # an A100 spot VM at $0.40/h against $3.67/h on demand stays cheaper up to 8.1x more time
    assert spot.break_even_overhead(0.40403, 3.673) == pytest.approx(3.673 / 0.40403 - 1)
    # a 10 % discount is spent by 11 % more time
    assert spot.break_even_overhead(2.69, 2.99) == pytest.approx(0.1115, abs=1e-4)
    assert spot.break_even_overhead(0.86, 0.43) is None  # spot not cheaper
    assert spot.break_even_overhead(1.0, 1.0) is None


def _choice(tier: str, spot_price: float | None, instances: int = 1) -> OfferChoice:
    offer = CloudOffer("azure", "NC24ads", 1, 3.673, spot_price, tier, "2026-11-30", "t", 1, "A100")
    price = spot_price if tier != "spot" and spot_price is not None else offer.usd_per_hour
    return OfferChoice(offer, instances, instances, price * instances, True)


def test_spot_training_row_figures() -> None:
    work = _train()
    sp = spot.spot_training(_choice("on-demand", 0.40403, instances=2), work, hours=10.0)
    assert sp.checkpoint_gb == pytest.approx(spot.checkpoint_gb(work))
    assert sp.on_demand_usd_per_hour == pytest.approx(2 * 3.673)  # every instance
    assert sp.break_even_overhead == pytest.approx(3.673 / 0.40403 - 1)
    assert sp.break_even_extra_h == pytest.approx(10.0 * (3.673 / 0.40403 - 1))
    # no time to finish: the fraction stands, the hours do not
    assert spot.spot_training(_choice("on-demand", 0.40403), work, None).break_even_extra_h is None
    # an offer sold only as spot has no on-demand price to break even with
    only = spot.spot_training(_choice("spot", None), work, 10.0)
    assert only.on_demand_usd_per_hour is None and only.break_even_overhead is None
    assert only.checkpoint_gb == pytest.approx(sp.checkpoint_gb)


def test_a_documented_disk_cap_gives_a_lower_bound_on_the_write_time() -> None:
    work = _train()  # 96.4 GB of state
    one = spot.spot_training(_choice("on-demand", 0.40403), work, 10.0, disk_mbps=1000.0)
    assert one.disk_mbps == 1000.0
    # MBps read as MiB/s: 96.36e9 B / (1000 × 2^20 B/s) = 91.9 s
    assert one.write_h_min == pytest.approx(LLAMA3_8B.params * 12 / (1000 * 2**20) / 3600)
    # two instances write their halves of the sharded state at once
    two = spot.spot_training(_choice("on-demand", 0.40403, 2), work, 10.0, disk_mbps=1000.0)
    assert one.write_h_min is not None
    assert two.write_h_min == pytest.approx(one.write_h_min / 2)
    none = spot.spot_training(_choice("on-demand", 0.40403), work, 10.0)
    assert none.write_h_min is None and none.disk_mbps is None
