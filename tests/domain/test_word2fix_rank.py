"""A row's words from its own numbers (reviews 5, 6 and 7): the wall circuits and hosts of a
build past one machine, the input pipeline of a fast image row, each GPU's share of a global
batch, the fused cross-entropy where logits fill the memory, full fine-tuning's bytes per
parameter from the row's states, and which period and resale the two bought figures count."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.domain import cost, perf, rank
from app.domain.gpu import Price
from app.domain.workload import MemoryBreakdown, WorkloadSpec, memory_breakdown
from tests.domain.fixtures import A100, H100, LLAMA3_8B, MI300X, RESNET50, RTX4090, candidate

PCIE_600W = replace(
    A100,
    slug="pcie-600w",
    name="PCIe 600W",
    form_factor="PCIe dual-slot",
    interconnect=None,
    tdp_w=600.0,
    street_price=Price(usd=10000.0, as_of="2026-01-01"),
)


_cand = candidate


def _power(c: rank.Candidate) -> str:
    return next(t for t in rank.tips(c, c.work) if "GPU power" in t)


def _training(model: object = RESNET50, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(task="training", model=model, precision="bf16", batch_size=256)
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------- wall power (rev5 #5)


def test_circuits_are_counted_and_rack_loads_are_called_rack_power() -> None:
    """42.1 kW is about 12 circuits, not "two"; past three (one three-phase 16 A/400 V feed)
    it is a rack's power."""
    assert rank.circuits(42_100) == 12
    rack = rank.circuit_said(42_100)
    assert "two" not in rack and "about 12 times" in rack
    assert "rack power (three-phase PDUs), not wall circuits" in rack
    assert "three such circuits" in rank.circuit_said(8_210)
    assert "two such circuits" in rank.circuit_said(4_300)
    assert pytest.approx(3 * 16 * 230) == rank.WALL_CIRCUITS_MAX * rank.CIRCUIT_230V_W


def test_hosts_are_counted_per_server_and_per_desktop() -> None:
    assert rank.hosts(PCIE_600W, 64) == 8  # datacenter cards: 8 a server
    assert rank.hosts(PCIE_600W, 12) == 2
    assert rank.hosts(PCIE_600W, 4) == 1
    assert rank.hosts(RTX4090, 4) == 1  # one desktop board, up to its slots
    assert rank.hosts(RTX4090, rank.DESKTOP_SLOTS) == 1
    assert rank.hosts(RTX4090, 12) == 2  # past a board: 8-card servers


def test_64_bought_pcie_cards_count_8_hosts_and_say_rack_power() -> None:
    work = _training()
    c = _cand(PCIE_600W, work, n=64)
    c.acquisition = "buy"
    tip = _power(c)
    wall = (64 * 600 + 8 * rank.HOST_W_MORE_CARDS) / rank.PSU_EFFICIENCY
    assert f"about {rank.significant(wall)} W at the wall with the 8 servers' hosts" in tip
    assert f"about {math.ceil(wall / 3680)} times a 16 A/230 V circuit" in tip
    assert "rack power (three-phase PDUs), not wall circuits" in tip
    assert "two circuits" not in tip
    # one 4-card server keeps its one host and its circuit words
    four = _cand(PCIE_600W, work, n=4)
    four.acquisition = "buy"
    assert "with the host, on a GPU server's own supplies" in _power(four)


def test_twelve_desktop_cards_are_two_servers_with_their_hosts() -> None:
    c = _cand(replace(RTX4090, tdp_w=450.0), _training(), n=12)
    tip = _power(c)
    wall = (12 * 450 + 2 * rank.HOST_W_MORE_CARDS) / rank.PSU_EFFICIENCY
    assert f"with the 2 servers' hosts, about {rank.significant(wall)} W at the wall" in tip
    assert "two such circuits" in tip  # 6.63 kW: two 16 A/230 V circuits


# ---------------------------------------------------------------- input pipeline (rev6 #7)


def test_a_fast_image_row_is_told_its_input_pipeline_must_keep_up() -> None:
    c = _cand(H100, _training(), n=8)
    rate = c.perf.throughput
    assert rate > rank.INPUT_BOUND_IMAGES_S
    tip = next((t for t in rank.tips(c, c.work) if "JPEG" in t), None)
    assert tip is not None
    assert f"At {rate:,.0f} images/s" in tip  # the row's own rate: one HGX server
    assert "DALI" in tip and "FFCV" in tip and "~700 images/s" in tip
    assert "augmenting" in tip
    # inference says decoding and resizing
    infer = _cand(H100, _training(task="inference"), n=1)
    said = next(t for t in rank.tips(infer, infer.work) if "JPEG" in t)
    assert "decoding and resizing" in said


def test_a_slow_image_row_and_a_language_model_get_no_pipeline_tip() -> None:
    c = _cand(H100, _training(), n=1)
    c.perf = replace(c.perf, throughput=rank.INPUT_BOUND_IMAGES_S * 0.9)
    assert not any("JPEG" in t for t in rank.tips(c, c.work))
    llm = _cand(H100, _training(LLAMA3_8B, batch_size=8, seq_len=1024), n=8)
    assert not any("JPEG" in t for t in rank.tips(llm, llm.work))


# ---------------------------------------------------------------- per-GPU batch (rev6 #8)


def test_a_data_parallel_row_says_each_gpus_share_of_the_global_batch() -> None:
    c = _cand(H100, _training(), n=8)
    split = next(line for line in rank.explain(c, 1, c, "fastest") if "Split over" in line)
    assert "each GPU running 32 of the global batch of 256" in split
    one = _cand(H100, _training(), n=1)
    assert not any("global batch" in line for line in rank.explain(one, 1, one, "fastest"))


def test_poor_scaling_from_a_small_share_suggests_a_larger_global_batch() -> None:
    c = _cand(H100, _training(), n=8)
    c.perf = replace(c.perf, scaling_efficiency=0.61)
    tip = next((t for t in rank.tips(c, c.work) if "global batch" in t), None)
    assert tip is not None
    assert "Each GPU runs only 32 of the global batch of 256" in tip and "61% scaling" in tip
    assert "(2,048, 256 per GPU, fits)" in tip  # the asked batch on each GPU fits 80 GB
    assert "linear rule with warmup" in tip
    # good scaling: no such tip
    c.perf = replace(c.perf, scaling_efficiency=0.95)
    assert not any("global batch" in t for t in rank.tips(c, c.work))


# ---------------------------------------------------------------- fused cross-entropy (rev7 #3)


def _with_logits(c: rank.Candidate, logits: float) -> rank.Candidate:
    # the row's own parts (a 65k-token LoRA row's logits are ~¾ of it): weights and activations
    c.memory = MemoryBreakdown(weights=16.0, activations=20.0, logits=logits)
    return c


def test_large_logits_get_the_fused_cross_entropy_tip_with_the_rows_own_figure() -> None:
    work = _training(LLAMA3_8B, task="fine-tuning", peft="lora", batch_size=8, seq_len=4096)
    c = _with_logits(_cand(H100, work, n=1), 40.0)
    assert c.memory.logits >= rank.LOGITS_SHARE * c.memory.total
    tip = next((t for t in rank.tips(c, c.work) if "Liger" in t), None)
    assert tip is not None
    assert "use_liger_kernel=True" in tip and "arXiv 2411.09009" in tip
    assert "freeing most of those 37.3 GiB" in tip  # 40 GB (10^9 bytes) in GiB
    # on ROCm, Liger (which supports AMD) but not Cut Cross Entropy
    amd = _with_logits(_cand(MI300X, work, n=1), 40.0)
    said = next(t for t in rank.tips(amd, amd.work) if "Liger" in t)
    assert "Cut Cross Entropy" not in said
    # a small share: no tip
    small = _with_logits(_cand(H100, work, n=1), 1.0)
    assert not any("Liger" in t for t in rank.tips(small, small.work))


# ---------------------------------------------------------------- bytes per parameter (rev7 #6)


@pytest.mark.parametrize(("optimizer", "said"), [("adamw", "~18 bytes"), ("adam8bit", "~12 bytes")])
def test_full_fine_tuning_bytes_per_parameter_are_the_rows_own(optimizer: str, said: str) -> None:
    work = _training(
        LLAMA3_8B, task="fine-tuning", peft="none", batch_size=1, seq_len=512, optimizer=optimizer
    )
    c = _cand(H100, work, n=2)
    tip = next(t for t in rank.tips(c, c.work) if t.startswith("Full fine-tuning"))
    assert f"keeps {said} per parameter here" in tip
    # the breakdown's states on one GPU, gradients at 4 bytes (fp32): not its gradients field,
    # their peak beside freed activations, which a long sequence sets to 0
    whole = memory_breakdown(work, num_gpus=1)
    states = whole.weights + whole.master_weights + whole.optimizer + LLAMA3_8B.params * 4e-9
    assert f"~{states * 1e9 / LLAMA3_8B.params:.0f} bytes" in tip
    longer = replace(work, seq_len=8192, batch_size=8)
    long = _cand(H100, longer, n=2)
    # the peak field moves with the batch...
    assert memory_breakdown(longer, num_gpus=1).gradients < whole.gradients
    again = next(t for t in rank.tips(long, long.work) if t.startswith("Full fine-tuning"))
    assert f"keeps {said} per parameter here" in again  # ...the bytes a parameter keeps do not


# ---------------------------------------------------------------- bought figures (rev5 #3)


def test_a_row_with_both_bought_figures_says_which_period_and_resale_each_counts() -> None:
    work = _training()
    offer = cost.CloudOffer(
        provider="p",
        instance_type="i",
        gpus=4,
        usd_per_hour=8.0,
        spot_usd_per_hour=None,
        tier="on-demand",
        as_of="2026-01-01",
        source="s",
    )
    usage = cost.Usage(hours_per_week=168, years=1, resale_fraction=0.5)
    choice = cost.OfferChoice(offer=offer, instances=1, gpus_used=4, usd_per_hour=8.0, spot=False)
    bought = cost.PurchaseOffer(usd=10000.0, condition="used", as_of="2026-01-01", source="s")
    pricing = cost.Pricing(rent=choice, buy=bought, num_gpus=4, usage=usage)
    est = perf.estimate(PCIE_600W, work, num_gpus=4)
    c = _cand(PCIE_600W, work, n=4)
    c.pricing = pricing
    c.cost = cost.estimate_cost(PCIE_600W, 4, est.throughput, 5000.0, pricing=pricing)
    line = next(x for x in rank.explain(c, 1, c, "cheapest") if x.startswith("To buy"))
    assert f"${c.cost.buy_to_finish_usd:,.0f}" in line
    assert "the whole purchase plus energy for its 208 days, nothing resold" in line
    assert "the purchase less its 50% resale plus energy over 8,736 h of use" in line
    assert "(168 h a week for 1 year)" in line
    # a job of minutes says its minutes, not "its 0 h" (lab PI's review)
    c.cost = cost.estimate_cost(PCIE_600W, 4, est.throughput, 0.2, pricing=pricing)
    line = next(x for x in rank.explain(c, 1, c, "cheapest") if x.startswith("To buy"))
    assert "energy for its " in line and " 0 h" not in line and (" min," in line or " s," in line)
    # no verdict (nothing to rent): no such line
    c.pricing = replace(pricing, rent=None)
    assert not any(x.startswith("To buy") for x in rank.explain(c, 1, c, "cheapest"))
