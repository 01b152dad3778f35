"""Framework gating and precision fallback."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from app.domain import compat
from app.domain.compat import Rules
from app.domain.gpu import GpuSpec
from tests.domain.fixtures import A100, GTX1080TI, H100, M2, MI300X, RTX4090, RULES, T4


def test_fp8_on_ampere_falls_back_to_bf16() -> None:
    p, warn = compat.resolve_precision(A100, "fp8", RULES, "cuda")
    assert p == "bf16" and warn is not None and "fp8" in warn
    assert compat.resolve_precision(H100, "fp8", RULES, "cuda") == ("fp8", None)
    assert compat.resolve_precision(RTX4090, "fp8", RULES, "cuda")[0] == "fp8"


def test_bf16_on_turing_runs_fp16() -> None:
    p, warn = compat.resolve_precision(T4, "bf16", RULES, "cuda")
    assert p == "fp16" and warn


def test_tf32_unavailable_falls_back_to_fp32() -> None:
    assert compat.resolve_precision(T4, "tf32", RULES, "cuda")[0] == "fp32"
    assert compat.resolve_precision(A100, "tf32", RULES, "cuda") == ("tf32", None)


def test_weight_only_quantisation_runs_on_16_bit_parts() -> None:
    assert compat.resolve_precision(T4, "int4", RULES, "cuda") == ("int4", None)


def test_framework_min_compute_capability() -> None:
    kepler = GpuSpec(
        slug="k80",
        name="K80",
        vendor="nvidia",
        architecture="Kepler",
        segment="datacenter",
        memory_gb=12,
        memory_bandwidth_gbs=240,
        compute_capability="3.7",
        backends=("cuda",),
    )
    sup = compat.framework_support(kepler, "pytorch", RULES)
    assert not sup.ok and sup.reason and "5.0" in sup.reason
    assert compat.framework_support(GTX1080TI, "pytorch", RULES).ok


def test_rocm_gfx_targets_and_missing_backends() -> None:
    assert compat.framework_support(MI300X, "pytorch", RULES).backend == "rocm"
    rdna = GpuSpec(
        slug="rx",
        name="RX",
        vendor="amd",
        architecture="RDNA",
        segment="consumer",
        memory_gb=16,
        memory_bandwidth_gbs=500,
        compute_capability="gfx1012",
        backends=("rocm",),
    )
    assert not compat.framework_support(rdna, "pytorch", RULES).ok
    assert not compat.framework_support(MI300X, "jax", RULES).ok


def test_experimental_status_is_reported() -> None:
    sup = compat.framework_support(M2, "tensorflow", RULES)
    assert sup.ok and sup.status == "experimental"


def test_features_follow_compute_capability() -> None:
    assert compat.has_feature(A100, "flash_attention_2", RULES, "cuda") is True
    assert compat.has_feature(T4, "flash_attention_2", RULES, "cuda") is False
    assert compat.has_feature(M2, "flash_attention_2", RULES, "mps") is None


def test_tf32_default_share() -> None:
    assert compat.tf32_fraction(A100, "cnn", "pytorch", False) == 1.0
    assert compat.tf32_fraction(A100, "decoder", "pytorch", False) == 0.0
    assert compat.tf32_fraction(A100, "decoder", "jax", False) == 1.0
    assert compat.tf32_fraction(T4, "cnn", "pytorch", False) == 0.0
    assert compat.tf32_fraction(MI300X, "cnn", "pytorch", False) == 0.0


# ---------------------------------------------------------------- the shipped rules


@functools.cache
def _shipped() -> Rules:
    from app.recommend.presets import DATA_DIR
    from app.shipped.rules import load_rules

    return load_rules(DATA_DIR)


@functools.cache
def _all_specs() -> dict[str, GpuSpec]:
    from app.catalog.loader import read_gpu_specs
    from app.recommend.presets import DATA_DIR

    return {g.slug: g for g in read_gpu_specs(DATA_DIR)}


def _catalog(slug: str) -> GpuSpec:
    return _all_specs()[slug]


@pytest.mark.parametrize(
    ("slug", "backend", "status"),
    [
        ("rtx-4090", "cuda", "supported"),
        ("rx-7900-xtx", "rocm", "supported"),  # official in bitsandbytes 0.50
        ("arc-b580", "xpu", "supported"),  # official since bitsandbytes 0.48.1
        ("gaudi2", "hpu", "experimental"),
        ("apple-m2-max", "mps", "experimental"),  # bitsandbytes 0.50's MPS ops (PR #1983)
    ],
)
def test_qlora_support_per_backend(slug: str, backend: str, status: str) -> None:
    st = compat.feature_status(_catalog(slug), "bitsandbytes_4bit", _shipped(), backend)
    assert st is not None and st.status == status
    if status != "supported":
        assert st.note  # the caveat or the reason is named


def test_qlora_job_on_apple_and_gaudi_carries_its_caveat() -> None:
    rules = _shipped()
    feats = compat.job_features("qlora", "adamw")
    why, caveats = compat.job_support(_catalog("apple-m2-max"), feats, rules, "mps")
    assert why is None and caveats and "MPS" in caveats[0]
    # its 8-bit optimizers are not on MPS yet (bitsandbytes PR #1983)
    why, _ = compat.job_support(
        _catalog("apple-m2-max"), ("bitsandbytes_8bit_optim",), rules, "mps"
    )
    assert why is not None
    why, caveats = compat.job_support(_catalog("gaudi2"), feats, rules, "hpu")
    assert why is None and caveats and "experimental" in caveats[0]
    # a Radeon runs it from bitsandbytes' official ROCm wheels (0.50): no caveat any more
    why, caveats = compat.job_support(_catalog("rx-7900-xtx"), feats, rules, "rocm")
    assert why is None and not any("experimental" in c for c in caveats)


def test_fp8_falls_back_for_cnns_and_before_ada() -> None:
    rules = _shipped()
    h100 = _catalog("h100-sxm")
    prec, warn = compat.resolve_precision(h100, "fp8", rules, "cuda", family="cnn")
    assert prec == "bf16" and warn is not None and "convolution" in warn
    assert compat.resolve_precision(h100, "fp8", rules, "cuda", family="decoder") == ("fp8", None)
    prec, warn = compat.resolve_precision(_catalog("a100-sxm4-80gb"), "fp8", rules, "cuda")
    assert prec == "bf16" and warn is not None


def test_bf16_on_arc_and_rdna3_is_supported_even_without_a_datasheet_figure() -> None:
    rules = _shipped()
    for slug, backend in (("arc-b580", "xpu"), ("rx-7900-xtx", "rocm")):
        assert compat.resolve_precision(_catalog(slug), "bf16", rules, backend) == ("bf16", None)


def test_fp4_on_blackwell_only() -> None:
    rules = _shipped()
    assert compat.has_feature(_catalog("b200"), "fp4", rules, "cuda")
    assert compat.has_feature(_catalog("rtx-5090"), "fp4", rules, "cuda")
    assert compat.has_feature(_catalog("h100-sxm"), "fp4", rules, "cuda") is False


@pytest.mark.parametrize(
    ("slug", "backend", "runtime", "status"),
    [
        ("h100-sxm", "cuda", "vllm", "supported"),
        ("mi300x", "rocm", "vllm", "supported"),
        ("apple-m2-max", "mps", "vllm", "unsupported"),
        ("mi300x", "rocm", "tensorrt-llm", "unsupported"),
        ("apple-m2-max", "mps", "mlx", "supported"),
        ("rx-7900-xtx", "rocm", "llama.cpp", "supported"),
        ("arc-b580", "xpu", "vllm", "experimental"),
    ],
)
def test_serving_runtimes_per_backend(slug: str, backend: str, runtime: str, status: str) -> None:
    st = compat.feature_status(_catalog(slug), f"runtime:{runtime}", _shipped(), backend)
    assert st is not None and st.status == status


def test_every_feature_rule_cites_a_known_source() -> None:
    from app.recommend.presets import DATA_DIR
    from app.shipped import yamlio

    doc = yamlio.safe_load((DATA_DIR / "frameworks.yaml").read_text(encoding="utf-8"))
    sources = set(doc["sources"])
    for rule in doc["features"] + doc["frameworks"]:
        assert rule.get("source") in sources, rule
        assert rule.get("status", "supported") in ("supported", "experimental", "unsupported")
        if rule.get("status") in ("experimental", "unsupported"):
            assert rule.get("notes"), rule  # the caveat or reason is named


def test_cooling_caveat_only_for_a_passive_card_that_is_bought() -> None:
    from dataclasses import replace

    card = replace(A100, form_factor="PCIe dual-slot")  # a module says more (next test)
    passive = replace(card, name="MI100 32GB", cooling="passive")
    want = (
        "MI100 32GB is passively cooled: it needs forced airflow (a server, or a fan "
        "shroud in a desktop)"
    )
    assert compat.cooling_caveat(passive, buys=True) == want
    # bought or rented: the caveat says which case it is about
    both = compat.cooling_caveat(passive, buys=True, rents=True)
    assert both is not None and "bought" in both and "provider's server" in both
    # a rent-only row: the provider's server cools it
    assert compat.cooling_caveat(passive, buys=False, rents=True) is None
    # active, liquid or unknown cooling: nothing to say
    for cooling in ("active", "liquid", None):
        assert compat.cooling_caveat(replace(card, cooling=cooling), buys=True) is None


def test_mi100_runs_bf16_at_its_own_rate_not_fp16() -> None:
    """gfx908 has bf16 matrix instructions (ROCm's MI100 page: 92.3 TFLOPS, half its fp16
    rate): a bf16 job there runs bf16, not an fp16 stand-in with a 'no bf16' warning."""
    mi100 = _catalog("mi100")
    assert compat.resolve_precision(mi100, "bf16", _shipped(), "rocm") == ("bf16", None)
    fp16 = mi100.peak_tflops("fp16")
    assert fp16 is not None and mi100.peak_tflops("bf16") == pytest.approx(fp16 / 2)


def test_a_part_without_a_listed_compute_capability_runs_what_its_datasheet_lists() -> None:
    """A part whose compute capability no source gives (the B100 was one until a source
    tied it to the B200's chip) keeps it empty; its datasheet's bf16 and fp8 peaks still say
    it runs them (it was estimated at fp16 with 'no bf16 support'). A listed older part keeps
    its rule."""
    b100 = dataclasses.replace(_catalog("b100"), compute_capability=None)
    for precision in ("bf16", "fp8"):
        assert compat.resolve_precision(b100, precision, _shipped(), "cuda") == (precision, None)
    assert compat.resolve_precision(_catalog("t4"), "bf16", _shipped(), "cuda")[0] == "fp16"


def test_the_b100_runs_as_the_b200_chip_it_is() -> None:
    """The B100 is the B200's chip at 700 W on an 8-way HGX board: compute capability 10.0
    and NVLink 5 (with neither it was priced with no FlashAttention and PCIe between its GPUs:
    10,800 ResNet-50 images/s against the B200's 7,621, and LoRA 40 % slower)."""
    b100, b200 = _catalog("b100"), _catalog("b200")
    assert b100.compute_capability == b200.compute_capability == "10.0"
    assert b100.interconnect_gbs == b200.interconnect_gbs == 1800


def test_a_bought_sxm_or_oam_module_says_it_needs_a_server_built_for_it() -> None:
    """'Pick Tesla V100 SXM2 32GB, $2,592 to buy' for a desktop build, with no word that an
    SXM module has no PCIe connector (the cooling caveat read only the `cooling` field)."""
    from dataclasses import replace

    cases: list[tuple[str, str | None]] = [
        ("SXM2", "SXM2"), ("OAM", "OAM"), ("HGX B200 baseboard module", None)
    ]  # fmt: skip
    for ff, shown in cases:
        module = replace(A100, name="X", form_factor=ff, cooling=None)
        said = compat.cooling_caveat(module, buys=True)
        assert (
            said is not None
            and "not a PCIe card" in said
            and "comes in a server built for it" in said
        ), ff
        if shown:
            assert f"a module ({shown})" in said
        assert compat.cooling_caveat(module, buys=False, rents=True) is None
        both = compat.cooling_caveat(module, buys=True, rents=True)
        assert both is not None and "rented, the provider's server holds it" in both
    for card in ("PCIe dual-slot", None):
        assert compat.cooling_caveat(replace(A100, form_factor=card, cooling=None), True) is None


def test_a_bought_rig_of_four_or_more_cards_says_the_price_is_the_cards_alone() -> None:
    """An 8 × RTX 3080 Ti rig topped a $4,000 'at home' answer at the cards' price, with no
    word of the host, slots and 2.8 kW of boards it needs."""
    from dataclasses import replace

    card = replace(A100, name="GeForce X", segment="consumer", form_factor="PCIe", tdp_w=350.0)
    said = compat.rig_caveat(card, 8, buys=True)
    assert said is not None and "the 8 cards alone" in said and "2,800 W" in said
    assert compat.rig_caveat(card, 2, buys=True) is None  # two cards fit most desktops
    assert compat.rig_caveat(card, 8, buys=False) is None  # rented: the provider's host
    server = replace(card, segment="datacenter")
    assert compat.rig_caveat(server, 8, buys=True) is None


def test_a_bought_gpu_without_a_power_figure_says_its_electricity_is_not_counted() -> None:
    """Apple publishes no GPU power: a Mac's buy cost had counted $0 of electricity beside a
    PC's full TDP, without a word."""
    mac = dataclasses.replace(M2, tdp_w=None)
    said = compat.purchase_caveats(mac, 1, buys=True, rents=False)
    assert any("electricity is not counted" in x for x in said)
    assert not any("electricity" in x for x in compat.purchase_caveats(mac, 1, False, True))
    # a card with a power figure says its electricity is that alone (compat.gpu_power_caveat)
    bought = compat.purchase_caveats(RTX4090, 1, True, False)
    assert not any("electricity is not counted" in x for x in bought)
