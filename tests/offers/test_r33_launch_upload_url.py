"""The launch-spec's upload line and `gpu-advisor bench --upload` read one rule for a server's
base URL (app.server_url): 'http://host:99999' had passed the launch-spec's own check, which
the bench's refused."""

from __future__ import annotations

import pytest

from app.bench.command import upload_url_problem as bench_problem
from app.offers.launch import upload_url_problem as launch_problem


@pytest.mark.parametrize(
    "url", ["http://host:99999", "http://[/]", "ftp://host", "http://host/?x=1", "http://:80"]
)
def test_both_refuse_what_is_no_base_url(url: str) -> None:
    assert bench_problem(url) is not None
    assert launch_problem(url) is not None


@pytest.mark.parametrize("url", ["http://10.0.0.5:8000", "https://advisor.example.org/"])
def test_both_take_a_base_url(url: str) -> None:
    assert bench_problem(url) is None
    assert launch_problem(url) is None


def test_the_launch_line_still_refuses_a_newline() -> None:
    problem = launch_problem("http://host:8000\nrm -rf /")
    assert problem is not None and "control characters" in problem
