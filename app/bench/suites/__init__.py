"""Benchmark suites: matmul, conv, memory, transfer, batch_scaling, peak_memory, kernels.

Each module exposes ``run(ctx: Context) -> <Suite>`` (see :mod:`app.bench.suites.common`).
"""
