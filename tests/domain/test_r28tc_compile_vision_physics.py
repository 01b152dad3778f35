"""torch.compile (Inductor, default mode) and eager vision inference in fp32, as the Hugging
Face guide's tuning rows ran them (tests/data/hf_compile_vision.yaml: torch 2.0.1, NCHW,
PyTorch's TF32 defaults): what Inductor folds and what it leaves, which datapath each layer
runs, and where cuDNN's layout transforms run (docs/methodology.md §6.7j)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.operators import LAYOUT_ROLES
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)


def _job(preset: str, runtime: str, batch: int = 16, torch_version: str = "") -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS[preset].model,
        precision="fp32",
        batch_size=batch,
        runtime=runtime,
        efficiency=TABLE,
        torch_version=torch_version,
    )


def _kept(slug: str, work: WorkloadSpec) -> list[tuple[str, str, float]]:
    """(kind, role, count) of the ops the step runs on ``slug`` (the runtime's fusions and the
    transforms that do not run there dropped)."""
    on = perf._build_on_gpu(GPUS[slug], work, "pytorch", None, "cuda")
    ops = perf.step_ops(work, True, on.act_b)
    assert ops is not None
    return [(o.kind, o.role, o.count) for o in ops if not (o.role and o.role in on.drop)]


def _count(ops: list[tuple[str, str, float]], kind: str, role: str | None = None) -> float:
    return sum(n for k, r, n in ops if k == kind and (role is None or r == role))


def test_default_mode_keeps_one_batch_norm_pass_per_convolution() -> None:
    # Inductor folds a BatchNorm into its convolution's weights only when freezing
    # (torch._inductor.config.freezing, off by default; pre_grad.fuse_fx returns before
    # fuse_conv_bn for a CUDA graph): the default mode runs each eval-mode BN as a Triton
    # pointwise kernel with the ReLU and the residual add fused into it. So the compiled
    # ResNet-50 keeps eager's 53 BN passes and drops its 49 ReLU and 16 add passes.
    eager = _kept("a100-sxm4-40gb", _job("resnet-50", "pytorch"))
    compiled = _kept("a100-sxm4-40gb", _job("resnet-50", "torch-compile"))
    assert _count(compiled, "norm") == _count(eager, "norm") == 53
    assert _count(compiled, "conv") == _count(eager, "conv") == 53
    assert _count(eager, "elementwise", "act") == 49
    assert _count(eager, "elementwise", "residual") == 16
    assert _count(compiled, "elementwise", "act") == 0
    assert _count(compiled, "elementwise", "residual") == 0


@pytest.mark.parametrize("runtime", ["pytorch", "torch-compile"])
def test_fp32_vision_runs_tf32_convolutions_and_fp32_matmuls(runtime: str) -> None:
    # torch.backends.cudnn.allow_tf32 defaults to True, torch.backends.cuda.matmul.allow_tf32
    # to False (since 1.12): on an A100 the CNN's convolutions run TF32 on tensor cores, the
    # ViT's linear layers FP32 on the CUDA cores; before Ampere both run FP32 on CUDA cores
    for slug, cnn_mode in (("a100-sxm4-40gb", "tf32"), ("v100-sxm2-16gb", "fp32"), ("t4", "fp32")):
        cnn = perf._build_on_gpu(GPUS[slug], _job("resnet-50", runtime), "pytorch", None, "cuda")
        vit = perf._build_on_gpu(GPUS[slug], _job("vit-b-16", runtime), "pytorch", None, "cuda")
        assert cnn.mode == cnn_mode, slug
        assert vit.mode == "fp32", slug
        # a CUDA-core convolution pads no input to a tensor-core K step
        assert cnn.tensor_conv is (cnn_mode == "tf32"), slug


def test_inductor_2_0_keeps_nchw_transforms_around_tensor_core_convolutions_only() -> None:
    # Inductor's layout optimisation (channels-last convolutions) came with PyTorch 2.1: the
    # guide's 2.0.1 compiled ResNet-50 reaches cuDNN in NCHW, which transforms around each
    # tensor-core (TF32) convolution on the A100; a V100's or T4's FP32 CUDA-core kernels
    # read NCHW directly
    old = _job("resnet-50", "torch-compile", torch_version="2.0.1")
    assert _count(_kept("a100-sxm4-40gb", old), "elementwise", "layout") == 40
    for slug in ("v100-sxm2-16gb", "t4"):
        assert not [r for _, r, _ in _kept(slug, old) if r in LAYOUT_ROLES], slug
    # 2.1 onwards (and an unstated, current release): no transforms on any of them
    for version in ("2.1.0", ""):
        new = replace(old, torch_version=version)
        for slug in ("a100-sxm4-40gb", "v100-sxm2-16gb", "t4"):
            assert not [r for _, r, _ in _kept(slug, new) if r in LAYOUT_ROLES], (version, slug)


def test_compiled_batch_1_is_the_hosts_launches_on_every_gpu() -> None:
    # the default mode runs no CUDA graph: Inductor's Python wrapper launches the 53 cuDNN
    # convolutions, 53 fused BN(+add)+ReLU kernels, the two pools and the classifier, 109 in
    # all, at the infer-cnn figure per launch; at batch 1 that host time binds every GPU alike
    # (the guide: 4.12 / 3.82 / 4.32 ms on A100 / V100 / T4)
    steps = set()
    for slug in ("a100-sxm4-40gb", "v100-sxm2-16gb", "t4"):
        one = perf.single_gpu(
            GPUS[slug], _job("resnet-50", "torch-compile", batch=1, torch_version="2.0.1")
        )
        assert one.dispatch == pytest.approx(109 * 38e-6)
        assert one.step_s == pytest.approx(one.dispatch)
        steps.add(round(one.step_s, 9))
    assert len(steps) == 1
