"""The API as an integrator reads it from /openapi.json: every operation says what it does,
every number with a unit in its name says the unit, the pages share one shape, the enums are
listed, every request example is accepted as it is, and one fact (a GPU's from price, its
memory) has one value on every endpoint that shows it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

METHODS = ("get", "post", "put", "patch", "delete")

# A unit a field's name carries, and the words its description (or, for a request field the
# form labels, its title) must use for it. "_gb" is the one that bites: the vendor's GB is
# 2^30 bytes (GiB), the engine's memory figures are 10^9 bytes.
UNITS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"usd"), ("dollar", "USD", "$")),
    (re.compile(r"per_(gpu_)?hour"), ("hour",)),
    (re.compile(r"_gbs$"), ("GB/s",)),
    (re.compile(r"_gb$|_gb_"), ("GiB", "10^9 bytes")),
    (re.compile(r"_mib$"), ("MiB",)),
    (re.compile(r"_mb(_|$)"), ("MB",)),
    (re.compile(r"_ms$|_ms_"), ("millisecond", "ms")),
    (re.compile(r"_s$"), ("second", "/s")),
    (re.compile(r"_h$|_hours?$"), ("hour",)),
    (re.compile(r"tflops"), ("TFLOPS",)),
    (re.compile(r"tops$"), ("TOPS",)),
    (re.compile(r"_w$"), ("watt",)),
    (re.compile(r"per_s$"), ("per second", "/s")),
    (re.compile(r"_days$"), ("day",)),
]


@pytest.fixture(scope="module")
def spec(read_client: TestClient) -> dict[str, Any]:
    r = read_client.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


def _ops(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (m, p, op)
        for p, item in spec["paths"].items()
        if p.startswith("/api/")
        for m, op in item.items()
        if m in METHODS
    ]


def _is_number(prop: dict[str, Any]) -> bool:
    kinds = [prop, *prop.get("anyOf", [])]
    return any(k.get("type") in ("number", "integer") for k in kinds)


def test_every_operation_has_its_own_summary_and_a_description(spec: dict[str, Any]) -> None:
    ops = _ops(spec)
    assert len(ops) >= 24
    for method, path, op in ops:
        summary, description = op.get("summary", ""), op.get("description", "")
        # FastAPI's fallback is the function's name in title case ("Get Run", "Create Gpu")
        derived = op["operationId"].split("_api_")[0].replace("_", " ").title()
        assert summary and summary != derived, (method, path, summary)
        assert len(description) > 30, (method, path)
        # a code constant (REFRESH_S) means nothing to a client
        assert not re.search(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", description), (path, description)


def test_every_number_whose_name_has_a_unit_says_the_unit(spec: dict[str, Any]) -> None:
    checked, missing = 0, []
    for name, schema in spec["components"]["schemas"].items():
        for field, prop in schema.get("properties", {}).items():
            if not _is_number(prop):
                continue
            said = f"{prop.get('description', '')} {prop.get('title', '')}"
            for pattern, words in UNITS:
                if pattern.search(field):
                    checked += 1
                    if not any(w in said for w in words):
                        missing.append(f"{name}.{field}: {words[0]}")
    assert checked >= 200  # the rule reads the whole document, not a corner of it
    assert missing == []


def test_memory_gb_says_gib_on_every_gpu_shape_and_the_job_says_10_9(
    spec: dict[str, Any],
) -> None:
    # The README: `gpu.memory_gb` is the vendor's figure, 2^30 bytes, "described as such in
    # the OpenAPI schema"; GET /api/v1/gpus had said nothing, beside required_gb's 10^9.
    schemas = spec["components"]["schemas"]
    shapes = ("GpuOut", "GpuListItem", "GpuWithOffers", "GpuCreate", "GpuPatch", "RankedGpu")
    for shape in shapes:
        assert "GiB" in schemas[shape]["properties"]["memory_gb"]["description"], shape
    assert "10^9" in schemas["MemoryOut"]["properties"]["required_gb"]["description"]


def test_per_instance_and_per_gpu_prices_say_which(spec: dict[str, Any]) -> None:
    props = {n: s.get("properties", {}) for n, s in spec["components"]["schemas"].items()}
    assert "whole instance" in props["OfferOut"]["usd_per_hour"]["description"]
    assert "GPU-hour" in props["OfferOut"]["usd_per_gpu_hour"]["description"]
    assert "per GPU" in props["CloudPrice"]["usd_per_hour"]["description"]
    # the same name on a row's GPU and on its cost means one GPU and every GPU
    assert "per GPU" in props["RankedGpu"]["hourly_usd"]["description"]
    assert "all of them" in props["CostOut"]["hourly_usd"]["description"]
    assert "one card" in props["RankedGpu"]["purchase_usd"]["description"]
    assert "every card" in props["CostOut"]["purchase_usd"]["description"]


def test_every_page_is_one_shape_with_its_fields_described(
    read_client: TestClient, spec: dict[str, Any]
) -> None:
    pages = [
        (path, op)
        for method, path, op in _ops(spec)
        if method == "get" and {"limit", "offset"} <= {p["name"] for p in op.get("parameters", [])}
    ]
    assert len(pages) == 5
    for path, op in pages:
        params = {p["name"]: p for p in op["parameters"]}
        assert "count" in params["limit"]["description"], path
        assert "not of pages" in params["offset"]["description"], path
        ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        page = spec["components"]["schemas"][ref.split("/")[-1]]["properties"]
        for field in ("total", "limit", "offset"):
            assert page[field].get("description"), (path, field)
        assert page["items"]["type"] == "array"
        body = read_client.get(path, params={"limit": 1, "offset": 0}).json()
        assert body["limit"] == 1 and body["offset"] == 0, path
        assert len(body["items"]) <= 1 <= body["total"] or body["total"] == 0, path


def test_closed_vocabularies_are_listed_as_enums(spec: dict[str, Any]) -> None:
    props = {n: s.get("properties", {}) for n, s in spec["components"]["schemas"].items()}

    def enum(prop: dict[str, Any]) -> set[str]:
        return {v for k in [prop, *prop.get("anyOf", [])] for v in k.get("enum", [])}

    assert enum(props["RankedGpu"]["vendor"]) == {"nvidia", "amd", "intel", "apple"}
    assert "datacenter" in enum(props["RankedGpu"]["segment"])
    assert "spot" in enum(props["ChosenOfferOut"]["tier"])
    assert enum(props["BuyAtOut"]["condition"]) == {"new", "used", "launch", "market"}
    assert enum(props["CostOut"]["purchase_basis"]) == {"new", "used", "launch", "market"}


def test_every_request_example_is_accepted_as_it_is(
    client: TestClient, admin: dict[str, str]
) -> None:
    spec = client.get("/openapi.json").json()
    sent = 0
    # POST first: the PUT and PATCH examples change the GPU the POST example adds
    order = {"post": 0, "put": 1, "patch": 2}
    ops = sorted(
        ((m, p, op) for m, p, op in _ops(spec) if "requestBody" in op),
        key=lambda x: order.get(x[0], 3),
    )
    for method, path, op in ops:
        examples = op["requestBody"]["content"]["application/json"].get("examples")
        assert examples, (method, path)
        url = path.replace("{slug}", "my-h100-pcie")
        for example in examples.values():
            r = client.request(method.upper(), url, json=example["value"], headers=admin)
            assert r.status_code < 300, (method, path, r.text)
            sent += 1
    assert sent >= 8


def test_rent_from_is_the_price_of_the_offer_it_names(read_client: TestClient) -> None:
    """rent_from.usd_per_gpu_hour is a price GET /api/v1/offers lists: a 9-GPU instance at
    $1.4568/h had read 0.1618666666666667 here and 0.1619 on the offer."""
    items = read_client.get("/api/v1/gpus", params={"limit": 500}).json()["items"]
    shared = [g for g in items if g["rent_from"] and g["rent_from"]["instance_gpus"] > 1]
    assert shared
    for g in shared:
        rent = g["rent_from"]
        one = read_client.get(f"/api/v1/gpus/{g['slug']}").json()
        assert one["rent_from"] == rent and one["buy_at"] == g["buy_at"], g["slug"]
        offer = next(
            o
            for o in one["offers"]
            if (o["provider"], o["instance_type"]) == (rent["provider"], rent["instance_type"])
        )
        assert offer["usd_per_gpu_hour"] == rent["usd_per_gpu_hour"], g["slug"]
        assert offer["gpus"] == rent["instance_gpus"]


def test_compare_and_a_recommendation_row_repeat_the_list(read_client: TestClient) -> None:
    items = {
        g["slug"]: g for g in read_client.get("/api/v1/gpus", params={"limit": 500}).json()["items"]
    }
    compared = read_client.get("/api/v1/gpus/compare", params={"slugs": "rtx-4090,a100-sxm4-80gb"})
    for row in compared.json()["gpus"]:
        assert row["gpu"] == items[row["gpu"]["slug"]]
    body = {
        "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
        "constraints": {"acquisition": "either", "max_gpus": 1},
        "limit": 10,
    }
    rows = read_client.post("/api/v1/recommendations", json=body).json()["recommendations"]
    assert rows
    for row in rows:
        listed, gpu, cost = items[row["gpu"]["slug"]], row["gpu"], row["cost"]
        for field in ("memory_gb", "memory_bandwidth_gbs", "tdp_w", "vendor", "segment"):
            assert gpu[field] == listed[field], (gpu["slug"], field)
        if cost["buy"] is not None and cost["purchase_basis"] is not None:
            # one card, bought as the list's buy_at buys it (basis auto)
            assert cost["buy"]["unit_usd"] == gpu["purchase_usd"] == listed["buy_at"]["usd"]
            assert cost["buy"]["as_of"] == listed["buy_at"]["as_of"]
        if row["offer"] is not None:
            # per GPU on the row's GPU, every GPU on its cost
            offer = row["offer"]
            assert cost["hourly_usd"] == offer["usd_per_hour"] * offer["instances"]
            assert gpu["hourly_usd"] == pytest.approx(offer["usd_per_hour"] / offer["gpus"])


def test_the_quoted_cloud_price_says_what_its_sort_reads(
    read_client: TestClient, spec: dict[str, Any]
) -> None:
    # CloudPrice had said `sort=cloud_price_usd_per_hour` sorts on it; the list sorts that key
    # by rent_from (a quote is never ranked), as the sort parameter and the README say
    said = " ".join(spec["components"]["schemas"]["CloudPrice"]["description"].split())
    assert "`sort=cloud_price_usd_per_hour` sorts by `rent_from.usd_per_gpu_hour`" in said
    by_key = read_client.get(
        "/api/v1/gpus", params={"sort": "cloud_price_usd_per_hour", "limit": 500}
    ).json()["items"]
    by_rent = read_client.get(
        "/api/v1/gpus", params={"sort": "rent_from.usd_per_gpu_hour", "limit": 500}
    ).json()["items"]
    assert [g["slug"] for g in by_key] == [g["slug"] for g in by_rent]
