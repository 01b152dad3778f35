"""benchmarks/band_conditions.py: the conditions it bands the TensorFlow CNN rows by, and the
preview stack it weighs (issue #23, docs/methodology.md §6.7n "tb")."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support import load_benchmark


@pytest.fixture(scope="module")
def bcond() -> ModuleType:
    return load_benchmark("band_conditions.py", "bench_band_conditions")


def test_preview_stack_is_every_source_on_it_tuning_and_heldout_alike(bcond: ModuleType) -> None:
    # the rule weighed is the stack's, not one table's: both TF1 20.06 inference and training
    # tables of the tuning sets, and both held-out ones, and nothing from another container
    found = bcond.preview_sources()
    files = {f for f, _ in found}
    assert files == {
        "dle_cnn_inference",
        "dle_cnn_training",
        "heldout_tf_cnn_inference",
        "heldout_cnn_training",
    }
    assert ("dle_cnn_inference", "nvidia-dle-tf2-effnet") not in found  # TF2 21.02
    assert ("dle_cnn_inference", "nvidia-dle-pyt-rnx101") not in found  # PyTorch 21.03


def test_conditions_split_host_bound_from_gpu_bound_and_small_batches_from_large(
    bcond: ModuleType,
) -> None:
    bound = bcond.CONDITIONS["+ bound"]
    assert bound("tensorflow", "fp16", 1, "host overhead")[1] == "host"
    assert bound("tensorflow", "fp16", 1, "host transfer")[1] == "host"
    assert bound("tensorflow", "fp16", 256, "compute")[1] == "GPU"
    batch = bcond.CONDITIONS["+ batch"]
    assert batch("tensorflow", "tf32", 8, "")[1] != batch("tensorflow", "tf32", 16, "")[1]
    precision = bcond.CONDITIONS["+ precision"]
    assert precision("tensorflow-xla", "tf32", 8, "") == precision("tensorflow-xla", "fp32", 8, "")
    assert precision("tensorflow-xla", "fp16", 8, "")[1] == "16-bit"
