"""The answer page's question echo says the GPU count asked: "up to 8" was shown beside a
relax list reading "any GPU count instead of exactly 2"."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def _echo(client: TestClient, query: str) -> str:
    r = client.get(f"/recommendations?preset=resnet-50&{query}")
    assert r.status_code == 200, r.text
    m = re.search(r"GPUs per option</dt>\s*<dd[^>]*>([^<]+)<", r.text)
    assert m, "the echo lists the GPU count"
    return m.group(1).strip()


def test_an_exact_count_is_echoed_as_asked(read_client: TestClient) -> None:
    assert _echo(read_client, "num_gpus=2") == "exactly 2"
    assert _echo(read_client, "max_gpus=4") == "up to 4"


def test_channels_last_is_echoed_in_the_job(read_client: TestClient) -> None:
    r = read_client.get("/recommendations?preset=resnet-50&channels_last=true")
    assert r.status_code == 200
    m = re.search(r"Job</dt>\s*<dd[^>]*>([^<]+)<", r.text)
    assert m and "channels-last tensors" in m.group(1)
    plain = read_client.get("/recommendations?preset=resnet-50").text
    m = re.search(r"Job</dt>\s*<dd[^>]*>([^<]+)<", plain)
    assert m and "channels-last" not in m.group(1)
