"""An Intel Gaudi user's review (round 41, aud3): a row that barely fits on Gaudi told them to
watch torch.cuda.max_memory_allocated(), which an HPU process does not use; Intel's PyTorch
bridge has its own counter."""

from __future__ import annotations

from app.domain import rank


def test_a_gaudi_row_names_the_hpu_counter() -> None:
    for runtime in ("pytorch", "transformers", "megatron"):
        said = rank._headroom_advice(runtime, "hpu")
        assert "habana_frameworks.torch.hpu.max_memory_allocated()" in said, said
        assert "torch.cuda" not in said, said


def test_cuda_and_rocm_keep_torch_cuda() -> None:
    for backend in ("cuda", "rocm"):
        assert "torch.cuda.max_memory_allocated()" in rank._headroom_advice("pytorch", backend)
