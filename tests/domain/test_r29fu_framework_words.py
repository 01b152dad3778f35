"""A framework's experimental warning names the build it runs on a GPU through, not PyTorch's
backend ("tensorflow on mps is experimental": "mps" is PyTorch's name; TensorFlow reaches an
Apple GPU through Apple's tensorflow-metal plugin, data/frameworks.yaml's apple-tf-metal)."""

from __future__ import annotations

import pytest

from app.domain.compat import framework_on


@pytest.mark.parametrize(
    ("framework", "backend", "plugin"),
    [
        ("tensorflow", "mps", "tensorflow-metal"),
        ("tensorflow", "xpu", "Intel Extension for TensorFlow"),
        ("jax", "mps", "jax-metal"),
        ("jax", "xpu", "Intel Extension for OpenXLA"),
    ],
)
def test_a_plugin_framework_is_named_with_its_plugin(
    framework: str, backend: str, plugin: str
) -> None:
    words = framework_on(framework, backend)
    assert plugin in words
    assert backend not in words.split()  # never PyTorch's backend name


def test_pytorch_keeps_the_backends_own_label() -> None:
    assert framework_on("pytorch", "rocm") == "PyTorch on ROCm"
    assert framework_on("pytorch", "mps") == "PyTorch on Metal Performance Shaders"
