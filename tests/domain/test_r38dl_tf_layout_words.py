"""r38 audit of issue 23's framework truth: a TensorFlow row split over GPUs had read "data
parallel (DDP)", PyTorch's name; it names tf.distribute's strategy (MirroredStrategy on one
server, MultiWorkerMirroredStrategy across several) and says it is priced as DDP's all-reduce."""

from __future__ import annotations

import pytest

from app.domain import rank


@pytest.mark.parametrize(
    ("runtime", "nodes", "want"),
    [
        ("tensorflow", 1, "tf.distribute.MirroredStrategy"),
        ("tensorflow-xla", 2, "tf.distribute.MultiWorkerMirroredStrategy"),
        ("pytorch", 1, "data parallel (DDP)"),
        # a JAX row shards the batch over a mesh (session 44's audit: it had read "DDP")
        ("jax", 2, "the batch sharded over a jax.sharding mesh"),
    ],
)
def test_data_parallel_is_named_as_the_framework_runs_it(
    runtime: str, nodes: int, want: str
) -> None:
    said = rank._layout_said("data parallel (DDP)", runtime, nodes)
    assert want in said
    assert ("priced as DDP" in said) is (runtime != "pytorch")


def test_other_layouts_keep_their_names() -> None:
    assert rank._layout_said("sharded data parallel (FSDP)", "tensorflow", 1) == (
        "sharded data parallel (FSDP)"
    )
