"""An encoder's serving answer on the page, its CSV and the API (issue 21): its rows export
embeddings/s, latency and $ per million embeddings in columns of their own (a decoder's rows
keep their token columns, and each leaves the other's empty), the page draws latency against
embeddings/s, and every row carries its server's serve command."""

from __future__ import annotations

import csv
import io

from fastapi.testclient import TestClient

from app.domain import serving_encoder as se
from app.recommend.deploy import TEI_IMAGES
from app.web.question_pages import CSV_COLUMNS

ENC_Q = (
    "preset=bert-large&task=serving&concurrent_requests=64&prompt_tokens=256"
    "&ttft_ms_target=200&acquisition=rent"
)
DEC_Q = "preset=llama-3.1-8b&task=serving&concurrent_requests=16&acquisition=rent"
ENCODER_COLUMNS = (
    "embeddings_per_s", "max_embeddings_per_s", "embedding_latency_ms",
    "embedding_latency_p95_ms", "usd_per_million_embeddings",
)  # fmt: skip
TOKEN_COLUMNS = ("usd_per_million_output_blended", "ttft_ms", "ttft_p95_ms", "itl_ms", "itl_p95_ms")


def _csv(client: TestClient, q: str) -> list[dict[str, str]]:
    r = client.get(f"/recommendations.csv?{q}")
    assert r.status_code == 200, r.text
    return list(csv.DictReader(io.StringIO(r.text)))


def _num(cell: str) -> float:
    return float(cell)


def test_encoder_rows_fill_their_own_columns_not_the_token_ones(read_client: TestClient) -> None:
    assert set(ENCODER_COLUMNS) <= set(CSV_COLUMNS)
    rows = _csv(read_client, ENC_Q)
    recs = read_client.get(f"/recommendations.json?{ENC_Q}").json()["recommendations"]
    assert rows and len(rows) == len(recs)
    for row, rec in zip(rows, recs, strict=True):
        sv = rec["serving"]
        assert abs(_num(row["embeddings_per_s"]) / sv["embeddings_per_s"] - 1) < 1e-3
        assert abs(_num(row["embedding_latency_ms"]) / sv["ttft_ms"] - 1) < 1e-3
        assert abs(_num(row["embedding_latency_p95_ms"]) / sv["ttft_p95_ms"] - 1) < 1e-3
        assert _num(row["max_embeddings_per_s"]) >= _num(row["embeddings_per_s"])
        assert row["usd_per_million_embeddings"]  # rented rows all have a price
        # no first token, next token, output tokens or KV cache on a forward pass
        assert all(row[name] == "" for name in TOKEN_COLUMNS), row
        assert row["kv_cache_precision"] == ""
        assert row["throughput_unit"] == "embeddings/s"


def test_decoder_rows_leave_the_encoder_columns_empty(read_client: TestClient) -> None:
    rows = _csv(read_client, DEC_Q)
    assert rows
    assert all(row[name] == "" for row in rows for name in ENCODER_COLUMNS)
    assert all(row["ttft_ms"] and row["itl_ms"] for row in rows)


def test_bad_input_to_the_export_names_its_field(read_client: TestClient) -> None:
    r = read_client.get("/recommendations.csv?" + ENC_Q.replace("=64", "=-3"))
    assert 400 <= r.status_code < 500
    assert "concurrent_requests" in r.text


def test_the_page_charts_latency_against_embeddings(read_client: TestClient) -> None:
    text = read_client.get(f"/recommendations?{ENC_Q}").text
    assert "data-serving-charts" in text
    assert "embeddings/s (all replicas)" in text and "latency target (200 ms)" in text
    assert "output tokens/s (all replicas)" not in text


def test_the_curve_runs_past_saturation(read_client: TestClient) -> None:
    recs = read_client.get(f"/recommendations.json?{ENC_Q}").json()["recommendations"]
    curve = recs[0]["serving"]["encoder_curve"]
    assert len(curve) >= 4
    clients = [p["clients"] for p in curve]
    assert clients == sorted(clients) and clients[0] == 1
    lat = [p["latency_ms"] for p in curve]
    rate = [p["embeddings_per_s"] for p in curve]
    assert lat == sorted(lat) and rate == sorted(rate)
    # past a full batch per replica the rate stops and only the wait grows
    assert rate[-1] == rate[-2] and lat[-1] > 1.9 * lat[-2]


def test_each_row_carries_its_servers_command(read_client: TestClient) -> None:
    body = read_client.get(f"/recommendations.json?{ENC_Q}").json()
    for rec in body["recommendations"]:
        sv = rec["serving"]
        deploy = sv["deploy"]
        assert deploy is not None, rec["gpu"]["slug"]
        args = deploy["command"].split()
        if sv["runtime"] == "tei":
            assert args[0] == "text-embeddings-router"
            flag = args[args.index("--max-batch-tokens") + 1]
            assert int(flag) == se.RUNTIMES["tei"].batch_tokens
            # 16,384 tokens a batch of 256-token sequences: the row's batches of 64
            assert int(flag) // 256 == sv["batch_sequences"] == 64
        else:
            assert args[0] == "infinity_emb"
    # each TEI row names TEI's image for its compute capability (89- for Ada, hopper- ...)
    imaged = 0
    for rec in body["recommendations"]:
        cc = rec["gpu"].get("compute_capability")
        if rec["serving"]["runtime"] == "tei" and cc in TEI_IMAGES:
            tag = f"text-embeddings-inference:{TEI_IMAGES[cc]}1.8"
            assert any(tag in n for n in rec["serving"]["deploy"]["notes"]), rec["gpu"]["slug"]
            imaged += 1
    assert imaged
    text = read_client.get(f"/recommendations?{ENC_Q}").text
    assert "Deploy it" in text and "text-embeddings-router --model-id" in text
