"""An answer's words write every size as figures are written (three significant figures,
whole from 1,000), never as a Python exponent: ",.3g" wrote Llama 3.1 405B's 4,867 GB spot
checkpoint as "4.87e+03 GB" in the API's warning, and a server's host RAM alike."""

from __future__ import annotations

from app.domain.spot import SpotTraining
from app.recommend.rows import _spot_numbers


def _said(checkpoint_gb: float) -> str:
    sp = SpotTraining(checkpoint_gb=checkpoint_gb, on_demand_usd_per_hour=None,
                      break_even_overhead=None, break_even_extra_h=None)  # fmt: skip
    return _spot_numbers(sp, "nebius")


def test_a_large_checkpoint_is_a_whole_number_not_an_exponent() -> None:
    said = _said(4867.2)
    assert "A checkpoint holds 4,867 GB" in said and "e+" not in said


def test_a_small_checkpoint_keeps_three_figures() -> None:
    assert "A checkpoint holds 96.4 GB" in _said(96.41)


def test_host_ram_words_write_a_servers_ram_whole() -> None:
    """The same rule where no offer has the host RAM a job needs: an 8-GPU server's 2,048 GiB
    had read "at most 2.05e+03 GiB of host RAM"."""
    from app.domain.cost import CloudOffer, HostNeed, host_short_words

    server = CloudOffer(provider="aws", instance_type="p5.48xlarge", gpus=8,
                        usd_per_hour=98.32, spot_usd_per_hour=None, tier="on-demand",
                        as_of="2026-11-30", source="test", ram_gib=2048.0)  # fmt: skip
    said = host_short_words([server], HostNeed(shard_gb=4000.0), processes=8, gpus=8)
    assert "at most 2,048 GiB of host RAM" in said and "e+" not in said
