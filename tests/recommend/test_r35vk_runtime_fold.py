"""Runtime 'llama.cpp-vulkan' folds into runtime llama.cpp on backend vulkan (WorkloadIn)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.recommend.schemas import WorkloadIn


def test_the_vulkan_runtime_is_llama_cpp_pinned_to_vulkan() -> None:
    w = WorkloadIn.model_validate({"preset": "llama-3-8b", "runtime": "llama.cpp-vulkan"})
    assert (w.runtime, w.gpu_backend) == ("llama.cpp", "vulkan")


def test_plain_llama_cpp_keeps_the_gpus_own_backend() -> None:
    w = WorkloadIn.model_validate({"preset": "llama-3-8b", "runtime": "llama.cpp"})
    assert w.gpu_backend is None


def test_an_unknown_backend_pin_is_refused() -> None:
    with pytest.raises(ValidationError):
        WorkloadIn.model_validate({"preset": "llama-3-8b", "gpu_backend": "opencl"})
