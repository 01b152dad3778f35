"""cuDNN's autotuner and an NCHW network's convolutions (2026-12-07, session 39 "tim", issue 21):
the autotuner times each algorithm's whole call, the NCHW↔NHWC transforms of a tensor-core call
included, so a convolution whose transforms cost more than the tensor cores save runs as an
implicit GEMM on the CUDA cores over NCHW (perf._autotuned_nchw). That happens on GeForce cards,
whose 16-bit tensor rate with FP32 accumulation is twice the FP32 one, not on an A100 (16×)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import kernels, perf
from app.domain.gpu import GpuSpec
from app.domain.operators import CONV, CONV_NCHW, Op, total
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _job(preset: str, batch: int, *, training: bool = False) -> WorkloadSpec:
    return WorkloadSpec(
        task="training" if training else "inference",
        model=load_presets(DATA)[preset].model,
        precision="fp16",
        batch_size=batch,
        seq_len=1,
        output_tokens=1,
        preset=preset,
        runtime="pytorch",
        efficiency=load_efficiency(DATA),
    )


def _tuned(gpu: GpuSpec, work: WorkloadSpec) -> tuple[perf._OnGpu, perf._StepJob, perf._StepJob]:
    on = perf._on_gpu(gpu, work, "pytorch", None, None)
    job = perf._step_job(work, True, on.act_b)
    return on, job, perf._autotuned_nchw(on, work, job)


def _moved(job: perf._StepJob) -> set[str]:
    return {o.name for o in job.ops or () if o.klass == CONV_NCHW}


def test_a_geforce_card_moves_memory_bound_convolutions_off_their_transforms(
    gpus: dict[str, GpuSpec],
) -> None:
    on, job, tuned = _tuned(gpus["rtx-4090"], _job("resnet-50", 1024))
    moved = _moved(tuned)
    assert moved
    names = {o.name for o in tuned.ops or ()}
    # a moved convolution keeps its FLOPs and loses its transforms
    for name in moved:
        assert f"{name}.nchw" not in names
        assert f"{name}.nchw" in {o.name for o in job.ops or ()}
    assert sum(tuned.library_kernels) < sum(job.library_kernels)
    assert total(list(tuned.ops or ())) == pytest.approx(total(list(job.ops or ())))
    # each move is the faster call as the engine prices the two
    rates = dict(zip(kernels.CLASSES, on.rates or (), strict=True))
    launch = on.prof.kernel_us * 1e-6

    def t(o: Op) -> float:
        return kernels.op_time(o, rates, on.bw, launch, on.sms, on.balance, on.tensor_conv)

    ops = {o.name: o for o in job.ops or ()}
    checked = 0
    for o in tuned.ops or ():
        if o.kind == "conv" and f"{o.name}.nchw" in ops and o.klass in (CONV, CONV_NCHW):
            tensor = t(ops[o.name]) + t(ops[f"{o.name}.nchw"])
            on_cores = t(replace(ops[o.name], klass=CONV_NCHW))
            assert (o.klass == CONV_NCHW) == (on_cores < tensor)
            checked += 1
    assert checked > len(moved)  # some stay on the tensor cores (layer4's compute-heavy ones)


def test_the_step_is_the_faster_one(gpus: dict[str, GpuSpec]) -> None:
    gpu, work = gpus["rtx-4090"], _job("efficientnet-b0", 1024)
    on, job, tuned = _tuned(gpu, work)
    est = perf.single_gpu(gpu, work)
    assert on.rates is not None
    assert est.step_s == pytest.approx(perf._operator_step(on, tuned, on.rates, 0.0).step_s)
    assert est.step_s < perf._operator_step(on, job, on.rates, 0.0).step_s


def test_an_a100_keeps_its_convolutions_on_the_tensor_cores(gpus: dict[str, GpuSpec]) -> None:
    for preset, batch in (("resnet-50", 256), ("efficientnet-b0", 256)):
        _, job, tuned = _tuned(gpus["a100-sxm4-80gb"], _job(preset, batch))
        assert tuned is job


def test_training_and_channels_last_are_left_as_they_were(gpus: dict[str, GpuSpec]) -> None:
    _, job, tuned = _tuned(gpus["rtx-4090"], _job("resnet-50", 256, training=True))
    assert tuned is job
    nhwc = _job("resnet-50", 1024)
    _, job, tuned = _tuned(gpus["rtx-4090"], replace(nhwc, channels_last=True))
    assert tuned is job


def test_the_cuda_core_class_runs_at_the_vector_rate() -> None:
    idx = kernels.CLASS_INDEX[CONV_NCHW]
    assert kernels.class_rates(100.0, 14.0)[idx] == 14.0
    assert kernels.class_rates(100.0, None)[idx] == 100.0  # as the other CUDA-core classes
