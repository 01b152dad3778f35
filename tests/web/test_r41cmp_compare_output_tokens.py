"""/compare takes the output tokens a question asked, as it takes its batch size and sequence
length: an LLM inference question at 512 output tokens had been compared at the preset's 256
(the answer page's link dropped them, and the form had no field for them). A size asked with
no preset, which had been dropped without a word, asks for one."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

LLM = "/compare?slugs=rtx-4090,rtx-3090&preset=llama-3.1-8b"


def _heading(html: str) -> str:
    m = re.search(r"data-job-size>(.*?)</span>", html, re.S)
    assert m, "the comparison names its job's size"
    return unescape(m.group(1))


def _batch_times_s(html: str) -> list[float]:
    """The comparison's "Batch time" row, in seconds."""
    row = re.search(r"<th scope=\"row\">Batch time</th>(.*?)</tr>", html, re.S)
    assert row, "an inference comparison has a batch time row"
    out = []
    for cell in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S):
        m = re.fullmatch(r"([\d,.]+) (ms|s)", unescape(re.sub(r"<[^>]+>", "", cell)).strip())
        assert m, cell
        out.append(float(m[1].replace(",", "")) / (1000 if m[2] == "ms" else 1))
    return out


def test_compare_runs_the_output_asked(read_client: TestClient) -> None:
    asked = read_client.get(f"{LLM}&task=inference&output_tokens=1024")
    own = read_client.get(f"{LLM}&task=inference")
    assert asked.status_code == own.status_code == 200
    assert "1,024 generated" in _heading(asked.text)
    assert "256 generated" in _heading(own.text)  # the preset's own, said
    # the estimate is the longer job's: decode dominates, so ~4x the time on each card
    for long, short in zip(_batch_times_s(asked.text), _batch_times_s(own.text), strict=True):
        assert 3.0 < long / short < 4.5


def test_a_bad_output_is_shown_at_its_own_field(read_client: TestClient) -> None:
    r = read_client.get(f"{LLM}&task=inference&output_tokens=abc")
    assert r.status_code == 422
    errors = re.findall(r'<p class="error" id="([^"]+)"[^>]*>(.*?)</p>', r.text, re.S)
    assert [fid for fid, _ in errors] == ["cmp-out-err"]
    assert "Output tokens: give a whole number, not" in unescape(errors[0][1])
    assert 'value="abc"' in r.text


def test_the_answers_link_carries_the_output_asked(read_client: TestClient) -> None:
    q = "preset=llama-3.1-8b&task=inference&output_tokens=512&acquisition=buy"
    m = re.search(
        r'href="(/compare\?[^"]+)" data-compare-cards',
        read_client.get(f"/recommendations?{q}").text,
    )
    assert m
    href = unescape(m.group(1))
    assert parse_qs(urlsplit(href).query)["output_tokens"] == ["512"]
    assert "512 generated" in _heading(read_client.get(href).text)


def test_a_training_job_says_the_output_is_ignored(read_client: TestClient) -> None:
    r = read_client.get(f"{LLM}&task=fine-tuning&output_tokens=512")
    assert r.status_code == 200
    assert "generated" not in _heading(r.text)
    notes = re.search(r"<ul[^>]*data-job-notes>(.*?)</ul>", r.text, re.S)
    assert notes, "the comparison says the output tokens were not used"
    said = unescape(re.sub(r"<[^>]+>", "", notes.group(1)))
    assert "Output tokens" in said and "only applies to inference" in said and "ignored" in said


def test_a_size_with_no_preset_asks_for_one(read_client: TestClient) -> None:
    # a size describes a job, which a preset names: it had been dropped without a word
    r = read_client.get("/compare?slugs=rtx-4090,rtx-3090&batch_size=8&output_tokens=512")
    assert r.status_code == 422
    errors = re.findall(r'<p class="error" id="([^"]+)"[^>]*>(.*?)</p>', r.text, re.S)
    assert [fid for fid, _ in errors] == ["cmp-preset-err"]
    said = unescape(errors[0][1])
    assert "choose a preset" in said and "batch size and output tokens" in said
    # the specifications still compare, and what was typed is re-shown
    assert "data-compare-table" in r.text
    assert 'value="8"' in r.text and 'value="512"' in r.text
    assert read_client.get("/compare?slugs=rtx-4090,rtx-3090").status_code == 200
