"""Apple-Silicon review (r26apple): macOS's default GPU wired share by machine size, MLX's own
4-bit format, MLX's prompt and decode rows, and a bought card's price said to be the card alone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat, efficiency, formats, perf
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
TABLE = load_efficiency(DATA)


@pytest.mark.parametrize(
    ("memory_gb", "share"),
    [(16, 2 / 3), (24, 2 / 3), (32, 2 / 3), (36, 0.75), (64, 0.75), (128, 0.75), (192, 0.75)],
)
def test_macos_wires_two_thirds_up_to_32_gb_and_three_quarters_above(
    memory_gb: float, share: float
) -> None:
    mac = replace(GPUS["apple-m4-max"], memory_gb=memory_gb, visible_memory_mib=None)
    assert efficiency.wired_share(mac) == pytest.approx(share)
    # the logged recommendedMaxWorkingSetSize: 16 GB 10,922.67 MiB, 32 GB 21,845.34 MiB,
    # 36 GB 28,991.03 MB (10^6 bytes), 64 GB 49,152 MiB
    logged: dict[float, float] = {
        16: 10922.67 * 2**20,
        32: 21845.34 * 2**20,
        36: 28991.03e6,
        64: 49152 * 2**20,
    }
    if memory_gb in logged:
        assert efficiency.usable_gb(mac) * 1e9 == pytest.approx(logged[memory_gb], rel=1e-5)


def test_a_discrete_card_keeps_all_of_its_memory() -> None:
    assert efficiency.wired_share(GPUS["rtx-4090"]) == 1.0


def test_a_24_gb_mac_no_longer_holds_an_8b_model_at_bf16() -> None:
    """The 24 GB M2 wires 16 GiB by default: an 8B model's bf16 weights alone are 16.06 GB
    of its 17.18 GB, where the flat 3/4 had left 19.3 GB."""
    m2 = GPUS["apple-m2"]
    assert efficiency.usable_gb(m2) == pytest.approx(24 * 2**30 * 2 / 3 / 1e9)
    assert efficiency.usable_gb(m2) < 0.75 * 24 * 2**30 / 1e9


def test_mlx_int4_is_its_own_affine_format_embeddings_included() -> None:
    assert formats.MLX_AFFINE_4BIT_BITS == 4.5  # 4 + (16 + 16) / 64
    assert formats.runtime_bits("mlx", "int4") == formats.MLX_AFFINE_4BIT_BITS
    assert formats.runtime_bits("mlx", "bf16") is None
    assert formats.runtime_bits("llama.cpp", "int4") is None  # GGUF: named by the job
    model = load_presets(DATA)["llama-3.1-8b"].model
    mlx = formats.weight_bytes(model, "int4", formats.runtime_bits("mlx", "int4"))
    awq = formats.weight_bytes(model, "int4")  # AWQ/GPTQ: 16-bit embeddings and head
    assert mlx / 1e9 == pytest.approx(model.params * 4.5 / 8 / 1e9)
    assert 4.4 < mlx / 1e9 < 4.6 < awq / 1e9


def test_mlx_prompts_run_at_the_gemm_rate_and_its_decode_at_the_streaming_prior() -> None:
    mac = GPUS["apple-m3-max"]
    mlx_pre = TABLE.profile(mac, "mps", "mlx", "int4", "prefill")
    cpp_pre = TABLE.profile(mac, "metal", "llama.cpp", "int4", "prefill")
    assert mlx_pre.compute_scale == pytest.approx(1 / perf.MODEL_UTILISATION, abs=0.01)
    assert mlx_pre.compute_scale > cpp_pre.compute_scale == pytest.approx(1.3)
    mlx_dec = TABLE.profile(mac, "mps", "mlx", "int4", "decode")
    assert mlx_dec.memory == pytest.approx(perf.MEMORY_EFFICIENCY)
    # llama.cpp's Metal decode row is unchanged
    assert TABLE.profile(mac, "metal", "llama.cpp", "int4", "decode").memory == pytest.approx(0.72)


def test_a_bought_consumer_card_says_its_price_is_the_card_alone() -> None:
    card = GPUS["rtx-3090"]
    one = compat.owned_caveat(card, 1, True)
    two = compat.owned_caveat(card, 2, True)
    assert one is not None and one.startswith("the price and electricity are the card alone")
    assert two is not None and "the price and electricity are the 2 cards alone" in two
    assert "no host computer" in one and "(350 W of board power" in one  # the power words
    assert "a lower bound" in one
    assert compat.owned_caveat(card, 1, False) is None
    # four cards: the rig's words say it, once
    four = compat.owned_caveat(card, 4, True)
    assert four is not None and four.count("alone") == 2  # rig's price + board power
    assert four.count("the price is") == 1
    # a Mac's price is a whole computer: not said there
    mac = compat.owned_caveat(GPUS["apple-m4-max"], 1, True)
    assert mac is None or "price is" not in mac
    assert compat.card_alone_caveat(GPUS["apple-m4-max"], 1, True) is None
