"""r33au: the README's "Configuration" table names every setting (GPU_ADVISOR_*) and nothing
Settings lacks, and its "The API" table lists every API operation the app serves and none it
does not. Nothing held either before: a setting added without a row, or a route renamed in
the code and not in the README, went unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
PREFIX = "GPU_ADVISOR_"
# read by the test suite, not the app (the README says so under the table)
TEST_ONLY = {"GPU_ADVISOR_TEST_DATABASE_URL", "GPU_ADVISOR_REQUIRE_BROWSER"}


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _settings_names() -> set[str]:
    return {PREFIX + name.upper() for name in Settings.model_fields}


def readme_variables(section: str, known: set[str]) -> set[str]:
    """Every variable a row names. A row may name siblings by their differing tail
    (`GPU_ADVISOR_RUN_HEARTBEAT_S` / `_LAPSE_S`): the tail replaces the last words of the
    first name that make a name (RUN_HEARTBEAT_LAPSE_S); one that makes none is kept as
    written, so the comparison shows it."""
    names: set[str] = set()
    for m in re.finditer(r"`(GPU_ADVISOR_[A-Z0-9_]+)`((?:\s*/\s*`_[A-Z0-9_]+`)*)", section):
        first = m.group(1)
        names.add(first)
        for tail in re.findall(r"`(_[A-Z0-9_]+)`", m.group(2)):
            words = first.split("_")
            made = [
                "_".join(words[:cut]) + tail
                for cut in range(len(words) - 1, 1, -1)
                if "_".join(words[:cut]) + tail in known
            ]
            names.add(made[0] if made else first + tail)
    return names


def test_every_setting_is_in_the_readme_and_every_variable_is_a_setting() -> None:
    known = _settings_names()
    named = readme_variables(_section("Configuration"), known) - TEST_ONLY
    assert named - known == set(), "the README names variables Settings lacks"
    assert known - named == set(), "Settings has variables the README does not name"


def test_the_variable_reader_sees_a_missing_row() -> None:
    # the check can fail: a table without the LOG_LEVEL row leaves the setting unnamed
    section = _section("Configuration")
    row = next(line for line in section.splitlines() if "`GPU_ADVISOR_LOG_LEVEL`" in line)
    known = _settings_names()
    assert "GPU_ADVISOR_LOG_LEVEL" not in readme_variables(section.replace(row, ""), known)


METHOD = r"(?:GET|POST|PUT|PATCH|DELETE)"


def _norm(path: str) -> str:
    """/api/v1/device-reports/{report_id} and /{id} read alike."""
    return re.sub(r"\{[^}]+\}", "{}", path.split("?", 1)[0].rstrip("/"))


def readme_operations(section: str) -> set[tuple[str, str]]:
    """(method, path) of every operation the API table lists: its first cell's
    `GET /api/v1/...` (several methods as PUT/PATCH/DELETE), and in its second cell the
    same resource's `GET`, `GET /{id}`, `DELETE /{id}` and "(also `/api/v1/ready`)"."""
    ops: set[tuple[str, str]] = set()
    for line in section.splitlines():
        cells = line.split(" | ")
        if not line.startswith("| `") or len(cells) < 2:
            continue
        first, rest = cells[0], " | ".join(cells[1:])
        named = re.findall(rf"`({METHOD}(?:/{METHOD})*) (/api/[^`\s]*)`", first)
        for methods, path in named:
            ops |= {(m, _norm(path)) for m in methods.split("/")}
        if not named:
            continue
        methods, base = named[0][0], named[0][1].split("?", 1)[0]
        for m, sub in re.findall(rf"`({METHOD})( /\{{[a-z_]+\}})?`", rest):
            ops.add((m, _norm(base + sub.strip())))
        for also in re.findall(r"\(also `(/api/[^`]+)`\)", line):
            ops |= {(m, _norm(also)) for m in methods.split("/")}
    return ops


def test_the_readme_lists_every_api_operation_and_no_other() -> None:
    listed = readme_operations(_section("The API"))
    app = create_app(
        Settings(database_url="sqlite://", migrate_on_start=False, seed_on_start=False)
    )
    try:
        documented = {
            (m.upper(), _norm(path))
            for path, item in app.openapi()["paths"].items()
            for m in item
            if path.startswith("/api/")
        }
        assert documented - listed == set(), "the app serves operations the README does not list"
        # one the document leaves out (/api/v1/ready) is asked: served is anything but 404/405
        client = TestClient(app)
        for method, path in sorted(listed - documented):
            answer = client.request(method, path.replace("{}", "1"))
            assert answer.status_code not in (404, 405), (method, path, answer.text)
    finally:
        app.state.engine.dispose()


def test_the_operation_reader_sees_a_missing_row() -> None:
    section = _section("The API")
    row = next(line for line in section.splitlines() if line.startswith("| `GET /api/v1/meta`"))
    assert ("GET", "/api/v1/meta") not in readme_operations(section.replace(row, ""))
