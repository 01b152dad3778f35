"""The answer page's rows past ``limit``: counted in "GPUs that can run it", so the page says
how many more there are and links to them all (an 8B QLoRA question under $700 counted 13 and
showed #1–#10: the Arc B580, RX 9070 XT and RX 7900 XT, experimental software sorted after
the supported rows, were in neither the table nor "Excluded"); and a row on experimental
software carries a mark, so a cheaper, faster card below a P40 does not read as an error."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import cast
from urllib.parse import parse_qsl, urlsplit

from fastapi.testclient import TestClient

from app.recommend import schemas as rs
from app.web.question_pages import more_rows

QUERY = (
    "preset=llama-3.1-8b&task=fine-tuning&peft=qlora&framework=pytorch&max_purchase_usd=700"
    "&acquisition=buy&objective=best_value&purchase_basis=auto&max_gpus=1"
)

# TensorFlow on Intel and Apple is experimental (data/frameworks.yaml): every ranked row
EXPERIMENTAL = (
    "preset=llama-3.1-8b&task=fine-tuning&peft=lora&framework=tensorflow&acquisition=buy&limit=500"
)


def _slugs(html: str) -> list[str]:
    return re.findall(r'<tr id="rec-\d+" data-rank="\d+" data-slug="([^"]+)"', html)


def test_rows_past_the_limit_are_counted_and_linked(read_client: TestClient) -> None:
    page = read_client.get("/recommendations?" + QUERY)
    answer = read_client.get("/recommendations.json?" + QUERY).json()
    assert page.status_code == 200
    shown = len(answer["recommendations"])
    assert answer["count"] > shown  # the question still has rows past the default 10
    line = re.search(r"<p class=\"small\" data-more-rows>(.*?)</p>", page.text)
    assert line, "no line says rows were cut"
    text = re.sub(r"<[^>]+>", "", line.group(1))
    assert f"{answer['count'] - shown} more ranked below #{shown}" in text
    assert f"show all {answer['count']}" in text
    href = re.search(r'href="([^"]+)"', line.group(1))
    assert href
    target = href.group(1).replace("&amp;", "&")
    pairs = parse_qsl(urlsplit(target).query)
    assert ("limit", str(answer["count"])) in pairs and [k for k, _ in pairs].count("limit") == 1
    # the link answers with every ranked row, and nothing past them
    everything = read_client.get("/recommendations" + target.split("#")[0])
    assert everything.status_code == 200
    slugs = _slugs(everything.text)
    assert len(slugs) == answer["count"]
    assert "data-more-rows" not in everything.text
    assert slugs[:shown] == _slugs(page.text)


def test_experimental_rows_are_marked_in_the_table(read_client: TestClient) -> None:
    answer = read_client.get("/recommendations.json?" + EXPERIMENTAL).json()
    page = read_client.get("/recommendations?" + EXPERIMENTAL).text
    experimental = [r["gpu"]["slug"] for r in answer["recommendations"]
                    if r["framework_status"] == "experimental"]  # fmt: skip
    assert experimental, "the question no longer has an experimental row to mark"
    for row in re.findall(r'<tr id="rec-\d+".*?</tr>', page, flags=re.S):
        slug = re.search(r'data-slug="([^"]+)"', row)
        assert slug
        assert ("data-experimental" in row) == (slug.group(1) in experimental), slug.group(1)


def _answer(count: int, shown: int) -> rs.RecommendationResponse:
    """An answer with ``count`` ranked and ``shown`` rows: only those two are read."""
    answer = cast(
        rs.RecommendationResponse, SimpleNamespace(count=count, recommendations=[None] * shown)
    )
    return answer


def test_more_rows_asks_within_the_bound_on_limit() -> None:
    query = [("preset", "x"), ("limit", "10")]
    assert more_rows(_answer(10, 10), query) is None  # nothing cut
    assert more_rows(_answer(0, 0), query) is None
    hidden, count, href = more_rows(_answer(700, 10), query) or (0, 0, "")
    assert (hidden, count) == (690, 700)
    assert dict(parse_qsl(urlsplit(href).query)) == {"preset": "x", "limit": "500"}
    # at the bound already: the count is said elsewhere, and no link re-asks the same
    assert more_rows(_answer(700, 500), query) is None


def test_a_serving_answer_says_its_rows_past_the_limit_too(read_client: TestClient) -> None:
    query = (
        "preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
        "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50"
    )
    answer = read_client.get("/recommendations.json?" + query).json()
    assert answer["serving"]["met"] and answer["count"] > len(answer["recommendations"])
    page = read_client.get("/recommendations?" + query).text
    hidden = answer["count"] - len(answer["recommendations"])
    line = re.search(r"<p class=\"small\" data-more-rows>(.*?)</p>", page)
    assert line and f"{hidden} more ranked below #{len(answer['recommendations'])}" in line.group(1)
    assert f"limit={answer['count']}" in line.group(1)
    assert '<h2 id="ranking">' in page  # where the link lands
