"""Names a user types as they are written ("NVIDIA", "Datacenter", "Lambda", "Llama-3-8B")
read as the lower-case names the data holds: the GPU list's vendor, segment and backend, a
recommendation's constraints.vendors / .segments (and so the CLI's --vendor), launch-spec's
provider and a workload preset. Each had been a 422 or 404 naming the lower-case name."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.cli.recommend import OPTIONS, build_request
from app.recommend import schemas as s
from app.recommend.schemas import RecommendationRequest
from app.web import forms


@pytest.mark.parametrize(
    ("field", "written", "stored"),
    [("vendor", "NVIDIA", "nvidia"), ("segment", "Datacenter", "datacenter"),
     ("backend", "CUDA", "cuda"), ("precision", "BF16", "bf16")],
)  # fmt: skip
def test_the_gpu_list_filters_in_any_case(
    read_client: TestClient, field: str, written: str, stored: str
) -> None:
    asked = read_client.get(f"/api/v1/gpus?{field}={written}&limit=500")
    assert asked.status_code == 200, asked.text
    plain = read_client.get(f"/api/v1/gpus?{field}={stored}&limit=500").json()
    assert asked.json()["total"] == plain["total"] > 0
    # a name that is none, in any case, is still a 422 naming the field
    bad = read_client.get(f"/api/v1/gpus?{field}=Nope")
    assert bad.status_code == 422 and bad.json()["error"]["details"]["field"] == field


def test_the_catalog_page_reads_a_vendor_in_any_case(read_client: TestClient) -> None:
    html = read_client.get("/gpus?vendor=NVIDIA").text
    assert "unknown value" not in html
    assert html.count('href="/gpus/') == read_client.get("/gpus?vendor=nvidia").text.count(
        'href="/gpus/'
    )
    assert 'href="/gpus/apple-' not in html


def test_constraints_and_the_cli_vendor_in_any_case() -> None:
    c = s.ConstraintsIn.model_validate({"vendors": ["NVIDIA", " Apple"], "segments": ["SoC"]})
    assert c.vendors == ["nvidia", "apple"] and c.segments == ["soc"]
    # the CLI's --vendor still exists, lists the names, and its value reads the same way
    vendor = next(o for o in OPTIONS if o.flags == ("--vendor",))
    assert vendor.multiple and "nvidia | amd | intel | apple" in vendor.help
    body = build_request({vendor.name: ["NVIDIA"], "preset": "llama-3-8b", "task": "inference"})
    assert RecommendationRequest.model_validate(body).constraints.vendors == ["nvidia"]
    # and the form keeps its tick boxes
    field = next(f for f in forms._walk(RecommendationRequest, ()) if f.name == "vendors")
    assert field.control == "checks"
    assert [c[0] for c in field.choices] == ["nvidia", "amd", "intel", "apple"]


def test_a_preset_in_any_case(read_client: TestClient) -> None:
    assert s.WorkloadIn.model_validate({"preset": "Llama-3-8B"}).preset == "llama-3-8b"
    r = read_client.get("/api/v1/workloads/Llama-3-8B")
    assert r.status_code == 200 and r.json()["id"] == "llama-3-8b"
    missing = read_client.get("/api/v1/workloads/llama3-8b")
    assert missing.status_code == 404 and "did you mean 'llama-3-8b'" in missing.text


def test_launch_spec_reads_a_provider_in_any_case(read_client: TestClient) -> None:
    url = "/api/v1/offers/launch-spec?gpu=h100-sxm&upload=https://advisor.example.org"
    lower = read_client.get(f"{url}&provider=lambda")
    upper = read_client.get(f"{url}&provider=Lambda")
    assert lower.status_code == upper.status_code == 200, upper.text
    assert upper.text == lower.text
    # an instance type is still matched exactly
    assert read_client.get(f"{url}&instance_type=GPU_1X_H100_SXM5").status_code == 422
