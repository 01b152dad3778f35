"""The maintainers' methodology is rendered under the pages' CSP (style-src 'self'): an aligned
markdown table column must not become an inline style the browser refuses (CI, 2026-12-06: the
tr paragraph's right-aligned figures logged a CSP error on /methodology/details)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_the_methodology_details_carry_no_inline_style(read_client: TestClient) -> None:
    html = read_client.get("/methodology/details").text
    assert 'align="right"' in html  # the shipped doc has right-aligned columns
    assert not re.search(r"<[^>]+\sstyle=", html)


def test_the_readers_methodology_carries_no_inline_style(read_client: TestClient) -> None:
    html = read_client.get("/methodology").text
    assert not re.search(r"<[^>]+\sstyle=", html)
