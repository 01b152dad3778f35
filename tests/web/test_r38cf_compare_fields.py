"""/compare's Batch size and Sequence length fields, as a review found them (thirty-eighth
session): a size's error shown under Preset with neither size input marked, "abc" with no preset
answered 200 and dropped, a prompt past the context refused without naming Sequence length, and
a ResNet-50's sequence length of 512 dropped without a word (the answer page says it is
ignored). Each through the app (TestClient), as a reader gets it."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

SLUGS = "rtx-4090,rtx-3090"
LLM = f"slugs={SLUGS}&preset=llama-3.1-8b"


def _input(html: str, fid: str) -> str:
    m = re.search(rf'<(?:input|select) id="{fid}"[^>]*>', html)
    assert m, f"the page has #{fid}"
    return m.group(0)


def _errors(html: str) -> dict[str, str]:
    """Each field error on the page, by its id: what it says, in words."""
    found = re.findall(r'<p class="error" id="([^"]+)"[^>]*>(.*?)</p>', html, re.S)
    return {fid: unescape(re.sub(r"<[^>]+>", "", text)).strip() for fid, text in found}


def _marked(html: str, fid: str) -> bool:
    """The input says it is invalid and points at its own error, as the question form's do."""
    tag = _input(html, fid)
    described = re.search(r'aria-describedby="([^"]*)"', tag)
    return 'aria-invalid="true"' in tag and described is not None and f"{fid}-err" in described[1]


@pytest.mark.parametrize(
    ("query", "fid", "words"),
    [
        (f"{LLM}&task=inference&batch_size=abc", "cmp-batch", "Batch size"),
        (f"{LLM}&task=inference&batch_size=0", "cmp-batch", "Batch size"),
        (f"{LLM}&task=inference&seq_len=-3", "cmp-seq", "Sequence length"),
    ],
)
def test_a_bad_size_is_shown_at_its_own_field(
    read_client: TestClient, query: str, fid: str, words: str
) -> None:
    r = read_client.get(f"/compare?{query}")
    assert r.status_code == 422
    errors = _errors(r.text)
    assert list(errors) == [f"{fid}-err"], errors
    assert words in errors[f"{fid}-err"]
    assert _marked(r.text, fid)
    # the Preset field is not blamed, and the other size is left alone
    assert "aria-invalid" not in _input(r.text, "cmp-preset")
    other = "cmp-seq" if fid == "cmp-batch" else "cmp-batch"
    assert "aria-invalid" not in _input(r.text, other)
    # re-shown with what was typed (a number input would have shown "abc" blank)
    typed = query.rsplit("=", 1)[1]
    assert f'value="{typed}"' in _input(r.text, fid)
    assert 'type="text"' in _input(r.text, fid)


def test_bad_sizes_are_refused_with_no_preset_or_gpus(read_client: TestClient) -> None:
    r = read_client.get(f"/compare?slugs={SLUGS}&batch_size=abc")
    assert r.status_code == 422
    assert "Batch size: give a whole number, not 'abc'" in _errors(r.text)["cmp-batch-err"]
    # the specifications still compare: only the job is refused
    assert "data-compare-table" in r.text
    both = read_client.get("/compare?batch_size=abc&seq_len=0")
    assert both.status_code == 422
    errors = _errors(both.text)
    assert set(errors) == {"cmp-batch-err", "cmp-seq-err"}
    assert errors["cmp-seq-err"].startswith("Sequence length: give a whole number from 1 to")
    assert _marked(both.text, "cmp-batch") and _marked(both.text, "cmp-seq")


def test_blank_sizes_and_good_ones_still_compare(read_client: TestClient) -> None:
    assert read_client.get(f"/compare?slugs={SLUGS}&batch_size=&seq_len=").status_code == 200
    r = read_client.get(f"{'/compare?' + LLM}&task=inference&batch_size=4&seq_len=1024")
    assert r.status_code == 200
    assert _errors(r.text) == {} and "aria-invalid" not in r.text
    heading = re.search(r"data-job-size>(.*?)</span>", r.text, re.S)
    assert heading and "batch 4, 1,024 tokens" in unescape(heading.group(1))


@pytest.mark.parametrize(
    ("seq_len", "task"),
    # past the context outright; the prompt within it but not with the output after it
    # (the engine blames output_tokens there, a field this form has not got)
    [(200_000, "inference"), (131_000, "inference"), (200_000, "fine-tuning")],
)
def test_a_prompt_past_the_context_names_sequence_length(
    read_client: TestClient, seq_len: int, task: str
) -> None:
    r = read_client.get(f"/compare?{LLM}&task={task}&seq_len={seq_len}")
    assert r.status_code == 422
    errors = _errors(r.text)
    assert list(errors) == ["cmp-seq-err"], errors
    assert "Sequence length" in errors["cmp-seq-err"]
    assert "131,072" in errors["cmp-seq-err"]  # the model's context, said
    assert _marked(r.text, "cmp-seq")
    assert "aria-invalid" not in _input(r.text, "cmp-preset")
    assert f'value="{seq_len}"' in _input(r.text, "cmp-seq")


def test_a_cnn_says_its_sequence_length_is_ignored(read_client: TestClient) -> None:
    # as the question form answers it: 200, with the engine's note that it is ignored
    asked = read_client.get("/recommendations?preset=resnet-50&task=training&seq_len=512")
    assert asked.status_code == 200 and "does not apply to a CNN" in unescape(asked.text)
    r = read_client.get(f"/compare?slugs={SLUGS}&preset=resnet-50&task=training&seq_len=512")
    assert r.status_code == 200
    notes = re.search(r"<ul[^>]*data-job-notes>(.*?)</ul>", r.text, re.S)
    assert notes, "the comparison says the sequence length was not used"
    said = unescape(re.sub(r"<[^>]+>", "", notes.group(1)))
    assert "Sequence length" in said and "does not apply to a CNN" in said and "ignored" in said
    assert 'value="512"' in _input(r.text, "cmp-seq")
    # without a size asked, no note: the job's other warnings stay on the answer page
    plain = read_client.get(f"/compare?slugs={SLUGS}&preset=resnet-50&task=training")
    assert plain.status_code == 200 and "data-job-notes" not in plain.text


def test_sizes_read_as_the_question_form_reads_them(read_client: TestClient) -> None:
    # "2,048" and "2k" are a sequence length on the question form (app.numbers.parse_int);
    # /compare had refused them as not whole numbers
    for said, read in (("2,048", "2,048"), ("2k", "2,000")):
        r = read_client.get(f"/compare?{LLM}&task=inference&batch_size=1,024&seq_len={said}")
        assert r.status_code == 200, said
        heading = re.search(r"data-job-size>(.*?)</span>", r.text, re.S)
        assert heading and f"batch 1,024, {read} tokens" in unescape(heading.group(1))
    half = read_client.get(f"/compare?{LLM}&task=inference&batch_size=1.5")
    assert half.status_code == 422
    assert "Batch size: give a whole number, not '1.5'" in _errors(half.text)["cmp-batch-err"]
