"""Calibrated uncertainty bands: leave-one-GPU-out and leave-one-workload-out coverage of
published results, per regime; the band an unseen runtime or architecture needed."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import conformal
from app.shipped.rules import load_efficiency
from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
LLM = ROOT / "tests" / "data" / "llm_inference.yaml"


@pytest.fixture(scope="module")
def bands(accuracy):
    return accuracy.band_scores(ROOT / "data", TRAIN, LLM)


def test_every_regime_covers_80_percent_held_out(bands) -> None:
    regimes = {b.regime for b in bands}
    assert {"train", "train-llm", "infer", "infer-cnn", "decode", "prefill"} <= regimes
    for b in bands:
        assert b.coverage >= 0.8, (b.regime, b.vendor, b.coverage)
        assert b.low <= 1.0 <= b.high
        # TensorFlow CNN inference (DeepLearningExamples) runs ~0.69 of the engine: grouped
        # convolutions and host cost the engine does not model (methodology); nothing else
        # strays this far
        assert 0.65 <= b.bias <= 1.4, (b.regime, b.vendor, b.bias)


def test_shipped_bands_are_the_computed_ones(bands) -> None:
    """data/efficiency.yaml carries what `benchmarks/accuracy.py --write-bands` computes."""
    table = load_efficiency(ROOT / "data")
    for b in bands:
        lo, hi = table.bands[(b.regime, b.vendor)]
        assert lo == pytest.approx(b.low, abs=0.011), (b.regime, b.vendor)
        assert hi == pytest.approx(b.high, abs=0.011), (b.regime, b.vendor)
        # centred on the regime's bias: widenings spread about it, not about the estimate
        assert table.centres[(b.regime, b.vendor)] == pytest.approx(b.bias, abs=0.006)


def test_shipped_coverage_lists_are_the_calibration_sets(accuracy) -> None:
    table = load_efficiency(ROOT / "data")
    for regime, (runtimes, archs) in accuracy.band_coverage(ROOT / "data", TRAIN, LLM).items():
        assert table.covered[regime] == (frozenset(runtimes), frozenset(archs)), regime
    # FSDP pretraining and tensor-parallel serving: no multi-GPU widening there
    multi = accuracy.multi_gpu_regimes(ROOT / "data", TRAIN, LLM)
    # TensorRT-LLM's static-batch tuning rows run tensor parallel (decode and first token)
    assert table.multi_gpu == frozenset(multi) == {"train-llm", "serving", "decode", "prefill"}
    # and those LLM inference runs split every layer: no tuning row runs a layer split
    spans = accuracy.multi_gpu_spans(accuracy.calibration_rows(ROOT / "data", TRAIN, LLM))
    assert table.multi_gpu_spans == spans
    assert spans == {r: frozenset({"tensor"}) for r in ("serving", "decode", "prefill")}
    # the `span` term: each multi-GPU workload held out against its regime's one-GPU rows
    assert "span" in table.extrapolation


def test_conformal_band_uses_the_finite_sample_order_statistics(accuracy) -> None:
    ratios = [1 + i / 100 for i in range(19)]  # n = 19: j = ⌊20·0.1⌋ = 2, k = ⌈20·0.9⌉ = 18
    lo, hi = accuracy.conformal_band([r / 1.09 for r in ratios])
    assert lo == pytest.approx(1.01 / 1.09) and hi == pytest.approx(1.17 / 1.09)
    # too few rows for the correction: the extremes, then the margin past them
    lo, hi = accuracy.conformal_band([0.9, 1.1], margin=1.2)
    assert lo == pytest.approx(0.75) and hi == pytest.approx(1.32)


def test_a_runtime_measured_on_one_gpu_is_checked_by_its_workloads(accuracy) -> None:
    # Megatron-LM's own runs (one GPU model, four GPT sizes): no GPU to hold out, so the
    # band's coverage is its held-out workloads', not NaN
    rows = [
        accuracy.CalRow("train-llm", "megatron", f"gpt-{w}", "a100", "nvidia", "ampere", r)
        for w, r in zip(
            "ABCDABCDA", (0.9, 0.95, 0.92, 0.93, 0.91, 0.96, 0.9, 0.94, 0.92), strict=True
        )
    ]
    band = accuracy.bands_of(rows)[0]
    assert math.isfinite(band.coverage) and band.coverage >= 0.8
    assert band.low <= 0.9 and band.high >= 0.96 and band.high < 1.5


def test_held_out_bands_are_scored_per_regime_and_widened_where_they_extrapolate(
    accuracy,
) -> None:
    """Reports, never tunes: coverage is whatever the held-out measurements say."""
    from app.catalog.loader import read_gpu_specs
    from app.domain import bands as domain_bands

    rows, _ = accuracy.evaluate_heldout(ROOT / "data")
    scores = {s.regime: s for s in accuracy.heldout_band_scores(rows)}
    assert set(scores) == set(accuracy.HELDOUT_BAND_REGIME)
    for s in scores.values():
        assert 0.0 <= s.coverage <= 1.0 and s.median_width > 1.0
        inside = [r for r in rows if r.regime == s.regime and r.low <= r.ratio <= r.high]
        assert s.coverage == pytest.approx(len(inside) / s.n)
    # pooled row by row: every row with a band, counted once
    k, n = accuracy.pooled_coverage(list(scores.values()))
    assert n == sum(1 for r in rows if math.isfinite(r.low) and math.isfinite(r.high))
    assert k == sum(1 for r in rows if r.low <= r.ratio <= r.high)
    # the MoE, 4-bit and unmeasured-runtime rows carry their widenings
    gpus = {g.slug: g for g in read_gpu_specs(ROOT / "data")}
    # the DeepSeek-R1 (TensorRT-LLM, FP4) and LLaMA-65B (GPTQ) rows: MoE and 4-bit both apply
    doc_rows = {
        r.regime: r
        for r in rows
        if r.source in ("trtllm-blog1-dsr1-b200", "optimum-benchmark-llama65b")
    }
    for regime, want in (
        # TensorRT-LLM decode is calibrated since tests/data/trtllm_static.yaml: no runtime term
        ("moe-decode", [domain_bands.MOE, domain_bands.FOUR_BIT]),
        # transformers generate() is in the decode calibration set (tests/data/eager_decode.yaml)
        ("eager-decode", [domain_bands.FOUR_BIT]),
    ):
        row = doc_rows[regime]
        table = load_efficiency(ROOT / "data")
        base = table.band(accuracy.HELDOUT_BAND_REGIME[regime], gpus[row.slug].vendor)
        assert base is not None, regime
        assert row.low < base[0] and row.high / row.low > base[1] / base[0], regime
        for w in want:
            assert w.reason in row.basis, (regime, w.reason)
        assert domain_bands.UNMEASURED_RUNTIME.reason not in row.basis, regime
    xla = next(r for r in rows if r.regime == "cnn-training" and "tensorflow-xla" in r.group)
    assert domain_bands.UNMEASURED_RUNTIME.reason not in xla.basis
    # TensorFlow CNN training is calibrated in both modes: + XLA since
    # tests/data/dle_cnn_training.yaml, graph mode since tests/data/tf_cnn_training.yaml
    graph = [r for r in rows if r.regime == "cnn-training" and r.group.split()[1] == "tensorflow"]
    table = load_efficiency(ROOT / "data")
    assert graph
    for r in graph:
        assert domain_bands.UNMEASURED_RUNTIME.reason not in r.basis
        band = table.band("train", gpus[r.slug].vendor, "tensorflow")
        centre = table.centre("train", gpus[r.slug].vendor, "tensorflow")
        term = table.source_term("train")
        assert band is not None and term is not None
        # its regime's band, widened only for the new source every answer is
        spread = conformal.Spread.of(*band, centre).widened([term]).band()
        assert r.low == pytest.approx(spread[0]) and r.high == pytest.approx(spread[1])


def test_shipped_extrapolation_terms_are_the_computed_ones(accuracy) -> None:
    """Each extrapolation's term from the tuning sets' rows held out that way, as shipped; the
    runtime and architecture terms rest on enough units to cross-validate."""
    table = load_efficiency(ROOT / "data")
    wide = {x.name: x for x in accuracy.extrapolation_scores(ROOT / "data", TRAIN, LLM)}
    scores = {name: x.term for name, x in wide.items()}
    assert {"runtime", "architecture", "moe", "four_bit"} <= set(scores)
    for name, t in scores.items():
        assert t.coverage >= 0.8 - 1e-9 and t.units >= accuracy.MIN_TERM_UNITS, name
        lo, hi = table.extrapolation[name]
        assert lo == pytest.approx(t.low, abs=0.006) and hi == pytest.approx(t.high, abs=0.006)
        # one half-width for both sides: the direction of a new extrapolation is not known
        assert math.log(t.high) == pytest.approx(-math.log(t.low)), name
    for name in ("runtime", "architecture"):
        assert scores[name].units >= 10 and scores[name].cv_coverage >= 0.75, name
        assert not wide[name].pooled
    # MoE rests on its own workloads, one unit per model and set (serving's Qwen3-30B-A3B,
    # TensorRT-LLM v0.9's Mixtral in decode and first token, gpt-fast's Mixtral, llama.cpp's
    # Qwen3-30B-A3B and gpt-oss-20b at batch 1, GPUStack's vLLM DeepSeek-R1 bursts on 8 H200s),
    # not one per setting; the two dense 4-bit ones are too few: they take the pooled term
    assert not wide["moe"].pooled and scores["moe"].units == 7
    assert wide["four_bit"].pooled == ("moe", "four_bit")
    assert scores["four_bit"].units == scores["moe"].units + 2


def test_extrapolation_terms_are_what_a_unit_needs_beyond_a_new_source(accuracy) -> None:
    """Every row carries the new-source term, and a held-out runtime or architecture is a new
    source too: its unit is scored against the rest's band with that term in, so the
    extrapolation term is the excess, not the source's spread counted again."""
    rows = accuracy.calibration_rows(ROOT / "data", TRAIN, LLM)
    source = accuracy.source_scores(ROOT / "data", TRAIN, LLM)
    bare = accuracy.extrapolation_units(rows)
    nested = accuracy.extrapolation_units(rows, source)
    # a regime with enough sources of its own has its own term (infer-cnn since the HF
    # torch.compile vision rows, 2026-12-03); the rest take the pooled one
    terms = {x.regime: (x.term.low, x.term.high) for x in source}
    for name, held in bare.items():
        for b, n in zip(held, nested[name], strict=True):
            term = terms.get(b.unit.split()[0]) or terms["all"]
            assert n.unit == b.unit and n.ratios == b.ratios
            assert n.base == b.base.widened([term]), (name, b.unit)


def test_extrapolation_units_hold_out_what_the_widening_names(accuracy) -> None:
    rows = accuracy.calibration_rows(ROOT / "data", TRAIN, LLM)
    units = accuracy.extrapolation_units(rows)
    # a runtime unit is held out of its own regime: decode's transformers rows against the rest
    (tf,) = [h for h in units["runtime"] if h.unit == "decode transformers"]
    assert len(tf.ratios) == sum(1 for r in rows if [r.regime, r.runtime] == tf.unit.split())
    assert all(len(h.unit.split()) == 2 for h in units["runtime"])
    # 4-bit units come from the serving tables; MoE ones from serving (Qwen3-30B-A3B), decode
    # (Mixtral: TensorRT-LLM v0.9 static batches, gpt-fast at batch 1; llama.cpp's Qwen3-30B-A3B
    # and gpt-oss-20b at batch 1) and prefill (Mixtral, TensorRT-LLM v0.9 first token); since
    # 2026-12-07 DeepSeek-R1 under vLLM on 8 x H200 (serving_vllm_deepseek_h200.yaml) too
    assert {h.unit.split()[0] for h in units["four_bit"]} == {"serving"}
    assert {h.unit.split()[0] for h in units["moe"]} == {"serving", "decode", "prefill"}
    moe_models = ("a3b", "mixtral-8x7b", "gpt-oss-20b", "deepseek-r1")
    assert all(any(m in h.unit for m in moe_models) for h in units["moe"])
    assert any("deepseek-r1" in h.unit for h in units["moe"])
    assert any(h.unit.startswith("decode gptfast mixtral-8x7b") for h in units["moe"])
    assert any(h.unit.startswith("decode llamacpp-moe gpt-oss-20b") for h in units["moe"])


@pytest.fixture(scope="module")
def new_source(accuracy):
    """The tuning units' term alone: what the extrapolation terms are sized behind."""
    return accuracy.source_scores(ROOT / "data", TRAIN, LLM)


@pytest.fixture(scope="module")
def shipped_source() -> list:
    """The shipped term: the tuning and the held-out units (benchmarks/band_crossfit.py)."""
    return load_benchmark("band_crossfit.py", "bench_band_crossfit").source_scores(
        ROOT / "data", TRAIN, LLM
    )


def test_shipped_new_source_term_is_the_computed_one(shipped_source, new_source) -> None:
    """data/efficiency.yaml's `bands.new_source` is what --write-bands computes: the pooled
    term over the tuning and held-out (regime, source) units, and each regime's own where its
    units reach the rank."""
    table = load_efficiency(ROOT / "data")
    assert {x.regime for x in shipped_source} == set(table.new_source)
    assert "all" in table.new_source
    for x in shipped_source:
        lo, hi = table.new_source[x.regime]
        assert lo == pytest.approx(x.term.low, abs=0.006), x.regime
        assert hi == pytest.approx(x.term.high, abs=0.006), x.regime
        assert x.term.rank == math.ceil((x.term.units + 1) * 0.9 - 1e-9) <= x.term.units
        # in-sample the term covers ≥ 80 % of the sources' central 80 %
        assert x.term.met >= 0.8 and x.term.coverage >= 0.8, x.regime
    # the held-out sets' units are in the pool, beside every tuning unit
    shipped = {x.regime: x.term for x in shipped_source}["all"]
    tuning = {x.regime: x.term for x in new_source}["all"]
    assert shipped.units > tuning.units
    for x in new_source:  # the tuning units' own term holds its rank as before
        assert x.term.rank == math.ceil((x.term.units + 1) * 0.9 - 1e-9) <= x.term.units


FIRST = ROOT / "tests" / "data" / "first_scored_ratios.yaml"


def test_the_first_scored_term_is_a_wider_bound_beside_the_tuning_one(accuracy, new_source) -> None:
    """The tuning units' pooled term is sized on today's residuals; the one they give as
    first scored (tests/data/first_scored_ratios.yaml) is wider, and the tuning term holds
    fewer than 60 % of those first-scored sources' central 80 % (the bound printed beside it,
    not shipped: methodology §5, "A new source, as first scored"; the shipped term adds the
    held-out sets' units: test_shipped_new_source_term_is_the_computed_one)."""
    rows = accuracy.calibration_rows(ROOT / "data", TRAIN, LLM)
    first = accuracy.first_scored_units(rows, FIRST)
    today = accuracy.source_units(rows)
    assert {h.unit for h in first} == {h.unit for h in today}  # every unit has its record
    shipped = conformal.source_term(today)  # the tuning units' term (no held-out unit)
    assert shipped is not None
    assert {x.regime: x for x in new_source}["all"].term == shipped
    wide = conformal.source_term(first)
    assert wide is not None and wide.low < shipped.low and wide.high > shipped.high
    held = sum(conformal.source_met(h, (shipped.low, shipped.high)) for h in first)
    assert held / len(first) < 0.6
    with_record = accuracy.source_scores(ROOT / "data", TRAIN, LLM, first_scored=FIRST)
    assert {x.regime: x for x in with_record}["all"].term == wide


def test_first_scored_units_keep_todays_bands_and_the_stored_ratios(accuracy, tmp_path) -> None:
    """A stored row takes the band today's unit row of the same workload and GPU draws, and its
    first-scored ratio; a stored row today's unit lacks is dropped, a unit with no record left
    out."""
    rows = accuracy.calibration_rows(ROOT / "data", TRAIN, LLM)
    held, crs = next(
        (h, c) for h, c in accuracy.source_unit_rows(rows) if h.unit == "train lambda-tf-fp16"
    )
    r0, r1 = crs[0], crs[1]
    path = tmp_path / "first.yaml"
    path.write_text(
        "units:\n  - regime: train\n    source: lambda-tf-fp16\n    rows:\n"
        f"      - ['{r1.workload}', {r1.slug}, 0.5]\n"
        f"      - ['{r0.workload}', {r0.slug}, 2.0]\n"
        "      - ['no such workload', a100-sxm4-80gb, 9.0]\n",
        encoding="utf-8",
    )
    (unit,) = accuracy.first_scored_units(rows, path)
    assert unit.unit == held.unit and unit.ratios == (0.5, 2.0)
    assert unit.bases == (held.bases[1], held.bases[0])


def test_source_units_hold_out_whole_sources_of_their_regime(accuracy) -> None:
    rows = accuracy.calibration_rows(ROOT / "data", TRAIN, LLM)
    assert all(r.source for r in rows)
    units = accuracy.source_units(rows)
    by = {h.unit: h for h in units}
    # llama.cpp's scoreboards are sources of decode and of prefill alike
    # (its rows on an architecture no other source measured are the architecture term's, and
    # since r39bx those on an architecture no other source ran llama.cpp on the runtime ×
    # architecture term's; the ROCm scoreboard's are all such since the Vulkan one, which alone
    # shared its RDNA cards, calibrates no band: accuracy.BAND_BACKENDS_NOT_DRAWN)
    assert "decode rocm_scoreboard" not in by and "prefill rocm_scoreboard" not in by
    for regime in ("decode", "prefill"):
        rest = [r for r in rows if r.regime == regime and r.source != "cuda_scoreboard"]
        archs = {r.architecture for r in rest}
        pairs = {(r.runtime, r.architecture) for r in rest}
        mine = [r for r in rows if r.regime == regime and r.source == "cuda_scoreboard"]
        want = [
            r.ratio
            for r in mine
            if r.architecture in archs and (r.runtime, r.architecture) in pairs
        ]
        assert len(want) < len(mine)
        # every row extrapolates: no unit (prefill's, whose other sources run llama.cpp on
        # none of the scoreboard's CUDA architectures)
        if not want:
            assert f"{regime} cuda_scoreboard" not in by
            continue
        h = by[f"{regime} cuda_scoreboard"]
        assert list(h.ratios) == want and len(h.bases) == len(want)
    # serving's TensorRT-LLM tables are the whole of its band but for five vLLM rows: too thin
    # a rest to hold them out against
    assert "serving serving_trtllm" not in by
    # a row that would also extrapolate is the extrapolation terms' (calibrated on top of this
    # one), not the new source's: the one bare-PyTorch decode row's runtime is in no other
    # decode source, vLLM's in no other serving source, so neither unit is held out here
    table_wo = accuracy._table_of(
        [r for r in rows if r.regime == "decode" and r.source != "pytorch-gpt-fast-blog"], []
    )
    assert "pytorch" not in table_wo.covered["decode"][0]
    assert "decode pytorch-gpt-fast-blog" not in by and "serving serving_vllm_rtx4090" not in by
    # each row is scored against the band the rest draws for it, with no widening: a CUDA
    # scoreboard row against the llama.cpp decode band of the other sources
    rest = [r for r in rows if r.regime == "decode" and r.source != "cuda_scoreboard"]
    t = accuracy._table_of(rest, [])
    band = t.band("decode", "nvidia", "llama.cpp")
    assert band is not None
    assert by["decode cuda_scoreboard"].bases[0].band() == pytest.approx(band)


def test_amd_vllm_static_batches_stay_out_of_the_serving_band(accuracy) -> None:
    # scored as a tuning set, held back from the calibration (accuracy.SERVING_BAND_HELD_BACK):
    # their unexplained 1.1-2.0x would otherwise set the band of every vLLM serving answer
    rows = accuracy.serving_rows(ROOT / "data")
    assert rows and {r[-1] for r in rows} == {
        "serving_trtllm",
        "serving_vllm_rtx4090",
        "serving_vllm_deepseek_h200",
    }


def test_a_workload_kind_with_enough_rows_is_banded_apart_from_its_regime(accuracy) -> None:
    # the regime's band is fitted without the kind's rows, the kind's on them alone
    pre = [
        accuracy.CalRow("train-llm", "pytorch", f"pretrain m{i % 4}", f"g{i % 3}", "nvidia",
                        "Ampere", 0.9 + 0.01 * (i % 5))
        for i in range(24)
    ]  # fmt: skip
    ft = [
        accuracy.CalRow("train-llm", "pytorch", f"finetune q{i % 4}", "a100", "nvidia",
                        "Ampere", 0.5 + 0.05 * i, kind="fine-tuning")
        for i in range(12)
    ]  # fmt: skip
    scores = {(b.regime, b.vendor): b for b in accuracy.bands_of(pre + ft)}
    assert scores[("train-llm", "all")].n == len(pre)
    assert scores[("train-llm/fine-tuning", "all")].n == len(ft)
    assert scores[("train-llm", "all")].low >= 0.85  # the kind's spread stays out of it
    assert scores[("train-llm/fine-tuning", "all")].low <= 0.6
    # too few rows of a kind for a band of their own: pooled with the regime as before
    few = {(b.regime, b.vendor): b for b in accuracy.bands_of(pre + ft[:4])}
    assert ("train-llm/fine-tuning", "all") not in few
    assert few[("train-llm", "all")].n == len(pre) + 4


def test_the_fine_tuning_rows_are_of_the_fine_tuning_kind(accuracy) -> None:
    # the tuning rows (benchmarks/finetune.py) and the app's fine-tuning job key the same band
    from app.domain import bands as domain_bands
    from app.domain import rank
    from app.shipped.rules import load_efficiency
    from benchmarks.finetune import finetune_job

    assert accuracy._kind("finetune qwen-7b lora") == domain_bands.FINE_TUNING
    assert accuracy._kind("pretrain mpt-7b s2048") == ""
    assert ("train-llm/fine-tuning", "all") in load_efficiency(ROOT / "data").bands
    from app.catalog.loader import read_gpu_specs
    from benchmarks.llm_pretrain import decoder

    gpu = next(g for g in read_gpu_specs(ROOT / "data") if g.slug == "a100-sxm4-80gb")
    model = decoder({"family": "decoder", "params": 1.8e9, "layers": 24, "hidden_size": 2048,
                     "num_heads": 16, "num_kv_heads": 16, "intermediate_size": 5504,
                     "vocab_size": 151936})  # fmt: skip
    for peft in ("lora", "qlora", "none"):
        row = {"peft": peft, "micro_batch": 1, "seq_len": 512, "checkpointing": True}
        if peft == "qlora":
            row |= {"base_quant": "gptq", "precision": "fp16"}
        work, est = finetune_job(gpu, model, row, ROOT / "data")
        x = rank.row_band_inputs(gpu, work, est, False)
        assert (x.regime, x.kind) == ("train-llm", domain_bands.FINE_TUNING)
    pretrain = replace(work, task="training", peft="none", quantization="none")
    assert rank.row_band_inputs(gpu, pretrain, est, False).kind == ""
