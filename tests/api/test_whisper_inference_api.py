"""Whisper large-v3 inference over HTTP: each row prices a 30-second window as the encoder's
pass plus the decoder's output_tokens steps (app/domain/seq2seq.py), not one forward pass."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_whisper_rows_price_the_decoder_loop_per_window(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "whisper-large-v3", "task": "inference"},
            "limit": 5,
            "what_if": True,
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["workload"]["output_tokens"] == 128  # the preset's, priced as decoder steps
    assumed = body["summary"]["assumptions"]
    assert "30-second audio windows" in assumed and "128 tokens out" in assumed
    assert "sequence" not in assumed
    assert not any("sequence" in v["change"] for v in body["what_if"] or [])
    rows = body["recommendations"]
    assert rows
    for row in rows:
        # 128 decoder steps of an eager loop: hundreds of ms at least (one forward was ~44 ms)
        # a sample is one 30-second window, said so, and the rate in audio seconds beside it
        assert row["throughput"]["unit"] == "30-s windows/s"
        assert row["throughput"]["audio_seconds_per_s"] == 30 * row["throughput"]["value"]
        assert row["latency_ms"] > 500, row["gpu"]
        assert row["memory"]["breakdown"]["kv_cache"] > 0.25
        assert 0 < row["ms_per_output_token"] < row["latency_ms"] / 100
        # the known miss beyond the band is said on the row, not only in the README
        assert any("Encoder-decoder generation" in w for w in row["warnings"])
    # a decoder-only model's rows carry no such warning
    llm = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "llama-3-8b", "task": "inference"}, "limit": 2},
    ).json()
    assert not any("Encoder-decoder" in w for r in llm["recommendations"] for w in r["warnings"])
