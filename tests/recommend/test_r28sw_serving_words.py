"""Serving words the review read wrong: a pool in vendor GB beside a breakdown in 10⁹ bytes, a rate
of 1e-9 said as "0.00 requests/s", "1 GPU type carry"."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.domain.figures import given


def test_a_tiny_rate_keeps_its_figures() -> None:
    # as given since session 41 (tests/recommend/test_r41tidy_rate_as_given.py), not "5.00"
    assert given(5.0) == "5"
    assert given(1234.5) == "1,234.5"
    assert given(1e-9) == "0.000000001"
    assert given(0.004) == "0.004"


def test_the_kv_pool_note_names_both_units(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3.1-70b", "task": "serving",
                     "serving": {"concurrent_requests": 8, "prompt_tokens": 120_000,
                                 "output_tokens": 1000, "ttft_ms_target": 60_000,
                                 "itl_ms_target": 100}},
        "constraints": {"acquisition": "rent"}, "limit": 3,
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    j = r.json()
    for row in j["recommendations"]:
        note = next(n for n in row["memory"]["notes"] if "for the KV cache" in n)
        gib, gb = note.split("reserves ")[1].split(" GiB (")
        gb = gb.split(" × 10⁹")[0]
        # the same pool: GiB × 1.073741824 is the 10⁹-byte figure
        assert abs(float(gib) * 1.073741824 - float(gb)) <= 0.1
        # the pool holds the cache the breakdown counts (both in 10⁹ bytes)
        assert row["memory"]["breakdown"]["kv_cache"] <= float(gb) + 0.1
    message = j["serving"]["message"]
    assert "GPU type carry" not in message and "1 GPU types" not in message
