"""A GPU slug the catalog lacks, named in the API, is answered with the nearest slugs it
holds, as the GPU page's 404 lists them: `h100` and `H100-SXM` (slugs are lower case) had
been told only "no GPU 'h100' in the catalog", in four wordings."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

BODY = {"workload": {"preset": "llama-3-8b", "task": "inference"}}


@pytest.mark.parametrize(
    ("method", "url", "field"),
    [
        ("get", "/api/v1/gpus/{slug}", "slug"),
        ("get", "/api/v1/offers?gpu={slug}", "gpu"),
        ("get", "/api/v1/gpus/compare?slugs=a100-sxm4-80gb,{slug}", "slugs"),
        ("get", "/api/v1/device-reports?gpu_slug={slug}", "gpu_slug"),
        ("post", "/api/v1/estimate", "gpu"),
    ],
)
def test_an_unknown_slug_names_the_near_ones(
    read_client: TestClient, method: str, url: str, field: str
) -> None:
    for slug, near in (("h100", "'h100-"), ("H100-SXM", "did you mean 'h100-sxm'?")):
        if method == "post":
            r = read_client.post(url, json={**BODY, "gpu": slug})
        else:
            r = read_client.get(url.format(slug=slug))
        assert r.status_code in (404, 422), r.text
        error = r.json()["error"]
        assert error["details"]["field"] == field
        assert "did you mean" in error["message"] and near in error["message"], error


def test_nothing_near_says_no_guess(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/offers?gpu=zzzzzz")
    assert r.status_code == 422 and "did you mean" not in r.json()["error"]["message"]
