"""Kernel profiles: pooling device reports' raw points per GPU, the shipped profiles, and
the carry-over of e(kernel class, shape) to GPUs nobody measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.profiles import read_profiles, shipped_profiles
from app.domain.calibration import KernelMeasurement, pool_kernel_points
from app.domain.kernel_profiles import (
    BEST_GEMM_SHAPE,
    MAX_ATTENTION_CEILING,
    GpuProfile,
    ProfilePoint,
    ProfileStore,
    best_attention_op,
    features_of,
    gemm_efficiency,
    merge_profiles,
    parse_profile,
    profile_efficiency,
    roofline_fraction,
    shape_key,
)

SQUARE = {"m": 4096, "n": 4096, "k": 4096}
DECODE = {"m": 1, "n": 4096, "k": 4096}
BIG = {"m": 8192, "n": 8192, "k": 8192}


@pytest.fixture(scope="module")
def shipped() -> tuple[ProfileStore, dict]:
    return shipped_profiles()


def _km(eff: float, version: int = 2, backend: str = "cuda", slug: str = "h100-sxm"):
    return KernelMeasurement(slug, backend, version, (("gemm", "bf16", shape_key(SQUARE), eff),))


# ------------------------------------------------------------------------------ pooling


def test_pooling_takes_the_median_and_leaves_a_throttled_card_out() -> None:
    ms = [_km(0.78), _km(0.80), _km(0.79), _km(0.20)]  # the last one throttled
    pooled = pool_kernel_points(ms, {"h100-sxm": "cuda"}, current_version=2)
    (point,) = pooled["h100-sxm"].points
    assert point.efficiency == pytest.approx(0.79)
    assert point.count == 3 and pooled["h100-sxm"].reports == 4


def test_older_report_versions_count_less() -> None:
    new = [_km(0.70), _km(0.71)]
    old = [_km(0.64, version=1), _km(0.65, version=1), _km(0.66, version=1)]
    pooled = pool_kernel_points(new + old, {"h100-sxm": "cuda"}, current_version=2)
    # unweighted, the three old reports would carry the median (0.66)
    assert pooled["h100-sxm"].points[0].efficiency == pytest.approx(0.70)
    same_age = pool_kernel_points(new + old, {"h100-sxm": "cuda"}, current_version=1)
    assert same_age["h100-sxm"].points[0].efficiency == pytest.approx(0.66)


def test_reports_from_another_backend_are_not_pooled() -> None:
    pooled = pool_kernel_points([_km(0.5, backend="rocm")], {"h100-sxm": "cuda"}, 2)
    assert pooled == {}


# ------------------------------------------------------------------------------ shipped data


def test_every_shipped_point_is_possible_and_sourced(shipped) -> None:
    store, gpus = shipped
    assert len(store.profiles) >= 10
    for slug, profile in store.profiles.items():
        assert profile.points, slug
        # GeForce boards boost past the clock their catalog peak is quoted at (RTX 4090
        # FlashAttention-2: 1.02 of it); past the measurement-noise bound is impossible
        limit = MAX_ATTENTION_CEILING if gpus[slug].segment == "consumer" else 1.0
        for p in profile.points:
            assert 0 < p.efficiency <= limit, (slug, p)
            assert p.source


def test_a_point_without_a_listed_source_is_refused(shipped) -> None:
    _, gpus = shipped
    data = {"sources": {"a": {"title": "t", "url": "u"}},
            "points": [{"kernel_class": "gemm", "dtype": "bf16", "shape": SQUARE,
                        "tflops": 500, "source": "b"}]}  # fmt: skip
    with pytest.raises(ValueError, match="source 'b'"):
        parse_profile(data, gpus["h100-sxm"], "h100-sxm.yaml")


def test_a_profile_file_must_name_its_gpu(tmp_path: Path, shipped) -> None:
    _, gpus = shipped
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "h100-sxm.yaml").write_text("gpu: a100-sxm4-80gb\n")
    with pytest.raises(ValueError, match="h100-sxm.yaml"):
        read_profiles(tmp_path, gpus)


# ------------------------------------------------------------------------------ lookup


def test_a_profiled_gpu_answers_from_its_own_figures(shipped) -> None:
    store, gpus = shipped
    e, basis = profile_efficiency(gpus["h100-sxm"], "gemm", SQUARE, store, gpus)
    published = next(
        p for p in store.profiles["h100-sxm"].points
        if p.dtype == "bf16" and p.shape == shape_key(SQUARE)
    )  # fmt: skip
    assert e == pytest.approx(published.efficiency)
    assert basis == "published figures for this GPU"


def test_an_unprofiled_gpu_is_carried_over_from_its_closest_relatives(shipped) -> None:
    store, gpus = shipped
    # its profile holds attention points only: no GEMM of its own
    assert not any(p.kernel_class == "gemm" for p in store.profiles["h100-pcie"].points)
    e, basis = profile_efficiency(gpus["h100-pcie"], "gemm", SQUARE, store, gpus)
    assert e is not None and 0.5 < e < 0.9
    # a Hopper part first: same vendor, tensor-core generation and memory technology
    assert basis.startswith("carried over from NVIDIA H") and "H100 SXM5" in basis


def test_a_skinny_decode_gemm_is_held_to_the_bandwidth_roof(shipped) -> None:
    store, gpus = shipped
    gpu = gpus["l40s"]
    square, _ = profile_efficiency(gpu, "gemm", SQUARE, store, gpus)
    decode, _ = profile_efficiency(gpu, "gemm", DECODE, store, gpus)
    roof = roofline_fraction("gemm", DECODE, "bf16", features_of(gpu))
    assert decode is not None and square is not None
    assert decode <= roof + 1e-9 and decode < square / 10


def test_a_class_nobody_measured_falls_back_to_the_prior(shipped) -> None:
    store, gpus = shipped
    e, basis = profile_efficiency(gpus["l4"], "embedding", {"vocab": 32000, "hidden": 4096,
                                  "tokens": 512}, store, gpus, prior=0.6)  # fmt: skip
    assert (e, basis) == (0.6, "prior")


def test_measurements_move_a_gpus_estimate_toward_them(shipped) -> None:
    store, gpus = shipped
    before, _ = profile_efficiency(gpus["l40s"], "gemm", SQUARE, store, gpus)
    measured = GpuProfile(
        "l40s", (ProfilePoint("gemm", "bf16", shape_key(SQUARE), 0.55, "device reports", count=3),),
        reports=3,
    )  # fmt: skip
    merged = merge_profiles(store.profiles.get("l40s"), measured)
    assert merged is not None
    with_reports = ProfileStore({**store.profiles, "l40s": merged})
    after, basis = profile_efficiency(gpus["l40s"], "gemm", SQUARE, with_reports, gpus)
    assert basis == "measured on this GPU (3 reports)"
    assert after == pytest.approx(0.55) and before != pytest.approx(0.55)
    # a larger shape moves too: the measured point sets the GPU's fitted ceiling
    near, _ = profile_efficiency(gpus["l40s"], "gemm", {"m": 8192, "n": 8192, "k": 8192},
                                 with_reports, gpus)  # fmt: skip
    assert near == pytest.approx(0.55, abs=0.02)


def _a100_with(points: tuple[ProfilePoint, ...], shipped) -> ProfileStore:
    store, _ = shipped
    return ProfileStore({**store.profiles, "a100-sxm4-80gb": GpuProfile("a100-sxm4-80gb", points)})


def test_a_figure_at_the_asked_shape_wins_over_a_best_of_search_ceiling(shipped) -> None:
    """A best-of-search maximum at one shape (the curve's ceiling) does not overrule a figure
    measured at the shape asked for; other shapes stay on the curve (issue #21)."""
    _, gpus = shipped
    best = ProfilePoint("gemm", "bf16", shape_key({"m": 1024, "n": 10240, "k": 5120}), 0.87, "s")
    at_big = ProfilePoint("gemm", "bf16", shape_key(BIG), 0.82, "s")
    store = _a100_with((best, at_big), shipped)
    e, _ = profile_efficiency(gpus["a100-sxm4-80gb"], "gemm", BIG, store, gpus)
    assert e == pytest.approx(0.82)
    other, _ = profile_efficiency(gpus["a100-sxm4-80gb"], "gemm", SQUARE, store, gpus)
    assert other is not None and other > 0.84  # the curve: its ceiling is the best point


@pytest.mark.parametrize("job", ["bf16", "fp16"])
def test_a_16_bit_gemm_figure_counts_for_both_16_bit_dtypes(shipped, job) -> None:
    """fp16 and bf16 GEMMs share the peak and the kernels: a 16-bit figure whose source does
    not say which prices both; where both were measured, the job's own dtype wins."""
    _, gpus = shipped
    best = ProfilePoint("gemm", "bf16", shape_key({"m": 1024, "n": 10240, "k": 5120}), 0.87, "s")
    fp16 = ProfilePoint("gemm", "fp16", shape_key(BIG), 0.82, "s")
    store = _a100_with((best, fp16), shipped)
    e, _ = profile_efficiency(gpus["a100-sxm4-80gb"], "gemm", BIG, store, gpus, dtype=job)
    assert e == pytest.approx(0.82)
    both = _a100_with(
        (best, fp16, ProfilePoint("gemm", "bf16", shape_key(BIG), 0.80, "s")), shipped
    )
    e, _ = profile_efficiency(gpus["a100-sxm4-80gb"], "gemm", BIG, both, gpus, dtype=job)
    assert e == pytest.approx(0.82 if job == "fp16" else 0.80)


def test_attention_does_not_take_the_other_16_bit_dtypes_best_of_sweep_figure(shipped) -> None:
    """The exact-shape rule's dtype latitude is for GEMMs: an fp16 attention figure without a
    shape (a paper's best) does not become a bf16 job's attention e; the ceiling prices it."""
    store, gpus = shipped
    paper = next(
        p for p in store.profiles["a100-sxm4-80gb"].points
        if p.kernel_class == "attention_prefill" and not p.shape
    )  # fmt: skip
    e, _ = profile_efficiency(gpus["a100-sxm4-80gb"], "attention_prefill", {}, store, gpus)
    assert paper.dtype == "fp16" and e is not None and e < paper.efficiency - 0.05


def test_the_a100_gemm_rate_the_engine_reads_is_the_one_measured_at_its_shape(shipped) -> None:
    """The engine reads a GPU's GEMM e at 8192³ (BEST_GEMM_SHAPE): on the A100 SXM4 80GB that
    is cuBLAS's 257 TFLOPS on random inputs (thonking.ai), not the MAMF search's 271.2 at
    1024×10240×5120, for bf16 and fp16 jobs alike."""
    store, gpus = shipped
    gpu = gpus["a100-sxm4-80gb"]
    for dtype in ("bf16", "fp16"):
        kb = gemm_efficiency(gpu, ProfileStore(store.profiles), gpus, dtype)
        assert kb is not None and kb.efficiency == pytest.approx(257.0 / 312.0, abs=1e-3)
    assert BEST_GEMM_SHAPE == BIG


# ------------------------------------------------------------------------------ attention


def test_attention_factor_falls_with_short_loops_causal_masks_and_small_heads(shipped) -> None:
    from app.domain.kernel_profiles import attention_factor

    _, gpus = shipped
    a100 = features_of(gpus["a100-sxm4-80gb"])
    f = lambda **kw: attention_factor(  # noqa: E731
        {"q_len": 2048, "kv_len": 2048, "head_dim": 128, "causal": 0} | kw, a100
    )
    assert f(q_len=512, kv_len=512) < f() < f(q_len=16384, kv_len=16384)
    assert f(causal=1) < f()
    assert f(head_dim=64) < f() < f(head_dim=256)
    # A100's tensor cores outrun its FP32 units 16×, an RTX 4090's 2×: the softmax costs
    # the A100 more of its peak at the same shape
    rtx = features_of(gpus["rtx-4090"])
    shape = {"q_len": 2048, "kv_len": 2048, "head_dim": 64, "causal": 0}
    assert attention_factor(shape, a100) < attention_factor(shape, rtx)


def test_attention_ceiling_is_the_best_kernels(shipped) -> None:
    from app.domain.kernel_profiles import best_attention_op, fit_curve

    store, gpus = shipped
    h100 = store.profiles["h100-sxm"]
    feats = features_of(gpus["h100-sxm"])
    assert best_attention_op(h100.points, feats) == "flash-attention-3"
    curve = fit_curve(h100.points, feats, "attention_prefill", "fp16")
    fa3 = next(p for p in h100.points if p.op == "flash-attention-3")
    assert curve is not None and curve.ceiling > fa3.efficiency  # the d = 128 softmax share


def test_attention_leave_one_out_median_is_within_the_goal(shipped) -> None:
    import statistics

    store, gpus = shipped
    errs = []
    for slug, prof in store.profiles.items():
        best = best_attention_op(prof.points, features_of(gpus[slug], prof.features))
        for p in prof.points:
            if p.kernel_class != "attention_prefill" or p.op != best:
                continue
            pred, basis = profile_efficiency(
                gpus[slug], p.kernel_class, dict(p.shape), store.without(slug), gpus, dtype=p.dtype
            )
            assert pred is not None and basis.startswith("carried over")
            errs.append(abs(pred - p.efficiency) / p.efficiency)
    assert len(errs) >= 20
    assert statistics.median(errs) <= 0.15


def test_attention_is_carried_only_within_a_vendor(shipped) -> None:
    # each vendor's attention kernels are its own library: an MI300X sweep says nothing
    # about a Gaudi or an Apple GPU, and NVIDIA's FlashAttention nothing about ROCm's
    store, gpus = shipped
    e, basis = profile_efficiency(gpus["gaudi3"], "attention_prefill", {}, store, gpus)
    assert e is None and basis == "prior"
    e, basis = profile_efficiency(gpus["mi355x"], "attention_prefill", {}, store, gpus)
    assert e is not None and "NVIDIA" not in basis and "MI300X" in basis
    nvidia_only = store.without("mi300x").without("rx-7900-xtx")
    assert profile_efficiency(gpus["mi355x"], "attention_prefill", {}, nvidia_only, gpus)[0] is None


def test_flashattention_figures_are_not_carried_to_cards_that_cannot_run_it(shipped) -> None:
    # FlashAttention-2 needs Ampere or later: a V100 or T4 runs another attention kernel
    store, gpus = shipped
    for slug in ("v100-sxm2-32gb", "t4", "rtx-2080-ti"):
        e, basis = profile_efficiency(gpus[slug], "attention_prefill", {}, store, gpus)
        assert e is None and basis == "prior", slug
    assert profile_efficiency(gpus["a10"], "attention_prefill", {}, store, gpus)[0] is not None


@pytest.mark.parametrize("slug", ["h200-sxm", "b100", "h100-nvl", "h200-nvl"])
def test_a_carried_curve_does_not_depend_on_the_order_of_the_donors(shipped, slug) -> None:
    """The weighted sums over donors gave other last bits per donor order, and the server's
    store was built from a set, so answers differed between processes (hash seeds)."""
    store, gpus = shipped
    items = list(store.profiles.items())
    orders = (items, items[::-1], items[1:] + items[:1], sorted(items, reverse=True))
    found = {
        profile_efficiency(gpus[slug], "gemm", BIG, ProfileStore(dict(order)), gpus)[0]
        for order in orders
    }
    assert len(found) == 1, found
