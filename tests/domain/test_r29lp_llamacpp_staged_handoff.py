"""llama.cpp's layer split hands its hidden state over through host memory on every card.

Its CUDA backend turns peer access on only for row-split weights (``ggml_cuda_compute_forward``
calls ``ggml_cuda_set_peer_access`` where src0's buffer is a split buffer) or, in later builds,
when GGML_CUDA_P2P is set; a layer split copies with ``cudaMemcpyPeerAsync``, which without peer
access the driver stages through the host. So an A100 SXM's NVLink and a workstation card's
PCIe peer-to-peer go unused: the hop is the host-staged PCIe link a GeForce card gets anyway
(data/efficiency.yaml ``llamacpp-peer-access``). Accelerate's device_map copies with PyTorch,
which uses peer access, and keeps the cards' link."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf, topology
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _replica(slug: str, runtime: str, n: int) -> llm_step.Replica:
    gpu = _gpus()[slug]
    table = load_efficiency(DATA)
    quantised = runtime == "llama.cpp"
    work = WorkloadSpec(
        task="inference",
        model=load_presets(DATA)["llama-3-70b"].model,
        precision="int4" if quantised else "bf16",
        batch_size=1,
        seq_len=512,
        output_tokens=1,
        runtime=runtime,
        quantization="q4_k_m" if quantised else "none",
        weight_bits=table.bits_per_weight["q4_k_m"] if quantised else None,
        efficiency=table,
    )
    return perf.llm_replica(gpu, work, n, perf.efficiencies(gpu, None), "cuda")


def test_the_llamacpp_profile_copies_without_peer_access_and_device_map_with_it() -> None:
    gpu = _gpus()["a100-sxm4-80gb"]
    table = load_efficiency(DATA)
    for runtime, peer in (("llama.cpp", False), ("transformers", True)):
        for regime in ("decode", "prefill"):
            profile = table.profile(gpu, "cuda", runtime, "int4", regime)
            assert profile.span == "layers"
            assert profile.handoff_peer is peer, (runtime, regime)


@pytest.mark.parametrize(("slug", "own"), [("a100-sxm4-80gb", "fast"), ("rtx-a6000", "pcie-p2p")])
def test_a_llamacpp_split_skips_nvlink_and_pcie_peer_to_peer(slug: str, own: str) -> None:
    gpu = _gpus()[slug]
    assert topology.link(gpu, 4).kind == own
    rep = _replica(slug, "llama.cpp", 4)
    assert rep.stages == 4
    assert rep.hop_link == topology.host_staged_link(gpu, 4)
    assert rep.hop_link.kind == "pcie-host"
    assert rep.hop_link.gbs < topology.link(gpu, 4).gbs


def test_device_map_keeps_the_cards_link() -> None:
    gpu = _gpus()["a100-sxm4-80gb"]
    rep = _replica("a100-sxm4-80gb", "transformers", 4)
    assert rep.stages == 4
    assert rep.hop_link == topology.link(gpu, 4)
    assert rep.hop_link.kind == "fast"


def test_the_staged_hop_is_the_link_a_card_without_peer_to_peer_gets() -> None:
    # one rule for host-staged copies: a GeForce card's own link inside a server is it already
    gpu = _gpus()["rtx-4090"]
    for n in (2, 4, 8):
        assert topology.link(gpu, n) == topology.host_staged_link(gpu, n)
        assert _replica("rtx-4090", "llama.cpp", n).hop_link == topology.link(gpu, n)


def test_a_prompt_hand_off_on_four_a100_sxm_costs_the_staged_pcie_time() -> None:
    """Three boundaries, each 512 tokens × 8,192 F32 values over PCIe 4 crossed twice: 1.3 ms
    where NVLink had priced 0.07 ms."""
    rep = _replica("a100-sxm4-80gb", "llama.cpp", 4)
    hop = topology.host_staged_link(_gpus()["a100-sxm4-80gb"], 4)
    each = 512 * 8192 * 4.0
    assert rep.comm(512.0) == pytest.approx(3 * (each / (hop.gbs * 1e9) + hop.latency_s))
    nvlink = topology.link(_gpus()["a100-sxm4-80gb"], 4)
    assert rep.comm(512.0) > 10 * 3 * topology.comm_seconds(nvlink, each)


def test_beyond_one_server_the_split_crosses_the_network() -> None:
    gpu = _gpus()["rtx-a6000"]
    n = topology.node_size(gpu) * 2
    assert _replica("rtx-a6000", "llama.cpp", n).hop_link == topology.link(gpu, n)
    assert topology.link(gpu, n).kind == "network"
