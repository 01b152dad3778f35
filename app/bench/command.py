"""Body of ``gpu-advisor bench``: run the suites with progress bars, print a summary and the
tips, write the JSON report, optionally upload it.

Exit codes: 0 success; 1 the run or the upload failed; 2 bad arguments (unknown profile,
absent device, unknown ``--gpu`` slug).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

import httpx
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from app.bench.report import BenchReport, Figure, apply_peaks

PeaksLookup = Callable[[str, float | None], tuple[str, str, dict[str, float]] | None]

UPLOAD_PATH = "/api/v1/device-reports"


def _fmt(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def _fig_cells(fig: Figure | None) -> tuple[str, str, str]:
    if fig is None:
        return "—", "—", "—"
    if fig.status == "rejected":
        return f"[red]rejected ({_fmt(fig.rejected_value)} {fig.unit})[/]", _fmt(fig.peak), "—"
    if not fig.ok:
        return f"[dim]{fig.status}[/]", _fmt(fig.peak), "—"
    noisy = " [yellow]~[/]" if fig.noisy else ""
    measured = f"{_fmt(fig.value)} {fig.unit}{noisy}"
    eff = f"{fig.efficiency:.0%}" if fig.efficiency is not None else "—"
    return measured, _fmt(fig.peak), eff


def summary_table(report: BenchReport) -> Table:
    env = report.environment
    title = f"{env.device_name} ({env.backend}, {report.profile} profile)"
    if report.catalog_match:
        title += f" — catalog: {report.catalog_match.name} [{report.catalog_match.matched_by}]"
    table = Table(title=title, show_lines=False)
    table.add_column("benchmark")
    table.add_column("measured", justify="right")
    table.add_column("catalog peak", justify="right")
    table.add_column("efficiency", justify="right")
    table.add_column("note")
    if report.matmul:
        for p, s in report.matmul.by_precision.items():
            note = ""
            if s.best_shape:
                n_shapes = len([r for r in report.matmul.rows if r.precision == p])
                m, n, k = s.best_shape
                note = f"best of {n_shapes}: {m}×{n}×{k}"
            if not s.native:
                note = "not native (emulated)"
            if s.best.status == "not_applicable":
                note = s.best.reason or note
            table.add_row(f"matmul {p}", *_fig_cells(s.best), note)
    if report.conv:
        for a in report.conv.aggregates:
            mode = "fwd" if a.mode == "forward" else "fwd+bwd"
            table.add_row(
                f"conv {a.precision} {mode}",
                *_fig_cells(a.tflops),
                f"{a.faster_layout or '?'} faster",
            )
    if report.memory and report.memory.best is not None:
        table.add_row(
            "memory bandwidth",
            *_fig_cells(report.memory.best),
            f"{report.memory.best_kernel}, {report.memory.array_bytes / 2**20:.0f} MiB arrays",
        )
        if report.memory.triad is not None:
            table.add_row("memory triad", *_fig_cells(report.memory.triad), "STREAM")
    if report.transfer:
        if report.transfer.status == "not_applicable":
            table.add_row(
                "host↔device",
                "[dim]n/a[/]",
                "—",
                "—",
                "CPU only" if env.backend == "cpu" else (report.transfer.reason or ""),
            )
        for f in report.transfer.fits:
            table.add_row(
                f"{f.direction} {f.memory}",
                *_fig_cells(f.headline),
                f"at {f.headline_size_bytes / 2**20:.0f} MiB; "
                f"α={f.latency_s * 1e6:.1f} µs, "
                f"β{'≥' if f.bandwidth_is_lower_bound else '='}"
                f"{f.bandwidth_gbs:.1f} GB/s",
            )
    if report.batch_scaling:
        for c in report.batch_scaling.curves:
            best = max(
                (p for p in c.points if p.tflops.ok),
                default=None,
                key=lambda p: p.tflops.value or 0.0,
            )
            name = {"cnn_block": "CNN block", "transformer_block": "transformer"}.get(
                c.workload, c.workload
            )
            table.add_row(
                f"{name} {c.mode} {c.precision}",
                f"{_fmt(c.max_samples_per_s)} samples/s",
                _fmt(best.tflops.peak) if best else "—",
                f"{best.tflops.efficiency:.0%}"
                if best and best.tflops.efficiency is not None
                else "—",
                f"B90={c.b90}; {_fmt(c.best_tflops)} TFLOPS",
            )
    pm = report.peak_memory
    if pm is not None and pm.per_sample_bytes is not None:
        table.add_row(
            "peak memory (train step)",
            f"{(pm.fixed_bytes or 0) / 2**20:.1f} MiB + "
            f"{pm.per_sample_bytes / 2**20:.2f} MiB/sample",
            "—",
            "—",
            pm.workload,
        )
    return table


class _JsonlSink:
    def __init__(self, path: Path | None) -> None:
        self.fh: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = path.open("a", encoding="utf-8")

    def write(self, obj: dict[str, Any]) -> None:
        if self.fh is not None:
            self.fh.write(json.dumps(obj) + "\n")
            self.fh.flush()

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def upload_report(
    report: BenchReport, base_url: str, token: str | None, timeout_s: float = 60.0
) -> str:
    """POST the report; return the stored id. Raises RuntimeError with a clear message."""
    url = base_url.rstrip("/") + UPLOAD_PATH
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        resp = httpx.post(
            url, json=report.model_dump(mode="json"), headers=headers, timeout=timeout_s
        )
    except httpx.ConnectError as exc:
        raise RuntimeError(f"cannot connect to {base_url}: {exc or 'connection refused'}") from exc
    except httpx.TimeoutException as exc:
        raise RuntimeError(f"upload to {url} timed out after {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise RuntimeError(f"upload to {url} failed: {exc}") from exc
    if resp.status_code >= 400:
        detail: Any = resp.text[:500]
        try:
            body = resp.json()
            if isinstance(body, dict):
                detail = body.get("detail") or body.get("error") or body.get("message") or body
        except ValueError:
            pass
        hint = ""
        if resp.status_code in (401, 403):
            hint = " (check --token)"
        raise RuntimeError(f"server rejected the report: HTTP {resp.status_code}{hint}: {detail}")
    try:
        body = resp.json()
    except ValueError as exc:
        raise RuntimeError(f"server answered HTTP {resp.status_code} without JSON") from exc
    rid = body.get("id") if isinstance(body, dict) else None
    if rid is None:
        raise RuntimeError(f"server answered HTTP {resp.status_code} without an 'id' field")
    return str(rid)


def bench_command(
    profile: str,
    device: str,
    output: Path | None,
    upload: str | None,
    token: str | None,
    gpu: str | None,
    peaks_lookup: PeaksLookup | None,
    progress_jsonl: Path | None,
    *,
    console: Console | None = None,
) -> int:
    """Run the benchmarks and report. See the module docstring for exit codes.

    ``peaks_lookup(device_name, memory_gb)`` returns ``(slug, name, peaks)`` for the catalog
    GPU matching the device, or None. With ``gpu`` (a catalog slug) it is called as
    ``peaks_lookup(gpu, None)`` and the match is recorded as ``manual``.
    """
    from app.bench.device import probe
    from app.bench.runner import PROFILES, run_benchmarks
    from app.bench.tips import generate_tips

    con = console or Console()
    err = Console(stderr=True) if console is None else console
    if profile not in PROFILES:
        err.print(f"[red]error:[/] unknown profile {profile!r}: use {' or '.join(PROFILES)}")
        return 2
    try:
        info = probe(device)
    except ValueError as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    except Exception as exc:
        err.print(f"[red]error:[/] cannot open device {device!r}: {exc}")
        return 2

    match: tuple[str, str, dict[str, float]] | None = None
    matched_by: Literal["name", "manual"] = "name"
    if gpu:
        matched_by = "manual"
        if peaks_lookup is None:
            err.print(
                "[yellow]warning:[/] --gpu given but no catalog is available; running without peaks"
            )
        else:
            match = peaks_lookup(gpu, None)
            if match is None:
                err.print(f"[red]error:[/] unknown GPU {gpu!r}: not in the catalog")
                return 2
    elif peaks_lookup is not None:
        try:
            match = peaks_lookup(info.name, info.memory_gb)
        except Exception as exc:
            err.print(f"[yellow]warning:[/] catalog lookup failed: {exc}")
            match = None
    peaks = match[2] if match else None
    if match:
        con.print(f"catalog match: {match[1]} ({match[0]}, by {matched_by})")
    else:
        con.print(f"no catalog match for {info.name!r}: efficiencies will not be computed")

    sink = _JsonlSink(progress_jsonl)
    try:
        with Progress(
            TextColumn("[bold]{task.description:<48}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            console=con,
            transient=False,
        ) as prog:
            task = prog.add_task(f"bench {info.device}", total=1.0)

            def on_progress(step: str, fraction: float) -> None:
                prog.update(task, completed=fraction, description=step[:48])
                sink.write({"step": step, "fraction": fraction})

            report = run_benchmarks(
                profile=profile, device=info.device, peaks=peaks, progress=on_progress
            )
    except KeyboardInterrupt:
        sink.write({"step": "interrupted", "fraction": 0.0})
        err.print("[red]interrupted[/]")
        return 1
    except Exception as exc:
        sink.write({"step": f"error: {exc}"[:200], "fraction": 0.0})
        err.print(f"[red]error:[/] benchmark failed: {type(exc).__name__}: {exc}")
        return 1
    finally:
        sink.close()

    if match:
        report = apply_peaks(report, match[2], match[0], match[1], matched_by)
        report.tips = generate_tips(report)

    con.print(summary_table(report))
    if report.tips:
        con.print("[bold]Tips[/]")
        for tip in report.tips:
            con.print(f"  • {tip}")
    for w in report.warnings:
        con.print(f"[yellow]warning:[/] {w}")

    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(report.model_dump_json(indent=2), encoding="utf-8")
        except OSError as exc:
            err.print(f"[red]error:[/] cannot write {output}: {exc}")
            return 1
        con.print(f"report written to {output}")

    if upload:
        try:
            rid = upload_report(report, upload, token)
        except RuntimeError as exc:
            err.print(f"[red]error:[/] {exc}")
            return 1
        con.print(f"uploaded: stored as report id {rid}")
    return 0
