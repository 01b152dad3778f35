"""Eager PyTorch CNN inference under DeepLearningExamples' ConvNets harness: cuDNN autotuned
(cudnn.benchmark = True in main.py and launch.py, whatever the --mode), so a dense 3×3 stride-1
convolution runs as Winograd on the CUDA cores where that beats the implicit GEMM
(data/efficiency.yaml, the pytorch infer-cnn rows)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.efficiency import EfficiencyTable
from app.domain.kernels import CLASS_INDEX
from app.domain.operators import CONV, CONV_3X3
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
TABLE = load_efficiency(DATA)
# the same table without autotuning for eager CNN inference (cuDNN's heuristics only)
UNTUNED = replace(
    TABLE,
    rows=tuple(
        r
        for r in TABLE.rows
        if not (r.values.get("winograd_3x3") and r.match.get("regime") == "infer-cnn")
    ),
)


def _inference(preset: str, precision: str, batch: int, table: EfficiencyTable) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=load_presets(DATA)[preset].model,
        precision=precision,
        batch_size=batch,
        runtime="pytorch",
        efficiency=table,
    )


def _rate(preset: str, slug: str, precision: str, batch: int, table: EfficiencyTable) -> float:
    work = _inference(preset, precision, batch, table)
    assert perf.table_prices(work) and perf.phase_regime(work) == "infer-cnn"
    return batch / perf.single_gpu(GPUS[slug], work).step_s


def test_eager_cnn_inference_autotunes_its_convolutions_as_the_harness_does() -> None:
    for slug in ("v100-sxm2-16gb", "t4"):
        prof = TABLE.profile(GPUS[slug], "cuda", "pytorch", "fp32", "infer-cnn")
        assert prof.winograd_3x3 == 2.25
    # transformer inference keeps cuDNN's heuristics (no convolutions to autotune)
    assert TABLE.profile(GPUS["t4"], "cuda", "pytorch", "fp32", "infer").winograd_3x3 is None


def test_resnet50_fp32_inference_runs_its_3x3_layers_as_winograd_on_a_v100() -> None:
    v100 = GPUS["v100-sxm2-16gb"]
    on = perf._build_on_gpu(
        v100, _inference("resnet-50", "fp32", 256, TABLE), "pytorch", None, None
    )
    assert on.rates is not None
    assert on.rates[CLASS_INDEX[CONV_3X3]] > 2.0 * on.rates[CLASS_INDEX[CONV]]
    # its 13 dense 3×3 stride-1 layers hold ~37 % of the FLOPs: the compute-bound batch speeds up
    tuned = _rate("resnet-50", "v100-sxm2-16gb", "fp32", 256, TABLE)
    untuned = _rate("resnet-50", "v100-sxm2-16gb", "fp32", 256, UNTUNED)
    assert tuned > 1.1 * untuned
    # batch 1 is host-bound (49 µs per dispatched kernel): no change
    assert _rate("resnet-50", "v100-sxm2-16gb", "fp32", 1, TABLE) == _rate(
        "resnet-50", "v100-sxm2-16gb", "fp32", 1, UNTUNED
    )


def test_grouped_3x3_layers_and_16bit_tensor_cores_keep_the_implicit_gemm() -> None:
    # ResNeXt-101's 3×3 layers are grouped (32 groups): nothing for Winograd to take
    for slug in ("v100-sxm2-16gb", "t4"):
        assert _rate("resnext101-32x4d", slug, "fp32", 256, TABLE) == _rate(
            "resnext101-32x4d", slug, "fp32", 256, UNTUNED
        )
    # AMP: the 16-bit tensor-core GEMM outruns Winograd on the CUDA cores
    assert _rate("resnet-50", "v100-sxm2-16gb", "fp16", 256, TABLE) == _rate(
        "resnet-50", "v100-sxm2-16gb", "fp16", 256, UNTUNED
    )


def test_only_cuda_core_datapaths_drop_the_tensor_core_channel_padding() -> None:
    assert perf._cuda_core_convs(GPUS["v100-sxm2-16gb"], "cuda", "fp32")
    assert perf._cuda_core_convs(GPUS["t4"], "cuda", "fp32")
    assert perf._cuda_core_convs(GPUS["gtx-1080-ti"], "cuda", "fp16")  # Pascal: no tensor cores
    assert not perf._cuda_core_convs(GPUS["v100-sxm2-16gb"], "cuda", "fp16")
    assert not perf._cuda_core_convs(GPUS["a100-sxm4-80gb"], "cuda", "tf32")
    assert not perf._cuda_core_convs(GPUS["t4"], "cuda", "int8")
    v100 = GPUS["v100-sxm2-16gb"]
    fp32 = perf._build_on_gpu(
        v100, _inference("resnet-50", "fp32", 64, TABLE), "pytorch", None, None
    )
    fp16 = perf._build_on_gpu(
        v100, _inference("resnet-50", "fp16", 64, TABLE), "pytorch", None, None
    )
    assert not fp32.tensor_conv and fp16.tensor_conv
