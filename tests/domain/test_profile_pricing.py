"""The engine prices GEMMs from kernel profiles: a GPU's own (published or measured) points,
else carried over from profiled GPUs, else the prior; every estimate says which."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.catalog.profiles import shipped_profiles
from app.domain import perf
from app.domain.calibration import Calibration, Efficiencies, with_profiles
from app.domain.gpu import GpuSpec
from app.domain.kernel_profiles import (
    BEST_GEMM_SHAPE,
    GpuProfile,
    ProfilePoint,
    ProfileStore,
    merge_profiles,
    profile_efficiency,
    shape_key,
)
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import BERT_LARGE


@pytest.fixture(scope="module")
def shipped() -> tuple[ProfileStore, dict]:
    return shipped_profiles()


def _bert(precision: str = "bf16") -> WorkloadSpec:
    return WorkloadSpec(task="training", model=BERT_LARGE, precision=precision, batch_size=16)


def _measured(store: ProfileStore, slug: str, e: float, reports: int) -> ProfileStore:
    point = ProfilePoint("gemm", "bf16", shape_key(BEST_GEMM_SHAPE), e, "device reports")
    own = GpuProfile(slug, (point,), reports=reports)
    merged = merge_profiles(store.profiles.get(slug), own)
    assert merged is not None
    return ProfileStore({**store.profiles, slug: merged})


def _gemm_only(store: ProfileStore) -> ProfileStore:
    """The store without its attention points (attention is priced from them too)."""
    return ProfileStore(
        {
            s: replace(p, points=tuple(q for q in p.points if q.kernel_class == "gemm"))
            for s, p in store.profiles.items()
        }
    )


def test_a_gpu_with_a_shipped_profile_prices_its_gemms_at_the_profiles_e(shipped) -> None:
    store, gpus = shipped
    store = _gemm_only(store)
    gpu = gpus["h100-sxm"]
    cal = with_profiles(None, store, gpus)
    e, basis = profile_efficiency(gpu, "gemm", BEST_GEMM_SHAPE, store, gpus)
    eff = perf.operator_efficiency(perf.efficiencies(gpu, cal), "bf16")
    assert eff.compute["bf16"] == pytest.approx(e)
    assert basis == "published figures for this GPU"
    est = perf.estimate(gpu, _bert(), calibration=cal)
    assert est.efficiency_basis == basis
    assert est.efficiency_source == "prior"  # published figures do not narrow the band
    prior = perf.estimate(gpu, _bert())
    assert prior.efficiency_basis == ""
    # the GEMMs run at e instead of the prior: faster where e is above it, slower below
    above = e is not None and e > perf.prior_compute_efficiency(gpu, "bf16")
    assert (est.compute_s < prior.compute_s) == above
    assert est.compute_s != pytest.approx(prior.compute_s)


def test_a_gpu_without_a_profile_carries_over_and_names_the_donors(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["h100-nvl"]  # a datacenter card: datacenter donors carry over to it
    assert "h100-nvl" not in store.profiles
    cal = with_profiles(None, store, gpus)
    est = perf.estimate(gpu, _bert(), calibration=cal)
    assert est.efficiency_basis.startswith("carried over from ")
    _, basis = profile_efficiency(gpu, "gemm", BEST_GEMM_SHAPE, store, gpus)
    assert est.efficiency_basis == basis
    named = [s for s in store.profiles if gpus[s].name in basis]
    assert named  # the donors are profiled GPUs, named
    assert est.efficiency_source == "prior"  # carried-over figures do not narrow the band


def test_a_measured_profile_moves_the_estimate_toward_it_and_counts_its_machines(
    shipped,
) -> None:
    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    published = perf.estimate(gpu, _bert(), calibration=with_profiles(None, store, gpus))
    slow = _measured(store, "h100-sxm", 0.40, reports=3)
    est = perf.estimate(gpu, _bert(), calibration=with_profiles(None, slow, gpus))
    assert est.compute_s > published.compute_s  # 0.40 of peak is below the published e
    assert est.efficiency_source == "measured" and est.measured_on == 3
    assert est.efficiency_basis == "measured on this GPU (3 reports)"
    assert perf.operator_efficiency(
        perf.efficiencies(gpu, with_profiles(None, slow, gpus)), "bf16"
    ).compute["bf16"] == pytest.approx(0.40)


def test_reports_that_measured_another_datapath_do_not_count_for_this_one(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    measured = _measured(store, "h100-sxm", 0.40, reports=2)  # bf16 points only
    eff = perf.efficiencies(gpu, with_profiles(None, measured, gpus))
    assert eff.gemm["bf16"].reports == 2
    assert eff.gemm["tf32"].reports == 0
    assert eff.gemm["tf32"].basis == "published figures for this GPU"


def test_a_device_reports_own_matmul_figure_wins_over_the_profile(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    own = Calibration.from_measurement(gpu, Efficiencies(compute={"bf16": 0.5}))
    eff = perf.efficiencies(gpu, with_profiles(own, store, gpus))
    assert "bf16" not in eff.gemm
    assert perf.operator_efficiency(eff, "bf16").compute["bf16"] == pytest.approx(0.5)


def test_without_profiles_the_prior_prices_and_says_nothing_more() -> None:
    from tests.domain.fixtures import H100

    est = perf.estimate(H100, _bert(), calibration=Calibration())
    assert est.efficiency_basis == "" and est.efficiency_source == "prior"


def test_a_card_without_a_donor_of_its_segment_keeps_the_prior(shipped) -> None:
    # no GeForce GEMM sweep is shipped: datacenter efficiencies are not carried to an RTX 4090
    # (its own profile holds attention points only, which price its attention kernels)
    store, gpus = shipped
    store = _gemm_only(store)
    gpu = gpus["rtx-4090"]
    cal = with_profiles(None, store, gpus)
    est = perf.estimate(gpu, _bert(), calibration=cal)
    prior = perf.estimate(gpu, _bert())
    assert est.throughput == pytest.approx(prior.throughput)
    assert not est.efficiency_basis.startswith("carried over")


# ------------------------------------------------------------------------------ LLM step


def test_the_llm_step_reads_the_profiles_gemm_efficiency_not_the_vendor_prior(shipped) -> None:
    # MI300X: its profile has bf16 and fp8 GEMM points (AMD's MAF figures, the MAMF table);
    # the LLM step's GEMMs rest on them as the operator path's do, not on AMD's 0.55 prior
    store, gpus = shipped
    gpu = gpus["mi300x"]
    eff = perf.efficiencies(gpu, with_profiles(None, store, gpus))
    llm = perf.llm_efficiency(eff)
    for p in ("bf16", "fp8"):
        assert eff.gemm[p].basis == "published figures for this GPU"
        assert llm[p] == pytest.approx(eff.gemm[p].efficiency * perf.MODEL_UTILISATION)
        assert llm[p] == pytest.approx(
            perf.operator_efficiency(eff, p).compute[p] * perf.MODEL_UTILISATION
        )
    # int8 and fp4 kernels reach the share fp8 ones do
    assert llm["int8"] == llm["fp4"] == llm["fp8"]
    # without profiles: the vendor prior, as before
    prior = perf.llm_efficiency(perf.efficiencies(gpu, None))
    assert prior["fp8"] == pytest.approx(
        perf.prior_compute_efficiency(gpu, "fp8") * perf.MODEL_UTILISATION
    )
    assert llm["fp8"] != pytest.approx(prior["fp8"])


def test_the_llm_step_follows_a_measured_profile_and_a_device_reports_figure(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["mi300x"]
    slow = _measured(store, "mi300x", 0.40, reports=2)
    llm = perf.llm_efficiency(perf.efficiencies(gpu, with_profiles(None, slow, gpus)))
    assert llm["bf16"] == pytest.approx(0.40 * perf.MODEL_UTILISATION)
    # a device report's own matmul figure wins over the profile, here as on the operator path
    own = Calibration.from_measurement(gpu, Efficiencies(compute={"bf16": 0.5}))
    eff = perf.efficiencies(gpu, with_profiles(own, store, gpus))
    assert perf.llm_efficiency(eff)["bf16"] == pytest.approx(0.5 * perf.MODEL_UTILISATION)


def test_an_llm_estimate_names_what_its_gemms_rest_on(shipped) -> None:
    from tests.domain.fixtures import llm_inference

    store, gpus = shipped
    gpu = gpus["mi300x"]
    cal = with_profiles(None, store, gpus)
    eff = perf.efficiencies(gpu, cal)
    for precision in ("bf16", "fp8"):
        est = perf.estimate(gpu, llm_inference(precision=precision), calibration=cal)
        assert est.efficiency_basis == eff.gemm[precision].basis
        assert perf.estimate(gpu, llm_inference(precision=precision)).efficiency_basis == ""
    # int8 and fp4 GEMMs read fp8's figure, and its basis
    assert perf.llm_basis(eff, "int8") == perf.llm_basis(eff, "fp4") == eff.gemm["fp8"].basis
    assert perf.llm_basis(eff, "fp32") == ""


# ------------------------------------------------------------------------------ attention


def test_attention_is_priced_from_the_gpus_own_profile_and_says_so(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    cal = with_profiles(None, store, gpus)
    eff = perf.efficiencies(gpu, cal)
    assert eff.attention is not None
    assert eff.attention.basis == "published figures for this GPU"
    # the best kernel (FlashAttention-3, 0.75 of peak at d = 128) sets it, not FA2's 0.34
    assert 0.6 < eff.attention.efficiency < 0.8
    est = perf.estimate(gpu, _bert(), calibration=cal)
    assert est.attention_basis == "published figures for this GPU"
    assert perf.estimate(gpu, _bert()).attention_basis == ""


def test_attention_rate_follows_the_profile_in_the_operator_path(shipped) -> None:
    from app.domain.kernels import FLASH_FWD_FACTOR

    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    eff = perf.operator_efficiency(perf.efficiencies(gpu, with_profiles(None, store, gpus)), "bf16")
    assert eff.attention is not None
    factor = perf._flash_factor(eff, "bf16")
    assert factor == pytest.approx(eff.attention.efficiency / eff.compute["bf16"])
    assert factor != pytest.approx(FLASH_FWD_FACTOR)
    # an fp32 job's attention keeps the prior factor: the profile measured 16-bit kernels
    assert perf._flash_factor(eff, "fp32") is None


def test_slower_attention_points_slow_the_step_and_leave_the_gemms_alone(shipped) -> None:
    store, gpus = shipped

    def halved(p: ProfilePoint) -> ProfilePoint:
        if p.kernel_class != "attention_prefill":
            return p
        return replace(p, efficiency=p.efficiency / 2)

    slow = ProfileStore(
        {
            s: replace(p, points=tuple(halved(q) for q in p.points))
            for s, p in store.profiles.items()
        }
    )
    gpu = gpus["h100-sxm"]
    fast_est = perf.estimate(gpu, _bert(), calibration=with_profiles(None, store, gpus))
    slow_est = perf.estimate(gpu, _bert(), calibration=with_profiles(None, slow, gpus))
    assert slow_est.compute_s > fast_est.compute_s
    assert slow_est.efficiency_basis == fast_est.efficiency_basis
    slow_eff = perf.efficiencies(gpu, with_profiles(None, slow, gpus))
    fast_eff = perf.efficiencies(gpu, with_profiles(None, store, gpus))
    assert slow_eff.gemm == fast_eff.gemm


def test_a_gpu_without_attention_points_carries_them_over_from_the_most_alike(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["h200-sxm"]  # profiled (GEMMs), no attention points of its own
    kb = perf.efficiencies(gpu, with_profiles(None, store, gpus)).attention
    assert kb is not None and kb.basis.startswith("carried over from NVIDIA H100")


def test_measured_attention_replaces_the_published_libraries_and_says_so(shipped) -> None:
    # the bench's SDPA shape: batch 1, 8 heads, head dim 64, causal prefill at 4096 tokens
    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    shape = {"batch": 1, "heads": 8, "q_len": 4096, "kv_len": 4096, "head_dim": 64, "causal": 1}
    point = ProfilePoint("attention_prefill", "bf16", shape_key(shape), 0.30, "device reports")
    merged = merge_profiles(store.profiles["h100-sxm"], GpuProfile("h100-sxm", (point,), reports=2))
    assert merged is not None
    measured = ProfileStore({**store.profiles, "h100-sxm": merged})
    published = perf.efficiencies(gpu, with_profiles(None, store, gpus)).attention
    kb = perf.efficiencies(gpu, with_profiles(None, measured, gpus)).attention
    assert published is not None and kb is not None
    assert kb.basis == "measured on this GPU (2 reports)" and kb.reports == 2
    # FlashAttention-3's 0.75 no longer sets the ceiling: the measured SDPA's does, read back
    # through the shape's losses (a causal 1 × 8-head run fills few of the H100's SMs)
    assert kb.efficiency < published.efficiency
    e, _ = profile_efficiency(gpu, "attention_prefill", shape, measured, gpus, dtype="bf16")
    assert e == pytest.approx(0.30)


def _llm_train(runtime: str) -> WorkloadSpec:
    from pathlib import Path

    from app.shipped.rules import load_efficiency
    from tests.domain.fixtures import LLAMA3_8B

    table = load_efficiency(Path(__file__).resolve().parents[2] / "data")
    return WorkloadSpec(
        task="training", model=LLAMA3_8B, batch_size=8, seq_len=2048, efficiency=table,
        runtime=runtime,
    )  # fmt: skip


def _attention_fwd_tflops(gpu: GpuSpec, work: WorkloadSpec, cal: Calibration | None) -> float:
    from app.domain.kernels import CLASS_INDEX

    on = perf._on_gpu(gpu, work, "pytorch", cal, "cuda")
    assert on.rates is not None
    return on.rates[CLASS_INDEX["attn_flash"]] / 1e12


def test_the_runtimes_own_attention_kernel_caps_the_profiles_best_one(shipped) -> None:
    """The H100 profile's attention ceiling is FlashAttention-3's (0.75 of peak); PyTorch's
    SDPA runs FlashAttention-2 there (the runtime row's 35 % of the 16-bit peak): a PyTorch
    training job is priced at FA2's rate and says its attention rests on no profile, while a
    runtime that runs Hopper-native attention (Megatron / Transformer Engine) keeps FA3's."""
    store, gpus = shipped
    gpu = gpus["h100-sxm"]
    cal = with_profiles(None, store, gpus)
    eff = perf.efficiencies(gpu, cal)
    assert eff.attention is not None and eff.attention.efficiency > 0.6
    eager = _llm_train("pytorch")
    assert _attention_fwd_tflops(gpu, eager, cal) == pytest.approx(0.35 * gpu.bf16_tflops)
    # the same as without any profile: the runtime's kernel, not the GPU's best, prices it
    assert _attention_fwd_tflops(gpu, eager, cal) == pytest.approx(
        _attention_fwd_tflops(gpu, eager, None)
    )
    assert perf.estimate(gpu, eager, calibration=cal).attention_basis == ""
    te = _llm_train("megatron")
    assert _attention_fwd_tflops(gpu, te, cal) == pytest.approx(
        eff.attention.efficiency * gpu.bf16_tflops
    )


def test_without_a_runtime_kernel_share_the_profiled_attention_rate_stands(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["a100-sxm4-80gb"]  # Ampere: FlashAttention-2 is the native kernel, no cap
    cal = with_profiles(None, store, gpus)
    eff = perf.efficiencies(gpu, cal)
    assert eff.attention is not None
    work = _llm_train("pytorch")
    assert _attention_fwd_tflops(gpu, work, cal) == pytest.approx(
        eff.attention.efficiency * gpu.bf16_tflops
    )
    assert perf.estimate(gpu, work, calibration=cal).attention_basis == eff.attention.basis
