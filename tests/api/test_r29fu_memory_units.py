"""The explanation's memory is required_gb and available_gb in GiB, labelled GiB: "needs 76.0
GB of 79.1 GB" had stood beside required_gb 81.566 and available_gb 84.9 (10^9 bytes)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

GIB = 2**30 / 1e9  # 10^9-byte GB per GiB


@pytest.mark.parametrize(
    ("gpu", "workload"),
    [
        ("h100-sxm", {"preset": "llama-3.3-70b", "task": "inference", "precision": "fp8"}),
        ("rtx-4090", {"preset": "llama-3.1-8b", "task": "inference"}),
    ],
)
def test_the_explanations_need_is_required_gb_in_gib(
    read_client: TestClient, gpu: str, workload: dict
) -> None:
    r = read_client.post("/api/v1/estimate", json={"gpu": gpu, "workload": workload})
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    said = next(e for e in result["explanation"] if e.startswith("Fits on"))
    m = re.search(r"needs ([\d.,]+) GiB of ([\d.,]+) GiB", said)
    assert m, said
    need, have = (float(x.replace(",", "")) for x in m.groups())
    # one decimal of GiB: within half a tenth, times 1.074 GB per GiB
    assert need * GIB == pytest.approx(result["memory"]["required_gb"], abs=0.06)
    assert have * GIB == pytest.approx(result["memory"]["available_gb"], abs=0.06)
    assert not re.search(r"\d GB\b", " ".join(result["explanation"]))
