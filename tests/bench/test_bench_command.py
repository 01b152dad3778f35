"""`gpu-advisor bench` command body: output file, progress JSONL, catalog peaks, upload."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from app.bench import command, runner
from app.bench.command import bench_command, upload_report
from app.bench.report import BenchReport
from tests.bench.conftest import make_report


@pytest.fixture
def fake_run(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fake(
        profile: str = "quick",
        device: str = "auto",
        peaks: Any = None,
        progress: Any = None,
        suites: Any = None,
    ) -> BenchReport:
        calls.append({"profile": profile, "device": device, "peaks": peaks})
        for i in range(3):
            if progress:
                progress(f"step {i}", (i + 1) / 4)
        if progress:
            progress("done", 1.0)
        return make_report()

    monkeypatch.setattr(runner, "run_benchmarks", fake)
    return calls


def quiet() -> Console:
    return Console(file=io.StringIO(), width=140)


def recording() -> Console:
    return Console(record=True, width=160)


def test_writes_report_and_progress(tmp_path: Path, fake_run: list[dict[str, Any]]) -> None:
    out = tmp_path / "r.json"
    prog = tmp_path / "p" / "progress.jsonl"
    con = recording()
    code = bench_command("quick", "cpu", out, None, None, None, None, prog, console=con)
    assert code == 0
    report = BenchReport.model_validate_json(out.read_text())
    assert report.schema_version == 2
    lines = [json.loads(x) for x in prog.read_text().splitlines()]
    assert lines[-1] == {"step": "done", "fraction": 1.0}
    assert all(set(x) == {"step", "fraction"} for x in lines)
    text = con.export_text()
    assert "matmul bf16" in text and "memory bandwidth" in text
    assert fake_run[0]["peaks"] is None


def test_catalog_peaks_applied(tmp_path: Path, fake_run: list[dict[str, Any]]) -> None:
    seen: list[tuple[str, float | None]] = []

    def lookup(name: str, mem: float | None) -> tuple[str, str, dict[str, float]] | None:
        seen.append((name, mem))
        return "h200-sxm", "NVIDIA H200 SXM", {"bf16": 989.0, "fp32": 67.0, "bandwidth_gbs": 4800.0}

    out = tmp_path / "r.json"
    con = recording()
    assert bench_command("quick", "cpu", out, None, None, None, lookup, None, console=con) == 0
    assert seen and seen[0][1] is not None  # name + memory
    report = BenchReport.model_validate_json(out.read_text())
    assert report.catalog_match is not None
    assert report.catalog_match.matched_by == "name"
    assert report.summary_efficiencies()["bf16"] == pytest.approx(790 / 989)
    assert fake_run[0]["peaks"]["bf16"] == 989.0
    assert "80%" in con.export_text()


def test_manual_gpu_slug(
    tmp_path: Path, fake_run: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.bench import device

    # a GPU slug names a run on that GPU (a CPU-only run under a GPU slug is refused: C1)
    gpu = device.DeviceInfo("cuda:0", "cuda", "NVIDIA A100-SXM4-80GB", 85_899_345_920)
    monkeypatch.setattr(device, "probe", lambda _d: gpu)

    def lookup(name: str, mem: float | None) -> tuple[str, str, dict[str, float]] | None:
        if name == "a100-80gb-sxm" and mem is None:
            return "a100-80gb-sxm", "NVIDIA A100 80GB SXM", {"bf16": 312.0}
        return None

    out = tmp_path / "r.json"
    assert (
        bench_command(
            "quick", "cpu", out, None, None, "a100-80gb-sxm", lookup, None, console=quiet()
        )
        == 0
    )
    report = BenchReport.model_validate_json(out.read_text())
    assert report.catalog_match and report.catalog_match.matched_by == "manual"
    # 790 > 1.15 × 312: rejected as a measurement error, not reported as a value
    assert report.matmul.by_precision["bf16"].best.status == "rejected"  # type: ignore[union-attr]
    assert (
        bench_command("quick", "cpu", out, None, None, "nope", lookup, None, console=quiet()) == 2
    )


def test_bad_arguments(fake_run: list[dict[str, Any]]) -> None:
    assert bench_command("huge", "cpu", None, None, None, None, None, None, console=quiet()) == 2
    assert bench_command("quick", "tpu", None, None, None, None, None, None, console=quiet()) == 2
    assert not fake_run


def test_upload_posts_report_with_token(
    monkeypatch: pytest.MonkeyPatch, fake_run: list[dict[str, Any]]
) -> None:
    sent: dict[str, Any] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        sent["url"] = str(request.url)
        sent["auth"] = request.headers.get("authorization")
        sent["body"] = json.loads(request.content)
        return httpx.Response(201, json={"id": 42})

    transport = httpx.MockTransport(handler)
    real_post = httpx.post

    def post(url: str, **kw: Any) -> httpx.Response:
        with httpx.Client(transport=transport) as client:
            return client.post(url, **kw)

    monkeypatch.setattr(command.httpx, "post", post)
    con = recording()
    code = bench_command(
        "quick", "cpu", None, "http://server:8000/", "s3cret", None, None, None, console=con
    )
    monkeypatch.setattr(command.httpx, "post", real_post)
    assert code == 0
    assert sent["url"] == "http://server:8000/api/v1/device-reports"
    assert sent["auth"] == "Bearer s3cret"
    assert sent["body"]["schema_version"] == 2
    assert "42" in con.export_text()


def test_upload_http_error_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    transport = httpx.MockTransport(
        lambda r: httpx.Response(401, json={"error": {"message": "bad token"}})
    )

    def post(url: str, **kw: Any) -> httpx.Response:
        with httpx.Client(transport=transport) as client:
            return client.post(url, **kw)

    monkeypatch.setattr(command.httpx, "post", post)
    with pytest.raises(RuntimeError, match="HTTP 401.*--token"):
        upload_report(make_report(), "http://x", None)


def test_upload_connection_refused(tmp_path: Path, fake_run: list[dict[str, Any]]) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(RuntimeError, match="cannot connect"):
        upload_report(make_report(), f"http://127.0.0.1:{port}", None, timeout_s=5)
    out = tmp_path / "r.json"
    con = recording()
    code = bench_command(
        "quick", "cpu", out, f"http://127.0.0.1:{port}", None, None, None, None, console=con
    )
    assert code == 1
    assert out.exists()  # the report is kept even when the upload fails
    assert "cannot connect" in con.export_text()


def _mock_post(monkeypatch: pytest.MonkeyPatch, handler: Any) -> None:
    transport = httpx.MockTransport(handler)

    def post(url: str, **kw: Any) -> httpx.Response:
        with httpx.Client(transport=transport) as client:
            return client.post(url, **kw)

    monkeypatch.setattr(command.httpx, "post", post)


def test_a_page_url_gets_a_base_url_hint_not_html_and_the_report_is_kept(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fake_run: list[dict[str, Any]],
) -> None:
    # --upload http://host/device posts to /device/api/v1/device-reports: the site's 404 page
    html = "<!doctype html>\n<html><head><title>Not found</title></head><body>…</body></html>"
    _mock_post(
        monkeypatch,
        lambda r: httpx.Response(404, text=html, headers={"content-type": "text/html"}),
    )
    monkeypatch.chdir(tmp_path)
    con = recording()
    code = bench_command(
        "quick", "cpu", None, "http://127.0.0.1:8111/device", None, None, None, None, console=con
    )
    text = " ".join(con.export_text().split())  # Rich wraps long lines at spaces
    assert code == 1
    assert "<!doctype" not in text and "<html" not in text
    assert "HTTP 404" in text
    assert "http://127.0.0.1:8111/device/api/v1/device-reports" in text
    assert "base URL, like http://127.0.0.1:8111" in text
    kept = list(tmp_path.glob("gpu-advisor-report-*.json"))
    assert len(kept) == 1 and str(kept[0]) in text
    assert BenchReport.model_validate_json(kept[0].read_text()).schema_version == 2


def test_a_successful_upload_prints_the_reports_page(
    monkeypatch: pytest.MonkeyPatch, fake_run: list[dict[str, Any]]
) -> None:
    _mock_post(monkeypatch, lambda r: httpx.Response(201, json={"id": 7}))
    con = recording()
    code = bench_command(
        "quick", "cpu", None, "http://server:8000/", None, None, None, None, console=con
    )
    assert code == 0
    assert "http://server:8000/device/reports/7" in con.export_text()


def test_the_summary_at_80_columns_folds_notes_and_keeps_figures_whole() -> None:
    # the notes were cut ("(this is cpu…") where the README promises tables fold
    from app.bench.report import KernelSuite

    why = "collectives are measured with NCCL on CUDA GPUs (this is cpu)"
    report = make_report().model_copy(update={"kernels": KernelSuite(skipped={"collectives": why})})
    con = Console(record=True, width=80)
    con.print(command.summary_table(report))
    text = con.export_text()
    assert "…" not in text
    # the note column's lines, joined: the whole reason, folded over lines, not cut
    notes = "".join(
        line.split("│")[-2].strip() for line in text.splitlines() if line.count("│") >= 6
    )
    assert "".join(why.split()) in "".join(notes.split())
    for figure in ("790 TFLOPS", "4,300 GB/s", "4,100 GB/s"):
        assert figure in text, figure
