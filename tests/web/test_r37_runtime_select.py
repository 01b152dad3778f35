"""The form's runtime is one select of a decoder's runtimes and an encoder's embedding servers:
a field typed as two closed sets had fallen back to a free-text box (the CI's browser tests
caught the runtime list gone)."""

from __future__ import annotations

import re
from typing import Literal

from fastapi.testclient import TestClient

from app.web.forms import _unwrap_optional


def test_two_closed_sets_and_none_are_one_closed_set() -> None:
    merged = _unwrap_optional(Literal["a", "b"] | Literal["c"] | None)
    assert merged == Literal["a", "b", "c"]
    assert _unwrap_optional(int | None) is int
    assert _unwrap_optional(int | str) == int | str  # not closed sets: left as they are


def test_the_runtime_select_offers_both(read_client: TestClient) -> None:
    html = read_client.get("/").text
    select = re.search(r'<select[^>]*id="f-runtime".*?</select>', html, re.S)
    assert select is not None, "runtime is a select"
    options = re.findall(r'<option value="([^"]*)"', select.group(0))
    assert {"pytorch", "vllm", "llama.cpp", "tei", "vllm-pooling"} <= set(options)
