"""/compare runs the job with the adapters' recipe, and an answer links its top picks there (a
new user's walk, thirty-eighth session: a QLoRA fine-tune of Llama 3.1 8B, answered on one
16 GiB RTX 4080, was compared as full fine-tuning — "no: needs 94.4 GiB" — since the comparison
had no PEFT choice, and the answer had no way to the comparison)."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

CARDS = "slugs=rtx-4080,rtx-4080-super&preset=llama-3.1-8b&task=fine-tuning"


def _runs(html: str) -> list[str]:
    """The "Runs it?" row's badges, one per GPU: "ok" or "bad"."""
    start = html.index("data-compare-job")
    row = re.search(r"Runs it\?</th>(.*?)</tr>", html[start:], re.S)
    assert row, html[start : start + 500]
    return re.findall(r'class="badge (ok|bad)"', row.group(1))


def test_qlora_is_compared_as_qlora(read_client: TestClient) -> None:
    full = read_client.get(f"/compare?{CARDS}")
    assert full.status_code == 200
    assert _runs(full.text) == ["bad", "bad"]  # the premise: 16 GiB cannot train it all
    r = read_client.get(f"/compare?{CARDS}&peft=qlora")
    assert r.status_code == 200, r.text[:500]
    assert _runs(r.text) == ["ok", "ok"]
    heading = re.search(r'<h2 id="job-h">(.*?)</h2>', r.text, re.S)
    assert heading and "QLoRA (4-bit base)" in unescape(heading.group(1))
    assert re.search(r'<option value="qlora" selected>', r.text)


def test_a_bad_peft_names_the_list(read_client: TestClient) -> None:
    r = read_client.get(f"/compare?{CARDS}&peft=dora")
    assert r.status_code == 422
    assert "choose a PEFT method from the list" in r.text
    r = read_client.get(f"/compare?{CARDS.replace('fine-tuning', 'cooking')}")
    assert r.status_code == 422 and "choose a task from the list" in r.text


def test_an_answer_links_its_top_picks_with_the_job(read_client: TestClient) -> None:
    q = "preset=llama-3.1-8b&task=fine-tuning&peft=qlora&acquisition=buy&max_purchase_usd=2000"
    html = read_client.get(f"/recommendations?{q}").text
    m = re.search(r'href="(/compare\?[^"]+)" data-compare-cards', html)
    assert m, "no link to compare the top picks"
    href = unescape(m.group(1))
    got = parse_qs(urlsplit(href).query)
    assert got["preset"] == ["llama-3.1-8b"] and got["task"] == ["fine-tuning"]
    assert got["peft"] == ["qlora"]
    slugs = got["slugs"][0].split(",")
    assert 2 <= len(slugs) <= 3
    r = read_client.get(href)
    assert r.status_code == 200 and set(_runs(r.text)) == {"ok"}


def test_a_serving_answer_has_no_such_link(read_client: TestClient) -> None:
    q = "preset=llama-3-8b&task=serving&concurrent_requests=10"
    html = read_client.get(f"/recommendations?{q}").text
    assert "data-recommendation" in html or "Serving configurations" in html
    assert "data-compare-cards" not in html
