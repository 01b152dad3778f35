"""r33po: `bench --upload` parses the URL as the upload will before measuring anything.
'http://[/]' had passed (httpx reads its host leniently as '%5B'), the whole benchmark ran,
and only the upload failed; so do a port out of range, a host with a space, and a ?query the
upload path would have landed in."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from app.bench import runner
from app.bench.command import bench_command, upload_command, upload_url_problem
from app.bench.report import BenchReport
from tests.bench.conftest import make_report

BAD = [
    ("http://[/]", "Invalid IPv6 URL"),
    ("http://host:99999", "Port out of range"),
    ("http://host:abc", "is not a URL"),
    ("http://a b:8000", "'a b' is not a host name or IP address"),
    ("http://h%41st/", "is not a host name or IP address"),
    ("http://host:8000/?x=1", "?query or #fragment"),
    ("http://host:8000#top", "?query or #fragment"),
    ("http://:8000", "it has no host"),
    ("http://host:0", "port 0"),
]


@pytest.fixture
def fake_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def fake(profile: str = "quick", device: str = "auto", **kw: Any) -> BenchReport:
        calls.append(device)
        return make_report()

    monkeypatch.setattr(runner, "run_benchmarks", fake)
    return calls


def _console() -> Console:
    return Console(record=True, width=300, file=io.StringIO())


@pytest.mark.parametrize(("url", "why"), BAD)
def test_a_url_the_upload_cannot_use_is_refused_naming_why(url: str, why: str) -> None:
    problem = upload_url_problem(url)
    assert problem is not None and problem.startswith("--upload ")
    assert why in problem and repr(url) in problem


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000",
        "https://advisor.example.org/",
        "http://[::1]:8000/",
        "HTTP://Advisor.Local:8000/base/",
        "http://bücher.example",
        "http://user:pw@10.0.0.1",
        "http://my_host.lan:80",
    ],
)
def test_a_server_base_url_still_passes(url: str) -> None:
    assert upload_url_problem(url) is None


@pytest.mark.parametrize("url", ["http://[/]", "http://host:99999"])
def test_bench_refuses_it_before_measuring(url: str, fake_run: list[str]) -> None:
    con = _console()
    assert bench_command("quick", "cpu", None, url, None, None, None, None, console=con) == 2
    assert not fake_run  # nothing measured
    text = " ".join(con.export_text().split())
    assert "--upload wants the server's base URL" in text


def test_upload_refuses_it_naming_server(tmp_path: Path) -> None:
    saved = tmp_path / "r.json"
    saved.write_text(make_report().model_dump_json())
    con = _console()
    assert upload_command(saved, "http://[/]", None, console=con) == 2
    text = " ".join(con.export_text().split())
    assert "--server wants the server's base URL" in text and "Invalid IPv6 URL" in text
