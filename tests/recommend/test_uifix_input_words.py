"""Input as people write it, through the JSON API: a model size as the form and the CLI
read it ("1.3B"), and an unknown preset or runtime answered with what to write instead."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.numbers import parse_number
from app.recommend import schemas as s

GPT_1_3B = {"family": "decoder", "layers": 24, "hidden_size": 2048, "num_heads": 16,
            "vocab_size": 50257, "max_context": 2048}  # fmt: skip


def _estimate(client: TestClient, model: dict[str, Any]) -> Any:
    body = {"gpu": "h100-sxm",
            "workload": {"task": "training", "batch_size": 8, "seq_len": 2048, "model": model}}  # fmt: skip
    return client.post("/api/v1/estimate", json=body)


@pytest.mark.parametrize("written", ["1.3B", "1,300M", "1.3e9", "1300000000"])
def test_params_as_the_form_writes_it_is_read_in_json(
    read_client: TestClient, written: str
) -> None:
    """ModelIn.params' description offers "8.03B, 350M, 1.2e9"; the API answered "1.3B" with
    422 "unable to parse string as a number"."""
    r = _estimate(read_client, {**GPT_1_3B, "params": written})
    assert r.status_code == 200, r.text
    assert r.json()["workload"]["model"]["params"] == parse_number(written) == 1.3e9
    same = _estimate(read_client, {**GPT_1_3B, "params": 1.3e9})
    assert same.json()["workload"]["model"] == r.json()["workload"]["model"]


@pytest.mark.parametrize("written", ["lots", "1.3 billion", "0,5B", ""])
def test_garbage_params_is_a_422_naming_the_field(read_client: TestClient, written: str) -> None:
    r = _estimate(read_client, {**GPT_1_3B, "params": written})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == "workload.model.params"
    assert error["message"].startswith("workload.model.params:")


def test_one_reader_for_every_number_field() -> None:
    """The same text reads the same in JSON as in the form: a count ("15k"), a whole number
    refused with a fraction, text fields untouched."""
    w = s.WorkloadIn(batch_size="8", dataset_samples="15k", preset="bert-base")
    assert w.batch_size == 8 and w.dataset_samples == 15_000 and w.preset == "bert-base"
    with pytest.raises(ValidationError, match="whole number"):
        s.WorkloadIn(batch_size="8.5")
    assert s.ModelIn(params="8.03B").params == 8.03e9


def _recommend(client: TestClient, workload: dict[str, Any]) -> Any:
    return client.post("/api/v1/recommendations", json={"workload": workload, "limit": 1})


def test_an_unknown_preset_suggests_the_near_names(read_client: TestClient) -> None:
    r = _recommend(read_client, {"preset": "llama3-8b"})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == "workload.preset"
    assert "did you mean 'llama-3-8b'" in error["message"]
    # nothing near: no guess
    far = _recommend(read_client, {"preset": "zzzz-qqqq"}).json()["error"]["message"]
    assert "did you mean" not in far


@pytest.mark.parametrize(
    ("runtime", "app"), [("ollama", "Ollama"), ("lm-studio", "LM Studio"),
                         ("lmstudio", "LM Studio"), ("LM Studio", "LM Studio")],
)  # fmt: skip
def test_desktop_apps_are_answered_with_llama_cpp(
    read_client: TestClient, runtime: str, app: str
) -> None:
    r = _recommend(read_client, {"preset": "llama-3-8b", "task": "inference", "runtime": runtime})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == "workload.runtime"
    assert app in error["message"] and "use 'llama.cpp'" in error["message"]


def test_an_unknown_runtime_suggests_the_near_name(read_client: TestClient) -> None:
    r = _recommend(read_client, {"preset": "llama-3-8b", "task": "inference", "runtime": "vlm"})
    error = r.json()["error"]
    assert r.status_code == 422 and error["details"]["field"] == "workload.runtime"
    assert "unknown runtime 'vlm'; did you mean 'vllm'" in error["message"]
