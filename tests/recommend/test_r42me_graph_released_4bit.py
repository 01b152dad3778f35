"""gpt-oss is released with MXFP4 experts, which load in PyTorch runtimes and llama.cpp. Asked
under a TensorFlow or JAX runtime, named or the framework's own, it had been priced in MXFP4
(13.6 GiB for gpt-oss-20b on an RTX 5090), though the service refuses any 4-bit format asked of
those runtimes. It is now priced at its 16-bit weights, as the framework's own runtime prices it, and a
warning says so."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from tests.support import recommend_with

OSS = {"preset": "gpt-oss-20b", "task": "inference", "batch_size": 1}


def _recommend(catalog: Any, workload: dict[str, Any], **cons: Any) -> s.RecommendationResponse:
    body = {"workload": workload, "constraints": {"acquisition": "rent", **cons}, "limit": 1}
    return recommend_with(catalog, body)


@pytest.mark.parametrize(
    ("workload", "cons"),
    [
        ({**OSS, "runtime": "tensorflow"}, {}),
        ({**OSS, "runtime": "jax"}, {}),
        (OSS, {"framework": "tensorflow"}),
    ],
)
def test_a_4bit_release_runs_dequantised_under_a_graph_framework(
    shipped_catalog: Any, workload: dict[str, Any], cons: dict[str, Any]
) -> None:
    graph = _recommend(shipped_catalog, workload, **cons)
    torch = _recommend(shipped_catalog, OSS)
    row, base = graph.recommendations[0], torch.recommendations[0]
    assert row.precision == "bf16"
    assert base.precision != "bf16"  # the PyTorch run keeps the release's MXFP4

    # 21B parameters at 2 bytes: well past the MXFP4 file's size
    def held(m: s.MemoryOut) -> float:
        return m.required_gb * m.num_gpus

    assert held(row.memory) > 1.8 * held(base.memory)
    assert any("weights load in PyTorch runtimes and llama.cpp" in w for w in graph.warnings)
