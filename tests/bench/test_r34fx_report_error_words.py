"""A bench report's validation errors are worded as the API words them (app.validation_words):
a validator's own sentence, without pydantic's "Value error, " or "Assertion failed, " label.
The upload command had stripped only the first."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from app.bench.command import _why_not_a_report


class _Report(BaseModel):
    name: str
    count: int

    @field_validator("name")
    @classmethod
    def _named(cls, v: str) -> str:
        if not v:
            # as an ``assert`` raises it (pytest rewrites a test module's asserts' words)
            raise AssertionError("name is empty")
        return v

    @field_validator("count")
    @classmethod
    def _counted(cls, v: int) -> int:
        if v < 0:
            raise ValueError("count is negative")
        return v


def _error(**data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Report.model_validate(data)
    return caught.value


def test_an_assert_and_a_value_error_read_as_their_own_sentences() -> None:
    said = _why_not_a_report(_error(name="", count=-1))
    assert said == "name: name is empty; count: count is negative"


def test_pydantics_own_words_stay() -> None:
    assert _why_not_a_report(_error(name="a")) == "count: Field required"
