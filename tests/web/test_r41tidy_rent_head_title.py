"""Session 41 (tidy): the Rent column's hover (its head's title) promises the job's cost only
where a row shows one, as the key under the table does since r41web: an LLM or CNN inference
answer, and a serving one, had said "its price per hour and the job's cost" above rows that
show an hourly price alone."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

JOB = '<span class="muted small">job</span>'


def _rent_title(html: str) -> str:
    m = re.search(r'data-rent-head><abbr title="([^"]*)"', html)
    assert m, "the answer has a Rent column"
    return unescape(m.group(1))


@pytest.mark.parametrize(
    "url",
    [
        "/recommendations?preset=llama-3-8b&task=inference&batch_size=4&seq_len=4096",
        "/recommendations?preset=resnet-50&task=inference",
        "/recommendations?preset=llama-3.1-70b&task=serving&requests_per_s=5&acquisition=rent",
    ],
)
def test_a_ranking_without_job_costs_does_not_promise_one(
    read_client: TestClient, url: str
) -> None:
    page = read_client.get(url)
    assert page.status_code == 200
    assert JOB not in page.text
    title = _rent_title(page.text)
    assert "price per hour" in title and "job" not in title, title


def test_a_training_ranking_still_names_the_jobs_cost(read_client: TestClient) -> None:
    page = read_client.get("/recommendations?preset=resnet-50&task=training&epochs=90")
    assert page.status_code == 200
    assert JOB in page.text
    assert _rent_title(page.text).endswith("its price per hour and the job's cost")
