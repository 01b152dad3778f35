"""Pydantic's error messages as a person reads them. Dependency-free (``re`` alone), so that
app/bench, which imports no app package that needs the server's dependencies, words a report's
errors as the API does."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# pydantic words a validator's own ValueError (or assert) as "Value error, <its text>": the
# prefix names a Python exception class, not the input, and the API, the form and the CLI
# had shown it ("workload.runtime: Value error, unknown runtime 'vlm'; did you mean 'vllm'?")
_PYDANTIC_PREFIX = re.compile(r"^(?:Value error|Assertion failed), ")


def error_text(err: Mapping[str, Any]) -> str:
    """One pydantic error's message as a person reads it: a validator's own sentence without
    pydantic's "Value error, " (or "Assertion failed, ") label; any other message as pydantic
    words it."""
    return _PYDANTIC_PREFIX.sub("", str(err.get("msg", "invalid")), count=1)


def every_problem(errors: Sequence[Mapping[str, Any]], most: int = 5) -> str:
    """Each field a document lacks or gets wrong, by its path ("profile: Field required;
    environment: Field required"), at most ``most``, from pydantic's ``exc.errors()``: its own
    text named one field of two and cut the second. The CLI's upload and the pages' say the
    same."""
    parts = [f"{'.'.join(str(x) for x in e['loc']) or 'the file'}: {error_text(e)}" for e in errors]
    more = f"; and {len(parts) - most} more" if len(parts) > most else ""
    return "; ".join(parts[:most]) + more
