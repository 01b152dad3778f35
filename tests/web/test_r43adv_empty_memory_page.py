"""The answer page says how far memory keeps a job off the cards, as the API's empty answer
does (issue 23): QLoRA of Llama 3.1 8B rented for at most $0.08 an hour on one GPU, where
only 8 GB cards are that cheap, had shown spot instances and budgets only."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

QUERY = (
    "preset=llama-3.1-8b&task=fine-tuning&peft=qlora&max_hourly_usd=0.08&acquisition=rent"
    "&max_gpus=1"
)


def test_the_page_names_the_memory_changes_the_api_names(read_client: TestClient) -> None:
    api = read_client.get(f"/recommendations.json?{QUERY}").json()
    empty = api["empty"]
    first = empty["nearest"][0]["change"]
    assert first.startswith("every memory change at once (sequence ")
    html = unescape(read_client.get(f"/recommendations?{QUERY}").text)
    # the verdict carries the memory words the message has, figure for figure
    memory = "Memory: " + empty["message"].split(" Memory: ", 1)[1]
    assert memory in html
    # and the banner's list leads with the change
    items = re.findall(r"<ul data-empty-nearest>\s*<li>([^<]*)</li>", html)
    n = empty["nearest"][0]["can_run"]
    assert items and items[0].startswith(f"{first}: {n} kind{'s' if n != 1 else ''} of GPU, best ")
