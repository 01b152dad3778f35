"""JAX on an AMD GPU carries its own caveat (review 30, vf; issue 23, "caveats match the
framework asked"): JAX's supported-platforms table (data/frameworks.yaml, jax-install) lists
AMD GPUs on Linux x86_64 only, yet a JAX row on a Radeon said nothing, where TensorFlow's ROCm
rows name tensorflow-rocm's limits. PyTorch on the same card does not take JAX's words."""

from __future__ import annotations

from app.domain.compat import framework_support
from app.shipped.rules import load_rules
from tests.domain.fixtures import MI300X, RTX4090


def test_jax_on_rocm_names_its_plugin_and_linux_only() -> None:
    rules = load_rules()
    jax = framework_support(MI300X, "jax", rules)
    assert jax.ok and jax.backend == "rocm"
    assert jax.caveat is not None
    assert "JAX" in jax.caveat and "Linux" in jax.caveat and "rocm" in jax.caveat.lower()


def test_the_caveat_is_jaxs_alone() -> None:
    rules = load_rules()
    torch = framework_support(MI300X, "pytorch", rules)
    assert torch.caveat is None or "JAX" not in torch.caveat
    tf = framework_support(MI300X, "tensorflow", rules)
    assert tf.caveat is not None and "JAX" not in tf.caveat
    # and JAX on CUDA has no ROCm words
    cuda = framework_support(RTX4090, "jax", rules)
    assert cuda.caveat is None or "ROCm" not in cuda.caveat
