"""Quality said out loud: the weight formats allowed by default and the cost each names."""

from __future__ import annotations

from app.domain.gpu import GpuSpec
from app.domain.serving_step import serving_weights
from app.recommend import quality


def test_by_default_only_the_published_weights_are_planned() -> None:
    assert serving_weights("bf16", "bf16", True, False) == ("bf16",)
    # fp8 only where the model publishes fp8 weights and the card runs fp8 natively
    assert serving_weights("bf16", "fp8", True, False) == ("bf16", "fp8")
    assert serving_weights("fp16", "fp8", False, False) == ("fp16",)
    assert serving_weights("bf16", "bf16", True, True) == ("bf16", "int4", "fp4")


def test_every_quantised_format_names_its_cost_and_source() -> None:
    assert quality.cost_note("bf16") is None and quality.cost_note("fp16", "none") is None
    for precision in ("fp8", "int8", "int4", "fp4"):
        note = quality.cost_note(precision)
        assert note is not None and "source:" in note and "http" in note, precision
    for fmt in ("awq", "gptq", "nvfp4", "mxfp4", "q4_0", "q4_k_m", "q8_0", "nf4"):
        note = quality.cost_note("int4", fmt)
        assert note is not None and note.startswith(f"quality: {fmt} weights"), fmt
    # a named format wins over its precision: GGUF Q4_K_M's own perplexity figure
    assert "0.18" in (quality.cost_note("int4", "q4_k_m") or "")


def test_a_cnns_quantised_weights_name_a_vision_measurement_never_a_language_models() -> None:
    # ResNet-50 int8 under TensorRT had cited the Llama-3.1 study's 1-3 % loss
    cnn = quality.cost_note("int8", family="cnn")
    assert cnn is not None and "2004.09602" in cnn and "Llama" not in cnn
    # a format with no figure for the family says so, with no language model's figure
    sd = quality.cost_note("int8", family="diffusion")
    assert sd is not None and "no published measurement" in sd and "Llama" not in sd
    # a language model keeps its own table, and every figure says whose model it was
    llm = quality.cost_note("int4", "q4_k_m", family="decoder")
    assert llm is not None and "Llama-3-8B" in llm and "source's own model" in llm


def test_a_cnn_in_four_bits_is_refused_by_name() -> None:
    import pytest

    from app.errors import InvalidInput
    from app.recommend import schemas as s
    from app.recommend.workloads import resolve_workload

    for precision in ("int4", "fp4"):
        w = s.WorkloadIn.model_validate(
            {"preset": "resnet-50", "task": "inference", "precision": precision}
        )
        with pytest.raises(InvalidInput) as err:
            resolve_workload(w)
        assert err.value.field == "workload.precision"


def test_an_fp8_kv_cache_names_its_cost_and_source_and_16_bit_none() -> None:
    note = quality.kv_note("fp8")
    assert note is not None and note.startswith("quality: fp8 KV cache") and "vllm" in note
    assert quality.kv_note("bf16") is None and quality.kv_note("fp16") is None
    assert quality.notes("bf16", "bf16") == ()
    both = quality.notes("fp8", "fp8")
    assert len(both) == 2 and "weights" in both[0] and "KV cache" in both[1]


def test_a_spot_rental_warns_of_interruptions_and_training_of_restarts() -> None:
    from app.domain.cost import CloudOffer, GpuOffers, RentalPolicy, Usage, price_configuration
    from app.recommend.rows import spot_warning

    offer = CloudOffer("aws", "p5", 8, 98.0, 40.0, "on-demand", "2026-11-30", "test", 1, "H100")
    spot = price_configuration(GpuOffers(cloud=(offer,)), 8, RentalPolicy(allow_spot=True), Usage())
    plain = price_configuration(GpuOffers(cloud=(offer,)), 8, RentalPolicy(), Usage())
    assert spot.rent is not None and spot.rent.spot
    training = spot_warning(spot, training=True)
    assert training is not None and "reclaim" in training and "checkpoint" in training
    serving = spot_warning(spot, training=False)
    assert serving is not None and "checkpoint" not in serving
    assert spot_warning(plain, training=True) is None and spot_warning(None, True) is None


def test_weight_format_none_keeps_unquantised_weights_under_allow_4bit() -> None:
    from app.recommend import schemas as s
    from app.recommend import service
    from tests.domain.fixtures import A100, H100, RTX4090, RULES

    def answer(**workload: object) -> s.RecommendationResponse:
        request = s.RecommendationRequest.model_validate(
            {
                "workload": {"preset": "llama-3.1-70b", "task": "serving", **workload,
                             "serving": {"concurrent_requests": 64}},
                "constraints": {"allow_4bit": True},
                "limit": 20,
            }
        )  # fmt: skip
        return service.recommend(request, [A100, H100, RTX4090], RULES)

    blank, none = answer(), answer(quantization="none")
    assert {r.precision for r in blank.recommendations} & {"int4", "fp4"}  # the planner's pick
    assert none.recommendations
    assert not {r.precision for r in none.recommendations} & {"int4", "fp4"}
    assert any("allow_4bit not applied" in w for w in none.warnings)


def test_allow_4bit_outside_serving_is_said_not_silently_dropped() -> None:
    from app.recommend import schemas as s
    from app.recommend.serving import ask_warnings

    cons = s.ConstraintsIn.model_validate({"allow_4bit": True})
    w = s.WorkloadIn.model_validate({"preset": "llama-3-70b", "task": "inference"})
    (said,) = ask_warnings(w, cons, "inference")
    assert "applies to serving" in said and "workload.quantization" in said
    (trained,) = ask_warnings(w, cons, "fine-tuning")
    assert "applies to serving" in trained and "workload.quantization" not in trained
    assert ask_warnings(w, s.ConstraintsIn(), "inference") == []
    assert ask_warnings(w, cons, "serving") == []  # the planner follows it there


def _serving_exclusion(preset: str, gpu: GpuSpec) -> str:
    """Why ``gpu`` cannot serve ``preset`` to four users, as the answer says."""
    from app.recommend import schemas as s
    from app.recommend import service
    from tests.domain.fixtures import RULES

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": preset, "task": "serving",
                      "serving": {"concurrent_requests": 4}}}
    )  # fmt: skip
    r = service.recommend(request, [gpu], RULES)
    return next(e.reason for e in r.excluded if e.slug == gpu.slug)


def test_a_serving_card_too_small_names_its_closest_miss() -> None:
    # DeepSeek-R1 (published in FP8) on H100s: the reason once quoted one GPU at bf16
    # ("weights take 1,250 GB of 79 GB"), not the 8-GPU fp8 replica that comes closest
    import re

    from tests.domain.fixtures import H100

    why = _serving_exclusion("deepseek-r1", H100)
    assert "closest shape tried: 8 GPUs per replica, fp8 weights" in why, why
    taken = re.search(r"weights take ([\d.]+) GiB", why)
    assert taken is not None and float(taken.group(1)) < 100  # 671 B fp8 over 8, not 1,250


def test_a_serving_card_with_one_shape_gives_the_reason_alone() -> None:
    # a one-device card tries one GPU per replica at the published weights: "closest shape
    # tried" would name the shape the reason already describes (page weight, issue 23 audit)
    from tests.domain.fixtures import M2

    why = _serving_exclusion("llama-3-70b", M2)
    assert "weights take" in why and "closest shape tried" not in why, why


def test_llamacpps_serving_format_is_the_one_its_serving_row_prices() -> None:
    # the formats a llama.cpp serving request may name are its serving row's own GGUF int4
    # format and the named formats it reads on that path (MXFP4), which inference runs too
    from app.domain.efficiency import serving_spec
    from app.recommend.presets import DATA_DIR
    from app.shipped.rules import load_efficiency
    from app.vocab import LLAMACPP_FORMATS

    spec = serving_spec(load_efficiency(DATA_DIR), "llama.cpp")
    assert spec is not None
    reads = {f: "int4" for f in (spec.int4_format, *spec.int4_reads)}
    assert reads == quality.LLAMACPP_SERVING_FORMATS and spec.int4_reads == ("mxfp4",)
    assert set(reads) <= set(LLAMACPP_FORMATS)
    assert quality.serving_formats("llama.cpp") is quality.LLAMACPP_SERVING_FORMATS
    assert (
        quality.serving_formats(None) is quality.serving_formats("vllm") is quality.SERVING_FORMATS
    )
