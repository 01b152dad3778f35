"""r34 new user: a validator's own sentence reaches the user without pydantic's "Value error, "
label. POST /api/v1/recommendations with runtime 'vlm' had answered "workload.runtime: Value
error, unknown runtime 'vlm'; did you mean 'vllm'?", and the form and `gpu-advisor recommend
--request` showed the same prefix, where the README quotes the sentence alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field, ValidationError, field_validator
from typer.testing import CliRunner

from app.bench.command import _why_not_a_report
from app.bench.report import Figure
from app.cli.main import cli
from app.config import Settings
from app.errors import error_text, invalid_input_from

PREFIX = re.compile(r"Value error|Assertion failed")


class _Shape(BaseModel):
    name: str
    size: int = Field(ge=1)

    @field_validator("name")
    @classmethod
    def _known(cls, value: str) -> str:
        if value != "ok":
            raise ValueError(f"unknown name {value!r}")
        return value


def _errors(data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Shape.model_validate(data)
    return caught.value


def test_a_validators_sentence_loses_pydantics_label() -> None:
    err = _errors({"name": "x", "size": 1}).errors()[0]
    assert err["msg"].startswith("Value error, ")  # what pydantic says, which the user saw
    assert error_text(err) == "unknown name 'x'"


def test_pydantics_own_messages_are_kept_whole() -> None:
    err = _errors({"name": "ok", "size": 0}).errors()[0]
    assert error_text(err) == "Input should be greater than or equal to 1"


def test_a_service_refusal_from_a_validation_names_the_field_and_the_sentence() -> None:
    refusal = invalid_input_from(_errors({"name": "x", "size": 1}))
    assert refusal.message == "name: unknown name 'x'"
    assert refusal.field == "name"


def test_the_api_answers_the_validators_sentence(read_client: TestClient) -> None:
    body = {"workload": {"preset": "llama-3-8b", "runtime": "vlm"}}
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["message"] == "workload.runtime: unknown runtime 'vlm'; did you mean 'vllm'?"
    assert error["details"]["field"] == "workload.runtime"
    assert not PREFIX.search(error["details"]["errors"][0]["message"])


def test_the_form_shows_the_validators_sentence(read_client: TestClient) -> None:
    r = read_client.get("/recommendations", params={"preset": "llama-3-8b", "runtime": "vlm"})
    assert r.status_code == 422
    said = re.search(r'id="f-runtime-err">([^<]*)<', r.text)
    assert said is not None
    assert said.group(1).startswith("unknown runtime &#39;vlm&#39;")


def test_the_cli_answers_as_the_api_does(read_settings: Settings, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"workload": {"preset": "llama-3-8b", "runtime": "vlm"}}))
    env = {"COLUMNS": "200", "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    result = CliRunner().invoke(cli, ["recommend", "--request", str(request), "--json"], env=env)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["message"] == "workload.runtime: unknown runtime 'vlm'; did you mean 'vllm'?"
    plain = CliRunner().invoke(cli, ["recommend", "--request", str(request)], env=env)
    assert plain.exit_code == 2
    assert "unknown runtime 'vlm'" in plain.output
    assert not PREFIX.search(plain.output)


def test_upload_names_a_bad_figure_in_the_validators_words() -> None:
    with pytest.raises(ValidationError) as caught:
        Figure.model_validate({"unit": "TFLOPS", "status": "ok"})
    assert _why_not_a_report(caught.value) == "the file: a figure with status 'ok' needs a value"
