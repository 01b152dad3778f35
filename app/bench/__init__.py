"""On-device PyTorch microbenchmarks (a leaf package: torch, numpy, pydantic, rich, typer,
httpx, psutil and the standard library only; never the web or database layers).

Public API:

* :func:`app.bench.runner.run_benchmarks` — run the suites, return a :class:`BenchReport`;
* :mod:`app.bench.report` — the versioned report schema, :func:`apply_peaks`;
* :func:`app.bench.command.bench_command` — the ``gpu-advisor bench`` command body;
* :func:`app.bench.device.probe` — resolve a device and read its name and memory.

Importing this package does not import torch; the submodules do.
"""

SCHEMA_VERSION = 2

__all__ = ["SCHEMA_VERSION"]
