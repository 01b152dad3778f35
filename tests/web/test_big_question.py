"""The form posts: a question of any size up to the body limit (a pasted 88 KB config.json)
gets an answer or the form back with a message, never a bare transport error."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from fastapi.testclient import TestClient

from tests.web.test_pages import field_error

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def _big_config() -> str:
    cfg = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    # Real configs grow this big with tokenizer and id-to-label tables pasted in.
    cfg["id2label"] = {str(i): f"LABEL_{i}" for i in range(6000)}
    text = json.dumps(cfg, indent=2)
    assert len(text) > 88_000
    return text


def _form(**extra: str) -> dict[str, str]:
    return {"preset": "", "task": "inference", "family": "decoder", **extra}


def test_a_short_question_is_sent_on_to_its_link(read_client: TestClient) -> None:
    r = read_client.post(
        "/recommendations",
        data={"preset": "resnet-50", "batch_size": "64"},
        follow_redirects=False,
    )
    assert r.status_code == 303
    target = urlsplit(r.headers["location"])
    assert target.path == "/recommendations"
    assert ("batch_size", "64") in parse_qsl(target.query)
    page = read_client.get(r.headers["location"])
    assert page.status_code == 200 and "data-ranking" in page.text


def test_a_pasted_big_config_is_answered_without_a_link(read_client: TestClient) -> None:
    r = read_client.post("/recommendations", data=_form(hf_config=_big_config()))
    assert r.status_code == 200, r.text[:500]
    assert "data-ranking" in r.text
    assert "data-share-too-long" in r.text
    assert "data-share-url" not in r.text


def test_broken_json_names_its_line_and_column_and_keeps_the_text(read_client: TestClient) -> None:
    broken = _big_config().replace('"hidden_size": 4096,', '"hidden_size": 4096', 1)
    r = read_client.post("/recommendations", data=_form(hf_config=broken))
    assert r.status_code == 422
    message = field_error(r.text, "hf_config")
    assert message is not None and "line " in message and "column " in message, message
    # the user's text comes back in the textarea (escaped), not lost
    assert "LABEL_5999" in r.text


def test_a_body_over_the_limit_is_refused_with_a_message(read_client: TestClient) -> None:
    huge = "x" * 300_000  # over the default 256 KiB body limit
    r = read_client.post("/recommendations", data=_form(hf_config=huge))
    assert r.status_code == 413
    assert "at most" in r.text
