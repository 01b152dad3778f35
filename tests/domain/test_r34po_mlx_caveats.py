"""r34po: a row's precision caveat is the runtime's own where the rules hold one. The Apple
"bf16 on mps" rule is PyTorch's MPS backend (its macOS floor, its pricing note); an MLX row
had carried it, though bfloat16 is an MLX dtype its own Metal kernels implement
(data/frameworks.yaml: mlx-dtypes, mlx-metal-bf16)."""

from __future__ import annotations

from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.recommend import schemas as s
from app.recommend import service
from app.shipped import rules as engine_rules

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
RULES = engine_rules.load_rules(DATA)
M2 = GPUS["apple-m2"]


def test_mlx_bf16_on_a_mac_carries_mlxs_caveat_not_pytorchs() -> None:
    p, warn = compat.resolve_precision(M2, "bf16", RULES, "mps", runtime="mlx")
    assert p == "bf16" and warn is not None
    assert "MLX" in warn and "PyTorch" not in warn and "hf-mps-bf16-emulated" not in warn
    # the M1/M2 fact is the chip's, and MLX's rule says it in MLX's words
    assert "M1/M2" in warn and "float32" in warn


def test_pytorch_rows_keep_the_mps_backends_caveat() -> None:
    for runtime in (None, "transformers"):
        warn = compat.resolve_precision(M2, "bf16", RULES, "mps", runtime=runtime)[1]
        assert warn is not None and "PyTorch's MPS backend" in warn, runtime


def test_an_mlx_estimate_on_a_mac_says_nothing_of_pytorch() -> None:
    job = {"preset": "llama-3.1-8b", "task": "inference", "batch_size": 1, "seq_len": 512,
           "precision": "bf16"}  # fmt: skip
    said = {}
    for runtime in ("mlx", "transformers"):
        req = s.EstimateRequest(workload={**job, "runtime": runtime}, gpu="apple-m4-max")
        row = service.estimate(req, GPUS["apple-m4-max"], RULES, None, data_dir=DATA).result
        assert row is not None
        said[runtime] = " ".join(row.warnings)
    assert "bf16 under MLX on Metal" in said["mlx"] and "PyTorch" not in said["mlx"]
    assert "PyTorch's MPS backend" in said["transformers"]
