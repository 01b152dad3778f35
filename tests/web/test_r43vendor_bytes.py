"""Vendored bundles go out byte for byte. The forty-second session's lean stylesheet and script
("pgw") had applied its rules to every .js and .css under /static, and Swagger UI's minified
bundle lost 75 bytes: /docs threw "Invalid or unexpected token" and "SwaggerUIBundle is not
defined" in Chromium."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.shipped.paths import shipped_path

VENDORED = sorted(
    str(p.relative_to(shipped_path("static")))
    for p in (shipped_path("static") / "vendor").rglob("*")
    if p.suffix in (".js", ".css")
)


def test_there_are_vendored_bundles() -> None:
    assert any(v.endswith("swagger-ui-bundle.js") for v in VENDORED)


@pytest.mark.parametrize("relative", VENDORED)
def test_a_vendored_file_is_served_as_shipped(read_client: TestClient, relative: str) -> None:
    served = read_client.get(f"/static/{relative}")
    assert served.status_code == 200
    assert served.content == (shipped_path("static") / relative).read_bytes()
