"""r33au: under /api a parameter that takes one value, given twice (?limit=1&limit=2,
?backend=cuda&backend=rocm), is a 422 naming it; it had been read as its last value, another
question than the one asked, answered without a word. List parameters (?vendor=a&vendor=b)
still take several. And a sort takes one sign at most: '--fp32_tflops' and '+-fp32_tflops'
had been read as fp32_tflops (every sign stripped; '+-' ascending)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def _error(r: object) -> dict[str, object]:
    body = r.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return dict(body["error"])


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/gpus?limit=1&limit=2", "limit"),
        ("/api/v1/gpus?backend=cuda&backend=rocm", "backend"),
        ("/api/v1/gpus?sort=memory_gb&sort=-memory_gb", "sort"),
        ("/api/v1/offers?kind=cloud&kind=purchase", "kind"),
        ("/api/v1/device-reports?offset=0&offset=5", "offset"),
        ("/api/v1/offers/launch-spec?gpu=h100-sxm&gpu=a100-sxm4-80gb&upload=http://x", "gpu"),
    ],
)
def test_a_one_value_parameter_given_twice_is_refused_naming_it(
    read_client: TestClient, url: str, field: str
) -> None:
    r = read_client.get(url)
    assert r.status_code == 422, r.text
    error = _error(r)
    assert error["details"] == {"field": field}
    assert str(error["message"]).startswith(f"{field}: given more than once")


def test_list_parameters_still_take_several_values(read_client: TestClient) -> None:
    both = read_client.get("/api/v1/gpus?vendor=nvidia&vendor=amd&limit=500")
    nvidia = read_client.get("/api/v1/gpus?vendor=nvidia&limit=500")
    amd = read_client.get("/api/v1/gpus?vendor=amd&limit=500")
    assert both.status_code == nvidia.status_code == amd.status_code == 200
    assert both.json()["total"] == nvidia.json()["total"] + amd.json()["total"]


@pytest.mark.parametrize("sort", ["--fp32_tflops", "+-fp32_tflops", "-+fp32_tflops"])
def test_a_sort_with_two_signs_is_refused(read_client: TestClient, sort: str) -> None:
    r = read_client.get("/api/v1/gpus", params={"sort": sort})
    assert r.status_code == 422, r.text
    assert _error(r)["details"] == {"field": "sort"}


def test_one_sign_still_sorts(read_client: TestClient) -> None:
    def first(sort: str) -> float:
        r = read_client.get("/api/v1/gpus", params={"sort": sort, "limit": 500})
        assert r.status_code == 200, r.text
        return float(r.json()["items"][0]["fp32_tflops"])

    assert first("-fp32_tflops") > first("+fp32_tflops") == first("fp32_tflops")


def test_the_catalog_page_refuses_a_sort_with_two_signs(read_client: TestClient) -> None:
    r = read_client.get("/gpus", params={"sort": "--fp32_tflops"})
    assert r.status_code == 422
    assert "--fp32_tflops" in r.text  # the user's input, re-shown
