"""A serving row's tensor-parallel group names the link its all-reduces ride, as a training
row names its group's: Mixtral on 8 RTX A5000s at tensor parallel 8 read "1 replica × 8 GPUs
(tensor parallel 8)", the same words as an NVLink server's, though the step prices each
layer's all-reduces over PCIe (llm_step's ``tp_link``)."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from app.recommend import service

LOAD = {"concurrent_requests": 16}


def _first_line(catalog: Any, preset: str, slug: str, n: int) -> str:
    gpu = next(g for g in catalog[0] if g.slug == slug)
    req = s.EstimateRequest.model_validate(
        {"workload": {"preset": preset, "task": "serving", "serving": LOAD}, "gpu": slug,
         "num_gpus": n}
    )  # fmt: skip
    out = service.estimate(req, gpu, catalog[2], offers=catalog[1].get(slug))
    assert out.result is not None
    return out.result.explanation[0]


@pytest.mark.parametrize(
    ("preset", "slug", "n", "said"),
    [
        ("mixtral-8x7b", "rtx-a5000", 8, "(tensor parallel 8 over PCIe P2P (host permitting))"),
        ("llama-3.1-70b", "rtx-4090", 8,
         "(tensor parallel 8 over PCIe without peer-to-peer (through host memory))"),
        ("deepseek-v3", "mi300x", 8, "(tensor parallel 8 over Infinity Fabric, 8 GPUs)"),
    ],
)  # fmt: skip
def test_a_tensor_parallel_group_names_its_link(
    shipped_catalog: Any, preset: str, slug: str, n: int, said: str
) -> None:
    assert said in _first_line(shipped_catalog, preset, slug, n)


def test_one_gpu_replicas_name_no_link(shipped_catalog: Any) -> None:
    line = _first_line(shipped_catalog, "llama-3.1-8b", "rtx-4090", 2)
    assert line.startswith("2 replicas × 1 GPU,") and " over " not in line
