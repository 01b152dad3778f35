"""The engine's eager diffusion step split by operator class, for a row of the tuning set.

For each GPU:batch asked (default: the A100 SXM4 40GB at batch 64 and the RTX 4090 at batch 1,
Stable Diffusion 1.5 at 512², as tests/data/diffusion_eager.yaml runs them) it prices every
operator of the step with app.domain.kernels.op_time — the same rates, bandwidth, launch gap
and SM count the estimate uses — and sums the time, FLOPs and bytes per class: convolutions,
GEMMs (linear layers), self- and cross-attention, group and layer norms, the convolutions'
bias passes, cuDNN's NCHW transforms, the other element-wise ops, and the VAE decode's ops
apart. The step is the denoising loop's max(GPU, host dispatch) plus the VAE decode's (the
two phases are bound apart, perf.phased_step): the phase line says which binds.

    python benchmarks/diffusion_breakdown.py [a100-sxm4-40gb:64 rtx-4090:1 ...]
    python benchmarks/diffusion_breakdown.py h100-sxm:1:tensorrt:fp16:sdxl

A GPU:batch may add :runtime[:precision[:preset]] to price another runtime's policy over the
same table (the row's runtime drives perf.single_gpu; the third argument of perf._on_gpu is
the framework, not the runtime). A compiled runtime takes its own row from
tests/data/diffusion_compiled.yaml where the set has one for that GPU and batch; otherwise the
eager row is re-pointed without its stack fields (``STACK_FIELDS``: before 2026-12-06 a
TensorRT job re-pointed from an eager row kept its FlashAttention v1 field).

Used for docs/methodology.md §5, "Eager diffusion" (where the predicted step's time goes).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy  # noqa: E402

from app.catalog.loader import read_gpu_specs  # noqa: E402
from app.domain import kernels, perf  # noqa: E402
from app.domain.operators import Op  # noqa: E402

TUNING = ROOT / "tests" / "data" / "diffusion_eager.yaml"
COMPILED = ROOT / "tests" / "data" / "diffusion_compiled.yaml"
# what a row says of its own stack: an eager row re-pointed to another runtime drops them (a
# TensorRT engine runs its own fused attention, not the eager row's FlashAttention v1)
STACK_FIELDS = ("attention_kernel", "memory_format", "compile_mode", "unet_calls", "xformers")


def op_class(op: Op) -> str:
    """The class a step's op is reported under."""
    if op.kind in ("conv", "gemm"):
        name = op.kind
    elif op.kind == "attention":
        name = "attn-cross" if ".attn2" in op.name else "attn-self"
    elif op.role in ("layout", "bias", "relayout"):
        # relayout: a channels-last eager job's copies around each group norm (ATen's CUDA
        # group norm runs NCHW only: operators.group_norm_relayout_op)
        name = {"layout": "nchw", "bias": "conv-bias", "relayout": "gn-relayout"}[op.role]
    elif op.name.endswith(".head_to_batch"):
        # diffusers' xFormers processor copies q, k, v to its layout (operators.head_batch_copy_op)
        name = "xf-copies"
    elif op.kind == "norm":
        # a group norm reads its input twice (operators.table_ops), a layer norm once
        name = "groupnorm" if op.bytes_read > 1.5 * op.bytes_written else "layernorm"
    else:
        name = "elementwise"
    vae = op.name.startswith("vae.")
    return f"vae:{name}" if vae else name


def breakdown(row: dict[str, Any], data: Path) -> None:
    gpu = {g.slug: g for g in read_gpu_specs(data)}[row["gpu_slug"]]
    work, backend = _work(row, gpu, data)
    on = perf._on_gpu(gpu, work, "pytorch", None, backend)
    job = perf._step_job(work, True, on.act_b)
    assert on.rates is not None and job.ops is not None
    rates = dict(zip(kernels.CLASSES, on.rates, strict=True))
    launch = on.prof.kernel_us * 1e-6
    by: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for op in job.ops:
        if op.role and op.role in on.drop:
            continue
        c = by[op_class(op)]
        one = kernels.op_time(op, rates, on.bw, launch, on.sms, on.balance, on.tensor_conv)
        c[0] += one * op.count
        c[1] += op.flops * op.count
        c[2] += op.bytes * op.count
    gpu_s = sum(v[0] for v in by.values())
    one = perf.single_gpu(gpu, work, backend=backend)
    print(
        f"{gpu.slug} {row['preset']} batch {row['batch_size']}: GPU {gpu_s:.3f} s, host dispatch"
        f" {one.dispatch:.3f} s, step {one.step_s:.3f} s"
        f" (attention {perf._attention_kernel(gpu, work, backend) or 'FA2'})"
    )
    if one.decode_s or one.decode_dispatch:
        # the loop and the VAE decode are bound apart (perf.phased_step)
        loop_gpu, loop_host = gpu_s - one.decode_s, one.dispatch - one.decode_dispatch
        print(
            f"  denoising loop: GPU {loop_gpu:.3f} s, host {loop_host:.3f} s;"
            f" VAE decode: GPU {one.decode_s:.3f} s, host {one.decode_dispatch:.3f} s"
        )
    if one.serial:
        # host work with the GPU idle: a compiled job's prompt encoders, a synced loop's
        # scheduler (app.domain.diffusion_host)
        print(f"  serial host (GPU idle): {one.serial:.3f} s")
    for name, (t, f, b) in sorted(by.items(), key=lambda kv: -kv[1][0]):
        rate = f / t / 1e12 if t and f else 0.0
        print(
            f"  {name:16} {t * 1e3:10.1f} ms {100 * t / gpu_s:5.1f} %"
            f" {f / 1e12:9.2f} TFLOP {b / 1e9:8.1f} GB {rate:7.1f} TFLOP/s"
        )


def _work(row: dict[str, Any], gpu: Any, data: Path) -> tuple[Any, str]:
    """The row's job as heldout_estimate builds it (its resolved precision and backend)."""
    from app.domain import compat
    from app.domain.workload import WorkloadSpec
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency, load_rules

    preset = load_presets(data)[row["preset"]]
    work = WorkloadSpec(
        task="inference",
        model=accuracy._heldout_model(row, preset.model),
        precision=row["precision"],
        batch_size=int(row["batch_size"]),
        seq_len=1,
        output_tokens=1,
        preset=preset.id,
        runtime=row["runtime"],
        efficiency=load_efficiency(data),
        channels_last=row.get("memory_format") == "channels_last",
        attention_kernel=row.get("attention_kernel") or "",
        head_batch_copies=bool(row.get("xformers")),
    )
    rules = load_rules(data)
    support = compat.framework_support(gpu, "pytorch", rules)
    prec, _ = compat.resolve_precision(
        gpu, row["precision"], rules, support.backend, work.model.family
    )
    return work.with_precision(prec or row["precision"]), support.backend


def tuning_row(
    rows: list[dict[str, Any]], slug: str, batch: int, runtime: str | None
) -> dict[str, Any] | None:
    """The first SD 1.5 tuning row of this GPU and batch under ``runtime`` (None: any)."""
    return next(
        (
            r
            for r in rows
            if r["gpu_slug"] == slug
            and r["batch_size"] == batch
            and r["preset"] == "stable-diffusion-1.5"
            and runtime in (None, r["runtime"])
        ),
        None,
    )


def main(argv: list[str]) -> int:
    rows = yaml.safe_load(TUNING.read_text(encoding="utf-8"))["measurements"]
    compiled = yaml.safe_load(COMPILED.read_text(encoding="utf-8"))["measurements"]
    for ask in argv or ["a100-sxm4-40gb:64", "rtx-4090:1"]:
        slug, batch, *rest = ask.split(":")
        overrides = dict(zip(("runtime", "precision", "preset"), rest, strict=False))
        runtime = overrides.get("runtime")
        # a compiled runtime's own tuning row where the set has one (its stack as filed)
        row = tuning_row(compiled, slug, int(batch), runtime) if runtime else None
        if row is None:
            row = tuning_row(rows, slug, int(batch), None)
            if row is not None and runtime not in (None, row["runtime"]):
                row = {k: v for k, v in row.items() if k not in STACK_FIELDS}
        if row is None:  # a GPU or batch the set lacks: Lambda's A100 row, re-pointed
            base = next(r for r in rows if r["gpu_slug"] == "a100-sxm4-40gb")
            row = {**base, "gpu_slug": slug, "batch_size": int(batch)}
            if runtime not in (None, row["runtime"]):
                row = {k: v for k, v in row.items() if k not in STACK_FIELDS}
        if overrides.get("preset", row["preset"]) != row["preset"]:
            # another preset: a whole pipeline at the preset's default 25 steps, on the
            # stack the runtime implies (none of the tuning row's stack fields carried over)
            row = {"gpu_slug": slug, "batch_size": int(batch), "runtime": "pytorch",
                   "precision": "fp16", "metric": "seconds_per_batch", "steps": 25}  # fmt: skip
        breakdown({**row, **overrides}, ROOT / "data")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
