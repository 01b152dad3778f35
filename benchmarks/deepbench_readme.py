"""The engine's kernel pricing against the per-shape figures Baidu's DeepBench README prints
for the V100 and P100 (issue #21; docs/methodology.md, "Kernel profiles", "Read and not
shipped: Baidu DeepBench").

DeepBench's full results are .xlsx workbooks; its README prints five example rows per kernel
type, the fastest processor's, on CUDA 9.0 / cuDNN 7.0 (V100, README at a5a2b60) or the
CUDA 8 era (P100, the README at 106e523, before the V100 rows replaced them). Form factors
are not stated, so the V100 rows are read against the V100 SXM2 (15.7 / 125 TFLOPS) and the
P100 rows against the catalog's only P100 (PCIe, 9.53 TFLOPS FP32).

Prints, per row, the measured share of peak and what the engine prices:
* FP32 convolutions (forward) — the prior GEMM efficiency × ``kernels.shape_efficiency`` of
  the implicit GEMM on CUDA cores (``tensor_cores=False``), without and with an SM count;
* GEMMs — the engine's carried-over curve for the GPU (``kernel_profiles.profile_efficiency``
  over the shipped profiles), or the prior where none is carried (FP32).
Usage: python benchmarks/deepbench_readme.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.catalog.profiles import shipped_profiles
from app.domain.kernel_profiles import profile_efficiency
from app.domain.kernels import shape_efficiency
from app.domain.operators import CONV, CONV_3X3, Op
from app.domain.perf import prior_compute_efficiency

V100_README = "baidu-research/DeepBench README.md @ a5a2b60f176cd81ab258612586102e8f2d1569b4"
P100_README = "baidu-research/DeepBench README.md @ 106e5236c0e06ed012d5fb5fadb49e928023f538"

# Training convolutions: (W, H, C, N, R, S, filters, pad, stride, forward TFLOPS, label).
# DeepBench's R is the filter height and S its width.
CONVS_FP32 = (
    ("v100-sxm2-16gb", 700, 161, 1, 32, 5, 20, 32, 0, 2, 7.75, "speech 5x20"),
    ("v100-sxm2-16gb", 54, 54, 64, 8, 3, 3, 64, 1, 1, 10.12, "face 3x3"),
    ("v100-sxm2-16gb", 224, 224, 3, 16, 3, 3, 64, 1, 1, 1.40, "vision stem 3x3"),
    ("v100-sxm2-16gb", 28, 28, 192, 16, 5, 5, 32, 2, 1, 16.90, "vision 5x5 (FFT/Winograd)"),
    ("tesla-p100-pcie-16gb", 224, 224, 3, 16, 3, 3, 64, 1, 1, 4.26, "vision stem 3x3"),
)
# Training GEMMs: (GPU, dtype, M, N, K, TFLOPS). V100 "Mixed Precision" (FP16 inputs, tensor
# cores where M, N, K allow); P100 single precision.
GEMMS = (
    ("v100-sxm2-16gb", "fp16", 1760, 128, 1760, 10.72),
    ("v100-sxm2-16gb", "fp16", 7860, 64, 2560, 25.94),
    ("v100-sxm2-16gb", "fp16", 2560, 64, 2560, 10.11),
    ("v100-sxm2-16gb", "fp16", 5124, 9124, 2560, 27.43),
    ("v100-sxm2-16gb", "fp16", 3072, 128, 1024, 18.73),
    ("tesla-p100-pcie-16gb", "fp32", 2560, 64, 2560, 5.31),
    ("tesla-p100-pcie-16gb", "fp32", 5124, 9124, 2560, 8.21),
)
V100_SMS = 80  # Tesla V100: 80 SMs (the catalog's V100 PCIe entry; the SXM2 entries carry none)


def conv_op(w: int, h: int, c: int, n: int, r: int, s: int, k: int, pad: int, st: int) -> Op:
    p = (h + 2 * pad - r) // st + 1
    q = (w + 2 * pad - s) // st + 1
    m, kk = float(n * p * q), float(c * r * s)
    klass = CONV_3X3 if (r, s, st) == (3, 3, 1) else CONV
    flops = 2.0 * m * k * kk
    return Op("conv", "conv", klass, 1.0, flops, 0.0, 0.0, "fp32", "", "fwd", m, k, kk, 1.0, c)


def main() -> None:
    store, gpus = shipped_profiles()
    print(f"FP32 convolutions, forward ({V100_README}; P100: {P100_README})")
    print(f"{'gpu':22s} {'conv':28s} measured  engine  engine@{V100_SMS}SM")
    for slug, w, h, c, n, r, s, k, pad, st, tflops, label in CONVS_FP32:
        gpu = gpus[slug]
        op = conv_op(w, h, c, n, r, s, k, pad, st)
        prior = prior_compute_efficiency(gpu, "fp32")
        e = prior * shape_efficiency(op, None, tensor_cores=False)
        e80 = prior * shape_efficiency(op, V100_SMS, tensor_cores=False)
        measured = tflops / (gpu.fp32_tflops or 1.0)
        print(f"{slug:22s} {label:28s} {measured:8.2f} {e:7.2f} {e80:10.2f}")
    print("\nGEMMs (engine: the shipped profiles' curve for the GPU, else the prior)")
    print(f"{'gpu':22s} {'dtype':5s} {'MxNxK':18s} measured  engine  basis")
    for slug, dtype, m, n, k, tflops in GEMMS:
        gpu = gpus[slug]
        peak = gpu.peak_tflops(dtype) or 1.0
        prior = prior_compute_efficiency(gpu, dtype)
        shape = {"m": m, "n": n, "k": k}
        e, basis = profile_efficiency(gpu, "gemm", shape, store, gpus, dtype=dtype, prior=prior)
        dims = f"{m}x{n}x{k}"
        print(f"{slug:22s} {dtype:5s} {dims:18s} {tflops / peak:8.2f} {e or 0.0:7.2f}  {basis}")


if __name__ == "__main__":
    main()
