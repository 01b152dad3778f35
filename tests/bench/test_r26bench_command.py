"""r26 review of `gpu-advisor bench` in CI: a CPU run labelled as a GPU, upload URL and
--output checked before measuring, the upload kept going past an unwritable --output, a
content-derived Idempotency-Key, --json, `gpu-advisor upload`, readable FLOPS units."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from app.bench import command, runner
from app.bench.command import bench_command, upload_command
from app.bench.report import BenchReport
from tests.bench.conftest import make_report


@pytest.fixture
def fake_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def fake(profile: str = "quick", device: str = "auto", **kw: Any) -> BenchReport:
        calls.append(device)
        return make_report()

    monkeypatch.setattr(runner, "run_benchmarks", fake)
    return calls


def _console() -> Console:
    return Console(record=True, width=200, file=io.StringIO())


def _mock_post(monkeypatch: pytest.MonkeyPatch, handler: Any) -> list[httpx.Request]:
    seen: list[httpx.Request] = []

    def wrapped(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        response: httpx.Response = handler(request)
        return response

    transport = httpx.MockTransport(wrapped)

    def post(url: str, **kw: Any) -> httpx.Response:
        with httpx.Client(transport=transport) as client:
            return client.post(url, **kw)

    monkeypatch.setattr(command.httpx, "post", post)
    return seen


def _lookup(name: str, mem: float | None) -> tuple[str, str, dict[str, float]] | None:
    return ("h100-sxm", "NVIDIA H100 SXM", {"bf16": 989.0}) if mem is None else None


def test_a_cpu_run_is_not_labelled_as_the_gpu_named(tmp_path: Path, fake_run: list[str]) -> None:
    con = _console()
    out = tmp_path / "x.json"
    code = bench_command("quick", "cpu", out, None, None, "h100-sxm", _lookup, None, console=con)
    text = " ".join(con.export_text().split())
    assert code == 2
    assert not fake_run and not out.exists()  # refused before measuring anything
    assert "--gpu h100-sxm names a GPU, but torch sees no GPU here" in text
    assert "catalog match" not in text


@pytest.mark.parametrize("url", ["127.0.0.1:8104", "ftp://host/", "http://"])
def test_an_upload_url_without_scheme_is_refused_before_measuring(
    url: str, fake_run: list[str]
) -> None:
    con = _console()
    assert bench_command("quick", "cpu", None, url, None, None, None, None, console=con) == 2
    assert not fake_run
    text = " ".join(con.export_text().split())
    assert "--upload wants the server's base URL with http:// or https://" in text
    assert ":///" not in text


def test_an_unwritable_output_is_refused_before_measuring(
    tmp_path: Path, fake_run: list[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    con = _console()
    out = blocker / "report.json"  # its folder is a file
    assert bench_command("quick", "cpu", out, None, None, None, None, None, console=con) == 2
    assert not fake_run
    assert "cannot be written" in con.export_text()


def test_a_failed_write_still_uploads_and_keeps_a_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _mock_post(monkeypatch, lambda r: httpx.Response(201, json={"id": 5}))
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    con = _console()
    code, done = command._deliver(
        con, con, make_report(), blocker / "r.json", "http://server:8000", None
    )
    assert code == 1  # the file asked for was not written
    assert len(seen) == 1 and done["upload"]["id"] == 5  # but the upload happened
    kept = list(tmp_path.glob("gpu-advisor-report-*.json"))
    assert len(kept) == 1 and done["kept"] == str(kept[0])


def test_the_upload_carries_a_key_from_the_report_content(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _mock_post(monkeypatch, lambda r: httpx.Response(201, json={"id": 1}))
    report = make_report()
    command.upload(report, "http://s", None)
    command.upload(BenchReport.model_validate_json(report.model_dump_json()), "http://s", None)
    keys = [r.headers["Idempotency-Key"] for r in seen]
    assert keys[0] == keys[1] and keys[0].startswith("bench-")
    other = report.model_copy(update={"duration_s": report.duration_s + 1})
    command.upload(other, "http://s", None)
    assert seen[-1].headers["Idempotency-Key"] != keys[0]


def test_a_refused_report_is_not_sent_to_another_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_run: list[str]
) -> None:
    _mock_post(
        monkeypatch,
        lambda r: httpx.Response(422, json={"error": {"message": "catalog_match.slug: cpu"}}),
    )
    monkeypatch.chdir(tmp_path)
    con = _console()
    code = bench_command("quick", "cpu", None, "http://s:1", None, None, None, None, console=con)
    text = " ".join(con.export_text().split())
    assert code == 1
    assert "sending it again will not help" in text
    assert "rerun with --upload" not in text


def test_json_prints_the_summary_and_the_stored_id(
    monkeypatch: pytest.MonkeyPatch, fake_run: list[str]
) -> None:
    _mock_post(
        monkeypatch,
        lambda r: httpx.Response(201, json={"id": 9}, headers={"Idempotent-Replayed": "true"}),
    )
    buf = io.StringIO()
    con = Console(file=buf, width=300)
    code = bench_command(
        "quick", "cpu", None, "http://s:1/", None, None, None, None, console=con, as_json=True
    )
    assert code == 0
    body = json.loads(buf.getvalue()[buf.getvalue().index('{\n  "report"') :])
    assert body["upload"] == {
        "id": 9,  # the API's integer, as it answered (r30: it had been "9")
        "url": "http://s:1/device/reports/9",
        "duplicate": True,  # the API's word (r33po: it had been "already_stored")
    }
    assert body["report"]["backend"] == "cuda" and "fp32" in body["report"]["measured"]


def test_upload_sends_a_saved_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = _mock_post(monkeypatch, lambda r: httpx.Response(201, json={"id": 3}))
    saved = tmp_path / "r.json"
    saved.write_text(make_report().model_dump_json(indent=2))
    buf = io.StringIO()
    con = Console(file=buf, width=300)
    assert upload_command(saved, "http://s:2", None, console=con, as_json=True) == 0
    assert seen and str(seen[0].url) == "http://s:2/api/v1/device-reports"
    assert json.loads(buf.getvalue().splitlines()[-1])["id"] == 3  # an int, as the API
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert upload_command(bad, "http://s:2", None, console=_console()) == 2
    assert upload_command(saved, "s:2", None, console=_console()) == 2


def test_cpu_figures_read_in_their_own_unit() -> None:
    assert command._rate(0.000483, "TFLOPS") == "483 MFLOPS"
    assert command._rate(0.0381, "TFLOPS") == "38.1 GFLOPS"
    assert command._rate(312.0, "TFLOPS") == "312 TFLOPS"
    assert command._rate(21.5, "GB/s") == "21.5 GB/s"
