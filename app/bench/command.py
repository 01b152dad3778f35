"""Body of ``gpu-advisor bench``: run the suites with progress bars, print a summary and the
tips, write the JSON report, optionally upload it.

Exit codes: 0 success; 1 the run or the upload failed; 2 bad arguments (unknown profile,
absent device, unknown ``--gpu`` slug).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

import httpx
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from app.bench.report import COMPUTE_CLASSES, BenchReport, Figure, KernelPoint, apply_peaks

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


Row = tuple[str, str, str, str, str]


def _matmul_rows(report: BenchReport) -> list[Row]:
    rows: list[Row] = []
    for p, s in (report.matmul.by_precision if report.matmul else {}).items():
        note = ""
        if s.best_shape and report.matmul:
            n_shapes = len([r for r in report.matmul.rows if r.precision == p])
            m, n, k = s.best_shape
            note = f"best of {n_shapes}: {m}×{n}×{k}"
        if not s.native:
            note = "not native (emulated)"
        if s.best.status == "not_applicable":
            note = s.best.reason or note
        rows.append((f"matmul {p}", *_fig_cells(s.best), note))
    return rows


def _conv_rows(report: BenchReport) -> list[Row]:
    rows: list[Row] = []
    for a in report.conv.aggregates if report.conv else []:
        mode = "fwd" if a.mode == "forward" else "fwd+bwd"
        rows.append(
            (
                f"conv {a.precision} {mode}",
                *_fig_cells(a.tflops),
                f"{a.faster_layout or '?'} faster",
            )
        )
    return rows


def _memory_rows(report: BenchReport) -> list[Row]:
    mem = report.memory
    if mem is None or mem.best is None:
        return []
    rows: list[Row] = [
        (
            "memory bandwidth",
            *_fig_cells(mem.best),
            f"{mem.best_kernel}, {mem.array_bytes / 2**20:.0f} MiB arrays",
        )
    ]
    if mem.triad is not None:
        rows.append(("memory triad", *_fig_cells(mem.triad), "STREAM"))
    return rows


def _transfer_rows(report: BenchReport) -> list[Row]:
    tr = report.transfer
    if tr is None:
        return []
    rows: list[Row] = []
    if tr.status == "not_applicable":
        cpu = report.environment.backend == "cpu"
        rows.append(
            ("host↔device", "[dim]n/a[/]", "—", "—", "CPU only" if cpu else (tr.reason or ""))
        )
    for f in tr.fits:
        bound = "≥" if f.bandwidth_is_lower_bound else "="
        note = (
            f"at {f.headline_size_bytes / 2**20:.0f} MiB; α={f.latency_s * 1e6:.1f} µs, "
            f"β{bound}{f.bandwidth_gbs:.1f} GB/s"
        )
        rows.append((f"{f.direction} {f.memory}", *_fig_cells(f.headline), note))
    return rows


def _batch_rows(report: BenchReport) -> list[Row]:
    rows: list[Row] = []
    for c in report.batch_scaling.curves if report.batch_scaling else []:
        best = max(
            (p for p in c.points if p.tflops.ok), default=None, key=lambda p: p.tflops.value or 0.0
        )
        name = {"cnn_block": "CNN block", "transformer_block": "transformer"}.get(
            c.workload, c.workload
        )
        eff = best.tflops.efficiency if best else None
        rows.append((
            f"{name} {c.mode} {c.precision}",
            f"{_fmt(c.max_samples_per_s)} samples/s",
            _fmt(best.tflops.peak) if best else "—",
            f"{eff:.0%}" if eff is not None else "—",
            f"B90={c.b90}; {_fmt(c.best_tflops)} TFLOPS",
        ))  # fmt: skip
    pm = report.peak_memory
    if pm is not None and pm.per_sample_bytes is not None:
        fixed, per = (pm.fixed_bytes or 0) / 2**20, pm.per_sample_bytes / 2**20
        measured = f"{fixed:.1f} MiB +\n{per:.2f} MiB/sample"
        rows.append(("peak memory (train step)", measured, "—", "—", pm.workload))
    return rows


def _kernel_rows(report: BenchReport) -> list[Row]:
    """One row per (kernel class, dtype): its best rate, or its time for launch overheads."""
    suite = report.kernels
    if suite is None:
        return []
    rows: list[Row] = []
    groups: dict[tuple[str, str], list[KernelPoint]] = {}
    for pt in suite.points:
        groups.setdefault((pt.kernel_class, pt.dtype), []).append(pt)
    for (kc, dtype), pts in groups.items():
        label = f"{kc.replace('_', ' ')} {dtype}"
        if kc.startswith("launch"):
            per = pts[0].seconds / max(1, pts[0].shape.get("kernels", 1))
            rows.append((label, f"{per * 1e6:.1f} µs/kernel", "—", "—", pts[0].op))
            continue
        best = max(pts, key=lambda p: p.rate or 0.0)
        unit = "TFLOPS" if kc in COMPUTE_CLASSES else "GB/s"
        eff = f"{best.efficiency:.0%}" if best.efficiency is not None else "—"
        shape = "×".join(str(v) for k, v in best.shape.items() if k != "causal")
        rows.append(
            (
                label,
                f"{_fmt(best.rate)} {unit}",
                _fmt(best.peak),
                eff,
                f"best of {len(pts)}: {best.op} {shape}",
            )
        )
    for kc, why in suite.skipped.items():
        if " " not in kc:  # whole classes, not single failed points
            rows.append((kc.replace("_", " "), "[dim]skipped[/]", "—", "—", why))
    return rows


_SECTIONS = (_matmul_rows, _conv_rows, _memory_rows, _transfer_rows, _batch_rows, _kernel_rows)


def summary_table(report: BenchReport, width: int = 80) -> Table:
    env = report.environment
    title = f"{env.device_name} ({env.backend}, {report.profile} profile)"
    if report.catalog_match:
        title += f" — catalog: {report.catalog_match.name} [{report.catalog_match.matched_by}]"
    return rows_table(title, [row for section in _SECTIONS for row in section(report)], width)


_HEADS = ("benchmark", "measured", "catalog\npeak", "efficiency", "note")


def rows_table(title: str, rows: list[Row], width: int = 80) -> Table:
    """The rows as a table no wider than ``width`` where the words allow. Figures never break
    and words fold onto more lines, between words only: at 80 columns, or piped, "benchmar /
    k", "bandwidt / h" and "transfor / mer" had broken beside a measured column padded to its
    widest cell. Too narrow for every line whole, the benchmark column takes its longest word
    and the note the rest; a note word longer than that rest folds."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in _HEADS]
    lines = [_parts(cells, head, "\n") for cells, head in zip(columns, _HEADS, strict=True)]
    # five columns' padding (2 each) and six rules
    fixed: dict[int, int] = {}
    if sum(lines) + 16 > width:
        fixed[0] = _parts(columns[0], _HEADS[0], None)
        fixed[4] = max(4, min(lines[4], width - 16 - fixed[0] - sum(lines[1:4])))
    table = Table(title=title, show_lines=False)
    for i, head in enumerate(_HEADS):
        text = i in (0, 4)
        table.add_column(head, justify="left" if text else "right", overflow="fold",
                         no_wrap=not text, width=fixed.get(i))  # fmt: skip
    for row in rows:
        table.add_row(*row)
    return table


def _parts(cells: tuple[str, ...], head: str, sep: str | None) -> int:
    """The widest line (``sep`` "\\n") or word (None) of a column's cells and header, markup
    left out."""
    return max(len(p) for c in (*cells, head) for p in Text.from_markup(c).plain.split(sep))


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
        raise RuntimeError(
            f"server rejected the report: HTTP {resp.status_code}"
            f"{_rejection_hint(resp.status_code, base_url, url)}: {_detail(resp)}"
        )
    try:
        body = resp.json()
    except ValueError as exc:
        raise RuntimeError(f"server answered HTTP {resp.status_code} without JSON") from exc
    rid = body.get("id") if isinstance(body, dict) else None
    if rid is None:
        raise RuntimeError(f"server answered HTTP {resp.status_code} without an 'id' field")
    return str(rid)


def _origin(base_url: str) -> str:
    u = httpx.URL(base_url)
    return f"{u.scheme}://{u.netloc.decode()}"


def report_page_url(base_url: str, rid: str) -> str:
    """Where a stored report is shown: the id alone left the reader to guess the page."""
    return f"{base_url.rstrip('/')}/device/reports/{rid}"


def _rejection_hint(status: int, base_url: str, url: str) -> str:
    if status in (401, 403):
        return " (check --token)"
    if status in (404, 405):
        # a page URL (…/device) answers 404 with the site's HTML: say what was posted where
        origin = _origin(base_url)
        return (
            f" (nothing takes reports at {url}: --upload wants the server's base URL, "
            f"like {origin}, and the report is posted to that + {UPLOAD_PATH})"
        )
    return ""


def _detail(resp: httpx.Response) -> str:
    """What the server said, in one line: its JSON error's message, else the body's first line
    (an HTML error page is named, never printed)."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        found: Any = body.get("detail") or body.get("error") or body.get("message") or body
        if isinstance(found, dict) and "message" in found:
            found = found["message"]
        return str(found)[:300]
    text = resp.text.strip()
    if "html" in resp.headers.get("content-type", "") or text[:1] == "<":
        return "an HTML page, not the report API's answer"
    first = text.splitlines()[0] if text else "(empty body)"
    return first[:200]


def _keep(report: BenchReport, err: Console) -> Path | None:
    """Save a report whose upload failed, so the measurement is not lost."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path.cwd() / f"gpu-advisor-report-{stamp}.json"
    try:
        path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    except OSError as exc:
        err.print(f"[red]error:[/] cannot keep the report in {path}: {exc}")
        return None
    return path


Match = tuple[str, str, dict[str, float]]


def _catalog_match(
    info_name: str,
    memory_gb: float | None,
    gpu: str | None,
    peaks_lookup: PeaksLookup | None,
    err: Console,
) -> tuple[Match | None, Literal["name", "manual"]] | int:
    """The catalog GPU to compare against, or an exit code (an unknown ``--gpu``)."""
    if gpu:
        if peaks_lookup is None:
            err.print(
                "[yellow]warning:[/] --gpu given but no catalog is available; running without peaks"
            )
            return None, "manual"
        match = peaks_lookup(gpu, None)
        if match is None:
            err.print(f"[red]error:[/] unknown GPU {gpu!r}: not in the catalog")
            return 2
        return match, "manual"
    if peaks_lookup is None:
        return None, "name"
    try:
        return peaks_lookup(info_name, memory_gb), "name"
    except Exception as exc:
        err.print(f"[yellow]warning:[/] catalog lookup failed: {exc}")
        return None, "name"


def _run_with_progress(
    con: Console, err: Console, device: str, profile: str, peaks: dict[str, float] | None,
    progress_jsonl: Path | None,
) -> BenchReport | None:  # fmt: skip
    """Run the suites under a Rich progress bar (and the JSON-lines progress file)."""
    from app.bench.runner import run_benchmarks

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
            task = prog.add_task(f"bench {device}", total=1.0)

            def on_progress(step: str, fraction: float) -> None:
                prog.update(task, completed=fraction, description=step[:48])
                sink.write({"step": step, "fraction": fraction})

            return run_benchmarks(profile=profile, device=device, peaks=peaks, progress=on_progress)
    except KeyboardInterrupt:
        sink.write({"step": "interrupted", "fraction": 0.0})
        err.print("[red]interrupted[/]")
    except Exception as exc:
        sink.write({"step": f"error: {exc}"[:200], "fraction": 0.0})
        err.print(f"[red]error:[/] benchmark failed: {type(exc).__name__}: {exc}")
    finally:
        sink.close()
    return None


def _print_report(con: Console, report: BenchReport) -> None:
    con.print(summary_table(report, con.width))
    if report.tips:
        con.print("[bold]Tips[/]")
        for tip in report.tips:
            con.print(f"  • {tip}")
    for w in report.warnings:
        con.print(f"[yellow]warning:[/] {w}")


def _deliver(
    con: Console, err: Console, report: BenchReport, output: Path | None, upload: str | None,
    token: str | None,
) -> int:  # fmt: skip
    """Write the report file and upload it, as asked; the exit code."""
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
            kept = output if output is not None else _keep(report, err)
            if kept is not None:
                err.print(
                    f"the report is saved in {kept}: upload it on {_origin(upload)}/device, "
                    "or rerun with --upload set to the server's base URL"
                )
            return 1
        con.print(f"uploaded: stored as report id {rid}, at {report_page_url(upload, rid)}")
    return 0


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
    from app.bench.runner import PROFILES
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

    found = _catalog_match(info.name, info.memory_gb, gpu, peaks_lookup, err)
    if isinstance(found, int):
        return found
    match, matched_by = found
    if match:
        con.print(f"catalog match: {match[1]} ({match[0]}, by {matched_by})")
    else:
        con.print(f"no catalog match for {info.name!r}: efficiencies will not be computed")

    peaks = match[2] if match else None
    report = _run_with_progress(con, err, info.device, profile, peaks, progress_jsonl)
    if report is None:
        return 1
    if match:
        report = apply_peaks(report, match[2], match[0], match[1], matched_by)
        report.tips = generate_tips(report)
    _print_report(con, report)
    return _deliver(con, err, report, output, upload, token)
