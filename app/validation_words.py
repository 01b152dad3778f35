"""Pydantic's error messages as a person reads them. Dependency-free (``re`` alone), so that
app/bench, which imports no app package that needs the server's dependencies, words a report's
errors as the API does."""

from __future__ import annotations

import re
from collections.abc import Mapping
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
