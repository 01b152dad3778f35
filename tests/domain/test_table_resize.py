"""A preset's traced operator table at another image size (operators.rescaled_table)."""

from __future__ import annotations

import pytest

from app.domain.operators import rescaled_table
from app.recommend.presets import load_presets


def _table(preset: str, decoder: bool = False):
    m = load_presets()[preset].model
    t = m.decoder_operators if decoder else m.operators
    assert t is not None
    return t


def _op(table, name: str) -> dict:
    (o,) = [o for o in table.ops if o.get("name") == name]
    return o


def test_a_cnn_at_twice_the_side_does_four_times_the_work_but_its_classifier_the_same():
    base = _table("resnet-50")
    big = rescaled_table(base, 2.0)
    # ResNet-50 at 448 is 4x the convolutions; only the 2048 x 1000 classifier stays
    assert big.gflops == pytest.approx(4 * base.gflops, rel=0.01)
    assert _op(big, "conv1")["h_out"] == 224 and _op(big, "conv1")["h_in"] == 448
    assert _op(big, "fc") == _op(base, "fc")
    pool = _op(big, "avgpool")  # adaptive: 2048 x 14 x 14 in, 2048 out
    assert pool["elements_in"] == 4 * _op(base, "avgpool")["elements_in"]
    assert pool["elements_out"] == _op(base, "avgpool")["elements_out"]
    assert rescaled_table(base, 1.0).ops == base.ops


def test_an_adaptive_pool_keeps_its_output_and_a_stride_one_pool_grows():
    vgg = rescaled_table(_table("vgg16"), 2.0)
    assert _op(vgg, "avgpool")["elements_out"] == 25088  # VGG's AdaptiveAvgPool2d((7, 7))
    assert _op(vgg, "classifier.0")["k"] == 25088
    yolo = rescaled_table(_table("yolov8m"), 2.0)
    assert _op(yolo, "model.9.m")["elements_out"] == 4 * 115200  # SPPF's max pools


def test_squeeze_excite_gates_stay_on_their_one_pixel_maps():
    base = _table("efficientnet-b0")
    big = rescaled_table(base, 2.0)
    gate = "features.1.0.block.1.fc1"
    assert _op(big, gate) == _op(base, gate)
    assert _op(big, "features.1.0.block.1.avgpool")["elements_out"] == 32


def test_a_unet_grows_its_self_attention_faster_than_its_cross_attention():
    base = _table("stable-diffusion-1.5")
    big = rescaled_table(base, 2.0)
    name = "down_blocks.0.attentions.[0-1].transformer_blocks.0"
    self_attn, cross = _op(big, f"{name}.attn1"), _op(big, f"{name}.attn2")
    assert (self_attn["q_len"], self_attn["kv_len"]) == (16384, 16384)
    assert (cross["q_len"], cross["kv_len"]) == (16384, 77)  # the 77 CLIP tokens stay
    assert _op(big, f"{name}.attn2.to_k")["m"] == 77
    assert _op(big, "time_embedding.linear_1") == _op(base, "time_embedding.linear_1")
    # convolutions x4, self-attention's scores x16: more than 4x in all
    assert 4 * base.gflops < big.gflops < 16 * base.gflops
    vae = rescaled_table(_table("stable-diffusion-1.5", decoder=True), 2.0)
    assert vae.gflops > 4 * _table("stable-diffusion-1.5", decoder=True).gflops


def test_a_larger_image_is_slower_and_needs_more_memory_through_the_engine():
    # model.input_size had been ignored: ResNet-50 at 448 and 896 came out *faster* than at
    # 224 with the same memory (the table was dropped for the 224-pixel whole-model figures)
    from app.domain import perf
    from app.domain.workload import memory_breakdown
    from app.recommend import schemas as s
    from app.recommend.workloads import resolve_workload
    from tests.domain.fixtures import H100

    def job(side: int, preset: str = "resnet-50"):
        work, warnings = resolve_workload(
            s.WorkloadIn.model_validate({"preset": preset, "model": {"input_size": side}})
        )
        return work, warnings

    small, quiet = job(224)
    big, said = job(448)
    assert not quiet and any("traced at 224" in x for x in said), said
    assert big.model.gflops_per_sample == pytest.approx(4 * small.model.gflops_per_sample)
    slow, fast = perf.estimate(H100, big), perf.estimate(H100, small)
    assert 3.0 < fast.throughput / slow.throughput < 5.0
    assert memory_breakdown(big).activations == pytest.approx(
        4 * memory_breakdown(small).activations, rel=0.02
    )
    sd, _ = job(512, "stable-diffusion-1.5")
    sd_big, _ = job(1024, "stable-diffusion-1.5")
    assert sd_big.model.gflops_per_sample > 4 * (sd.model.gflops_per_sample or 0)
    # the GPU's work (its host dispatch, which bounds SD 1.5 at 512 on an H100, does not grow)
    big_gpu, gpu = perf.estimate(H100, sd_big), perf.estimate(H100, sd)
    assert big_gpu.compute_s + big_gpu.memory_s > 4 * (gpu.compute_s + gpu.memory_s)
    assert big_gpu.throughput < gpu.throughput


def test_a_diffusion_pipeline_at_fewer_steps_is_faster_and_needs_the_same_memory():
    # 40 UNet passes of SDXL had been priced slower than its 50 (the per-image FLOPs kept
    # whole, the missing passes were charged as a larger VAE decode), and memory moved with them
    from app.domain import perf
    from app.domain.workload import memory_breakdown
    from app.recommend import schemas as s
    from app.recommend.workloads import resolve_workload
    from tests.domain.fixtures import H100

    def job(passes: int):
        w = {"preset": "sdxl", "model": {"passes_per_sample": passes}}
        return resolve_workload(s.WorkloadIn.model_validate(w))[0]

    few, usual, many = job(40), job(50), job(60)
    unet = usual.model.operators.gflops_forward
    assert few.model.gflops_per_sample == pytest.approx(usual.model.gflops_per_sample - 10 * unet)
    times = [1 / perf.estimate(H100, w).throughput for w in (few, usual, many)]
    assert times[0] < times[1] < times[2]
    peaks = [memory_breakdown(w).total for w in (few, usual, many)]
    assert max(peaks) < 1.01 * min(peaks)
