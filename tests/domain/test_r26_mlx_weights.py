"""MLX's 4-bit checkpoints (mlx_lm.convert -q) quantise every Linear and Embedding layer, the LM
head included: the whole file at 4.5 bits a weight, where a GPTQ/AWQ checkpoint keeps the
embeddings and head in 16 bits (the Apple review: Llama 3.1 8B read 5.73 GB, ~4.5 in reality)."""

from __future__ import annotations

from app.domain import formats
from app.domain.workload import WorkloadSpec
from tests.domain.test_serving import LLAMA8

LLAMA_8B = LLAMA8  # tests/domain/test_serving.py


def _job(runtime: str) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference", model=LLAMA_8B, precision="int4", batch_size=1, seq_len=512,
        output_tokens=128, runtime=runtime,
    )  # fmt: skip


def test_mlx_int4_is_the_whole_file_at_its_own_bits() -> None:
    mlx = _job("mlx")
    assert mlx.own_bits == formats.MLX_AFFINE_4BIT_BITS == 4.5
    assert abs(mlx.weight_bytes - 8.03e9 * 4.5 / 8) < 1e6


def test_other_runtimes_keep_the_embeddings_and_head_in_16_bits() -> None:
    other = _job("transformers")
    assert other.own_bits is None
    assert other.weight_bytes > _job("mlx").weight_bytes + 0.9e9  # two 1.05 GB matrices at 16 bits
