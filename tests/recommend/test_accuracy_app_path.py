"""benchmarks/accuracy.py scores as the app answers (issue 21, "one engine"): the calibration
the service attaches while no device report is stored carries the shipped kernel profiles
(data/profiles/), where the benchmark path prices on the priors (calibration None)."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import bands as domain_bands
from app.domain import perf
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
PROFILED = "a100-sxm4-80gb"  # data/profiles/a100-sxm4-80gb.yaml: its own GEMM and attention points
# No profile, and no profiled GPU of its vendor and segment to carry one over from (no
# Intel consumer profile; GEMMs carry over within a segment, attention within a vendor)
UNPROFILED = "arc-a770-16gb"
CARRIED = "h100-nvl"  # no profile of its own, but profiled datacenter NVIDIA donors


@pytest.fixture(scope="module")
def cal(accuracy: ModuleType) -> Calibration:
    out = accuracy.app_calibration(DATA)
    assert isinstance(out, Calibration)
    return out


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def test_app_calibration_is_the_services_with_no_report_stored(cal: Calibration) -> None:
    assert cal.by_slug == {} and cal.by_family == {}  # no measured efficiency
    assert cal.profiles is not None
    shipped = {p.stem for p in (DATA / "profiles").glob("*.yaml")}
    assert set(cal.profiles.profiles) == shipped and PROFILED in shipped
    assert UNPROFILED not in shipped and CARRIED not in shipped


def test_a_profiled_gpu_gets_its_profile_and_an_unprofiled_one_none(
    cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    own = perf.efficiencies(gpus[PROFILED], cal)
    assert own.gemm["bf16"].basis == "published figures for this GPU"
    assert own.attention is not None and own.attention.basis == "published figures for this GPU"
    assert perf.efficiencies(gpus[PROFILED], None).gemm == {}  # the benchmark path: priors

    bare = perf.efficiencies(gpus[UNPROFILED], cal)
    assert bare.gemm == {} and bare.attention is None
    assert bare == perf.efficiencies(gpus[UNPROFILED], None)


def test_an_unprofiled_gpu_with_donors_gets_a_carried_over_profile(
    cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    """Why the app path can differ on a GPU without a profile of its own: the carry-over."""
    eff = perf.efficiencies(gpus[CARRIED], cal)
    assert eff.gemm["bf16"].basis.startswith("carried over from")


def _finetune_row(slug: str) -> dict[str, Any]:
    """A LoRA fine-tuning row as the held-out files write one (not a held-out row)."""
    return {
        "regime": "llm-finetuning",
        "model": "m",
        "gpu_slug": slug,
        "precision": "bf16",
        "peft": "lora",
        "lora_rank": 16,
        "batch_size": 8,  # compute-bound: at 1 the host dispatch hides the GEMM rate
        "num_gpus": 1,
        # short enough that the GEMMs (the published points the test is about) dominate the step
        "seq_len": 512,
        "grad_accum": 1,
        "runtime": "pytorch",
        "metric": "tokens_per_s_per_gpu",
    }


MODELS = {
    "m": {
        "params": 1.1e9,
        "layers": 22,
        "hidden_size": 2048,
        "num_heads": 32,
        "num_kv_heads": 4,
        "intermediate_size": 5632,
        "vocab_size": 32000,
    }
}


def test_both_paths_agree_on_an_unprofiled_gpu_and_differ_on_a_profiled_one(
    accuracy: ModuleType, cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    def both(slug: str) -> tuple[float, float]:
        row = _finetune_row(slug)
        bench = accuracy.heldout_estimate(row, gpus[slug], DATA, MODELS)[0]
        app = accuracy.heldout_estimate(row, gpus[slug], DATA, MODELS, cal)[0]
        return float(bench), float(app)

    bench, app = both(UNPROFILED)
    assert bench > 0 and app == bench
    bench, app = both(PROFILED)
    # its published GEMM points (0.87 of the bf16 peak) beat the datacenter prior
    assert bench > 0 and app > bench * 1.01


# ------------------------------------------------ the band a row carries as the app answers


def _reported(gpus: dict[str, GpuSpec]) -> Calibration:
    """What the service attaches once one device report of PROFILED is stored: its bf16
    best-shape GEMM point pooled into the shipped profile (app.reports.service)."""
    from app.bench.report import SCHEMA_VERSION
    from app.domain.calibration import KernelMeasurement
    from app.domain.kernel_profiles import BEST_GEMM_SHAPE, shape_key
    from app.reports.service import calibration_of_reports

    point = ("gemm", "bf16", shape_key(BEST_GEMM_SHAPE), 0.84)
    report = KernelMeasurement(PROFILED, "cuda", SCHEMA_VERSION, (point,))
    out = calibration_of_reports([], [report], list(gpus.values()))
    assert out is not None
    return out


def _llama_row() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A LoRA fine-tuning row of the llama-3-8b preset's shape on PROFILED (not a held-out
    row), and the file's `models` entry for it."""
    from app.recommend.presets import load_presets

    m = load_presets(DATA)["llama-3-8b"].model
    shape = {
        "params": m.params,
        "layers": m.layers,
        "hidden_size": m.hidden_size,
        "num_heads": m.num_heads,
        "num_kv_heads": m.num_kv_heads,
        "intermediate_size": m.intermediate_size,
        "vocab_size": m.vocab_size,
    }
    row = {**_finetune_row(PROFILED), "model": "llama", "batch_size": 4}
    return row, {"llama": shape}


def _service_band(gpu: GpuSpec, calibration: Calibration) -> tuple[float, float, str]:
    """The band the service's row carries for the same job on one ``gpu``."""
    from app.recommend import schemas as s
    from app.recommend import service
    from app.shipped.rules import load_rules

    req = s.RecommendationRequest.model_validate(
        {
            "workload": {
                "preset": "llama-3-8b",
                "task": "fine-tuning",
                "peft": "lora",
                "lora_rank": 16,
                "batch_size": 4,
                "seq_len": 1024,
                "precision": "bf16",
                "runtime": "pytorch",
            },
            "objective": "fastest",
            "constraints": {"num_gpus": 1},
        }
    )
    (row,) = service.recommend(req, [gpu], load_rules(DATA), calibration).recommendations
    assert row.num_gpus == 1 and row.precision == "bf16" and row.runtime == "pytorch"
    u = row.uncertainty
    return u.factor_low, u.factor_high, u.basis


@pytest.mark.parametrize("reported", [False, True], ids=["shipped", "one-report"])
def test_the_app_path_band_is_the_one_the_service_attaches(
    accuracy: ModuleType, cal: Calibration, gpus: dict[str, GpuSpec], reported: bool
) -> None:
    """heldout_estimate's app band for a profiled GPU's row is the service's row band for the
    same job under the same calibration; with a device report of the GPU stored, that is the
    measured band, which the benchmark path (priors) never draws."""
    calibration = _reported(gpus) if reported else cal
    row, models = _llama_row()
    gpu = gpus[PROFILED]
    _, inputs, app = accuracy.heldout_estimate(row, gpu, DATA, models, calibration)
    assert app is not None
    want = _service_band(gpu, calibration)
    assert app[:2] == pytest.approx(want[:2], rel=1e-12) and app[2] == want[2]
    _, bench_inputs, _ = accuracy.heldout_estimate(row, gpu, DATA, models)
    assert bench_inputs.efficiency_source == "prior"
    if reported:
        assert inputs.efficiency_source == "measured"
        assert app[2].startswith("efficiencies measured on this GPU model")
        bench = domain_bands.band(bench_inputs, load_efficiency(DATA))
        assert bench[2].startswith("modelled; ≈80 % band from published train-llm")
        assert app[:2] != pytest.approx(bench[:2])
    else:  # published figures for this GPU: its GEMMs move, its band does not
        assert app[2].startswith("modelled; ≈80 % band from published train-llm")


def test_a_prompt_row_carries_the_first_token_band_as_the_app_answers(
    accuracy: ModuleType, cal: Calibration, gpus: dict[str, GpuSpec]
) -> None:
    """An answer bands its throughput (an LLM row's decode rate) and its time to first token
    (the prefill band, inverted): a held-out prompt-processing row scores the row's
    first-token band on the app path, which is its measured regime's, as on the benchmark
    path (the same row inputs in the prefill regime)."""
    path = DATA.parent / "tests" / "data" / "heldout_llamacpp_llama3.yaml"
    bench, _ = accuracy.evaluate_heldout(DATA, [path], cal)
    app, _ = accuracy.evaluate_heldout(DATA, [path], cal, app_bands=True)
    prompt = [r for r in app if r.metric in accuracy.APP_FIRST_TOKEN_METRICS]
    decode = [r for r in app if r.metric == "decode_tokens_per_s"]
    assert prompt and decode and not accuracy.APP_UNBANDED_METRICS
    assert all("published prefill results" in r.basis for r in prompt)
    bench_prompt = [(r.low, r.high) for r in bench if r.metric in accuracy.APP_FIRST_TOKEN_METRICS]
    assert [(r.low, r.high) for r in prompt] == bench_prompt
    # the decode rows carry the row band, here their measured regime's as on the benchmark path
    bench_decode = [(r.low, r.high) for r in bench if r.metric == "decode_tokens_per_s"]
    assert [(r.low, r.high) for r in decode] == bench_decode
    scores = {s.regime: s for s in accuracy.heldout_band_scores(app)}
    assert scores["llamacpp-prefill"].unbanded == 0 and scores["llamacpp-prefill"].n > 0
    assert scores["llamacpp-decode"].unbanded == 0 and scores["llamacpp-decode"].n > 0


def test_band_scores_count_rows_without_a_band_apart(accuracy: ModuleType) -> None:
    def row(low: float, high: float, measured: float) -> Any:
        return accuracy.HeldoutRow(
            "bert-tensorrt", "g", "x", "samples_per_s", measured, 1.0, low, high
        )

    rows = [row(0.8, 1.25, 1.0), row(0.8, 1.25, 2.0), row(math.nan, math.nan, 1.0)]
    (s,) = accuracy.heldout_band_scores(rows)
    assert (s.n, s.unbanded, s.coverage) == (2, 1, 0.5)
    assert s.median_width == pytest.approx(1.5625) and not s.meets_goal
    (s,) = accuracy.heldout_band_scores(rows[:1])
    assert s.meets_goal  # 100 % at ×1.56
