"""Body of ``gpu-advisor bench``: run the suites with progress bars, print a summary and the
tips, write the JSON report, optionally upload it; and of ``gpu-advisor upload``, which
sends a saved report.

Exit codes (``EXIT_HELP``, shown by ``--help``): 0 success; 1 the run failed, or the report
could not be written or uploaded (a copy is kept and its path printed); 2 bad arguments,
refused before anything is measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import httpx
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from app.bench.report import COMPUTE_CLASSES, BenchReport, Figure, KernelPoint, apply_peaks
from app.bench.server_url import UPLOAD_PATH, base_url_problem, unreachable
from app.validation_words import every_problem

if TYPE_CHECKING:
    from app.bench.device import DeviceInfo

PeaksLookup = Callable[[str, float | None], tuple[str, str, dict[str, float]] | None]


EXIT_HELP = (
    "Exit status: 0 measured, and written and uploaded as asked; 1 the run failed, or the "
    "report could not be written or uploaded (a copy is kept and its path printed: send it "
    "later with `gpu-advisor upload FILE --server URL`); 2 bad arguments, refused before "
    "anything is measured: an unknown profile or --gpu slug, an absent device, --gpu naming "
    "a GPU while torch sees none (a CPU run), an --upload URL without http:// or https://, "
    "an --output that cannot be written. With --json, stdout is one JSON object: the "
    'report\'s summary and where it was stored, or the API\'s {"error": {"code", "message", '
    '"details"}}, details always there (the field and flag at fault, where one is).'
)


def _rate(v: float | None, unit: str) -> str:
    """A figure in the unit that fits its size, as the report page shows it: a CPU's
    0.000483 TFLOPS is 483 MFLOPS, 0.0381 TFLOPS is 38.1 GFLOPS."""
    if v is None:
        return "—"
    if unit == "TFLOPS" and v != 0:
        for prefix, scale in (("T", 1.0), ("G", 1e-3), ("M", 1e-6)):
            if abs(v) >= scale:
                return f"{_fmt(v / scale)} {prefix}FLOPS"
        return f"{_fmt(v * 1e12)} FLOPS"
    return f"{_fmt(v)} {unit}"


def _fmt(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


# the mark on a figure whose timings spread over 10 % (summary_table's caption says so)
_NOISY = " [yellow]~[/]"


def _fig_cells(fig: Figure | None) -> tuple[str, str, str]:
    if fig is None:
        return "—", "—", "—"
    peak = _rate(fig.peak, fig.unit) if fig.peak is not None else "—"
    if fig.status == "rejected":
        return f"[red]rejected ({_rate(fig.rejected_value, fig.unit)})[/]", peak, "—"
    if not fig.ok:
        return f"[dim]{fig.status.replace('_', ' ')}[/]", peak, "—"
    noisy = _NOISY if fig.noisy else ""
    measured = f"{_rate(fig.value, fig.unit)}{noisy}"
    eff = f"{fig.efficiency:.0%}" if fig.efficiency is not None else "—"
    return measured, peak, eff


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
            _rate(best.tflops.peak, "TFLOPS") if best and best.tflops.peak else "—",
            f"{eff:.0%}" if eff is not None else "—",
            f"{_b90_words(c.b90)}; {_rate(c.best_tflops, 'TFLOPS')}",
        ))  # fmt: skip
    pm = report.peak_memory
    if pm is not None and pm.per_sample_bytes is not None:
        fixed, per = (pm.fixed_bytes or 0) / 2**20, pm.per_sample_bytes / 2**20
        measured = f"{fixed:.1f} MiB +\n{per:.2f} MiB/sample"
        rows.append(("peak memory (train step)", measured, "—", "—", pm.workload))
    return rows


def _b90_words(b90: int | None) -> str:
    """A batch curve's B90 (the smallest batch within 90 % of its best throughput) in words: a
    lab admin reading "B90=1" in a CPU run's table had no way to tell what it meant."""
    if b90 is None:
        return "no batch within 90 % of best"
    return f"90 % of best from batch {b90}"


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
                _rate(best.rate, unit),
                _rate(best.peak, unit) if best.peak is not None else "—",
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
    rows = [row for section in _SECTIONS for row in section(report)]
    table = rows_table(title, rows, width)
    if any(_NOISY in row[1] for row in rows):
        # the mark had no key: a quick CPU run showed "37.2 GFLOPS ~" with nothing saying why
        table.caption = "~ timings spread over 10 %: rerun with other programs closed"
    return table


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


class UploadError(RuntimeError):
    """An upload that failed, with the HTTP status where the server answered (None: no
    answer) so the caller's advice fits: a refused report is not fixed by another URL."""

    def __init__(self, message: str, status: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field  # the report field a server's 4xx names (its details.field)


@dataclass(frozen=True)
class Stored:
    """Where the server keeps an uploaded report; ``again``: it already had this report.
    ``id`` as the server answered it (the API's integer: --json had printed "1" where
    POST /api/v1/device-reports answers 1)."""

    id: int | str
    url: str
    again: bool = False


def _say_error(console: Console, message: str) -> None:
    """An error line. The message carries what the user typed and the machine's own names
    (paths, URLs, devices): printed as text, never as markup or emoji codes ('[/]' in a path
    had crashed the line; '--device cuda:abc' read 'cuda🔤')."""
    console.print("[red]error:[/]", escape(message), emoji=False)


def _say_warning(console: Console, message: str) -> None:
    console.print("[yellow]warning:[/]", escape(message), emoji=False)


def report_body(report: BenchReport) -> bytes:
    return json.dumps(report.model_dump(mode="json")).encode()


def idempotency_key(body: bytes) -> str:
    """The Idempotency-Key of an upload, from the report's content: a retried or repeated
    upload of the same report is stored once (it had counted as another machine)."""
    return "bench-" + hashlib.sha256(body).hexdigest()


def upload_url_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be where reports are posted (checked before anything is
    measured), or None. It is parsed as the upload will use it: urllib's split (which refuses
    an unclosed '[' or a port out of range), then httpx's URL of the upload path; it needs
    http:// or https://, a host name or IP address, and no ?query or #fragment (the upload
    path is appended to it). 'http://[/]' had passed on httpx's lenient host ('%5B'), and
    the whole benchmark ran before the upload failed."""
    reason = base_url_problem(base_url)
    if reason is None:
        return None
    # without a scheme, the example is what was typed with one ('127.0.0.1:8104')
    typed = base_url.strip("/") if "://" not in base_url else ""
    return (
        f"--upload wants the server's base URL with http:// or https:// and a host, like "
        f"http://{typed or '127.0.0.1:8000'}: {reason} (got {base_url!r})"
    )


def output_problem(output: Path) -> str | None:
    """Why the report cannot be written to ``output`` (checked before anything is measured,
    by making its folder and a scratch file in it), or None."""
    if output.is_dir():
        return f"--output {output} is a folder: name a file, like {output / 'report.json'}"
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=output.parent, prefix=".gpu-advisor-"):
            pass
    except OSError as exc:
        return f"--output {output} cannot be written: {exc.strerror or exc}"
    return None


def upload_report(
    report: BenchReport, base_url: str, token: str | None, timeout_s: float = 60.0
) -> int | str:
    """POST the report; return the stored id. Raises UploadError with a clear message."""
    return upload(report, base_url, token, timeout_s).id


def upload(
    report: BenchReport,
    base_url: str,
    token: str | None,
    timeout_s: float = 60.0,
    flag: str = "--upload",
) -> Stored:
    """POST the report with an Idempotency-Key from its content; where it is stored.
    ``flag`` is the option that gave ``base_url``, which a wrong-address hint names."""
    url = base_url.rstrip("/") + UPLOAD_PATH
    body = report_body(report)
    headers = {"Content-Type": "application/json", "Idempotency-Key": idempotency_key(body)}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        resp = httpx.post(url, content=body, headers=headers, timeout=timeout_s)
    except httpx.ConnectError as exc:
        raise UploadError(f"cannot connect to {base_url}: {exc or 'connection refused'}") from exc
    except httpx.TimeoutException as exc:
        raise UploadError(f"upload to {url} timed out after {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise UploadError(f"upload to {url} failed: {exc}") from exc
    if resp.status_code >= 400:
        raise UploadError(
            f"server rejected the report: HTTP {resp.status_code}"
            f"{_rejection_hint(resp.status_code, base_url, url, flag)}: {_detail(resp)}",
            resp.status_code,
            _field(resp),
        )
    try:
        answer = resp.json()
    except ValueError as exc:
        raise UploadError(f"server answered HTTP {resp.status_code} without JSON") from exc
    rid = answer.get("id") if isinstance(answer, dict) else None
    if not isinstance(rid, (int, str)) or isinstance(rid, bool):
        raise UploadError(f"server answered HTTP {resp.status_code} without an 'id' field")
    again = resp.headers.get("Idempotent-Replayed") == "true" or bool(
        isinstance(answer, dict) and answer.get("duplicate")
    )
    return Stored(rid, report_page_url(base_url, str(rid)), again)


def _origin(base_url: str) -> str:
    try:
        u = httpx.URL(base_url)
        if u.scheme and u.host:
            return f"{u.scheme}://{u.netloc.decode()}"
    except Exception:
        pass
    return base_url.rstrip("/")


def report_page_url(base_url: str, rid: str) -> str:
    """Where a stored report is shown: the id alone left the reader to guess the page."""
    return f"{base_url.rstrip('/')}/device/reports/{rid}"


def _rejection_hint(status: int, base_url: str, url: str, flag: str) -> str:
    if status in (401, 403):
        return " (check --token)"
    if status in (404, 405):
        # a page URL (…/device) answers 404 with the site's HTML: say what was posted where
        origin = _origin(base_url)
        return (
            # `upload` takes the address as --server: naming --upload there sent users to
            # look for a flag the command does not have
            f" (nothing takes reports at {url}: {flag} wants the server's base URL, "
            f"like {origin}, and the report is posted to that + {UPLOAD_PATH})"
        )
    return ""


def _field(resp: httpx.Response) -> str | None:
    """The field a refusal in the API's error shape names, else None."""
    try:
        found = resp.json()["error"]["details"]["field"]
    except (ValueError, LookupError, TypeError):
        return None
    return found if isinstance(found, str) else None


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
    """Save a report that could not be written or uploaded, so the measurement is not
    lost: in the working folder, else the temporary one."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    name = f"gpu-advisor-report-{stamp}.json"
    for folder in (Path.cwd(), Path(tempfile.gettempdir())):
        path = folder / name
        try:
            path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
        except OSError as exc:
            _say_error(err, f"cannot keep the report in {path}: {exc}")
            continue
        return path
    return None


def _after_failed_upload(exc: UploadError, kept: Path, upload: str, token: str | None) -> str:
    """What to do with the kept report after a failed upload: send it again with
    ``gpu-advisor upload`` where another try can work; after a refusal (422, 413) the
    server said what is wrong with the report, and no other URL or retry helps."""
    if exc.status in (400, 413, 422):
        return (
            f"the report is saved in {kept}; the server refused its content (above), so "
            "sending it again will not help"
        )
    again = f"gpu-advisor upload {kept} --server {_origin(upload)}"
    if exc.status in (401, 403):
        again += " --token TOKEN"
    elif exc.status in (404, 405):
        again = again.replace(_origin(upload), "BASE_URL")
    elif token:
        again += " --token TOKEN"
    return f"the report is saved in {kept}: send it later with `{again}`"


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
            _say_error(err, f"unknown GPU {gpu!r}: not in the catalog")
            return 2
        return match, "manual"
    if peaks_lookup is None:
        return None, "name"
    try:
        return peaks_lookup(info_name, memory_gb), "name"
    except Exception as exc:
        _say_warning(err, f"catalog lookup failed: {exc}")
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
        _say_error(err, f"benchmark failed: {type(exc).__name__}: {exc}")
    finally:
        sink.close()
    return None


def _tip_bullet(tip: str) -> Table:
    """A tip as a bullet whose wrapped lines hang under its text (at 80 columns they had
    started at column 0, as loose lines), printed as text: a tip quotes code."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row("  •", Text(tip))
    return grid


def _print_report(con: Console, report: BenchReport) -> None:
    con.print(summary_table(report, con.width))
    if report.tips:
        con.print("[bold]Tips[/]")
        for tip in report.tips:
            con.print(_tip_bullet(tip))
    for w in report.warnings:
        _say_warning(con, w)


def _deliver(
    con: Console, err: Console, report: BenchReport, output: Path | None, upload_to: str | None,
    token: str | None,
) -> tuple[int, dict[str, Any]]:  # fmt: skip
    """Write the report file and upload it, as asked; the exit code and what happened (for
    --json). A file that cannot be written does not stop the upload, and a copy is kept."""
    code = 0
    done: dict[str, Any] = {"output": None, "kept": None, "upload": None}
    kept: Path | None = None
    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(report.model_dump_json(indent=2), encoding="utf-8")
        except OSError as exc:
            _say_error(err, f"cannot write {output}: {exc}")
            code = 1
            kept = _keep(report, err)
            if kept is not None:
                err.print(f"the report is kept in {kept} instead")
        else:
            con.print(f"report written to {output}")
            done["output"] = str(output)
    if upload_to:
        try:
            stored = upload(report, upload_to, token)
        except UploadError as exc:
            _say_error(err, str(exc))
            done["upload"] = {"error": str(exc), "status": exc.status, "field": exc.field}
            if kept is None:
                kept = Path(done["output"]) if done["output"] else _keep(report, err)
            if kept is not None:
                err.print(_after_failed_upload(exc, kept, upload_to, token))
            code = 1
        else:
            said = "already stored as" if stored.again else "stored as"
            # soft_wrap: the page's URL stays one word to copy (Rich broke it at 80 columns)
            con.print(
                f"uploaded: {said} report id {stored.id}, at {stored.url}",
                soft_wrap=True,
                markup=False,
            )
            done["upload"] = {"id": stored.id, "url": stored.url, "duplicate": stored.again}
    done["kept"] = str(kept) if kept is not None else None
    return code, done


def report_summary(report: BenchReport) -> dict[str, Any]:
    """The report in a few fields, as --json prints it: what was measured where, against
    which catalog GPU, and what it suggests."""
    env = report.environment
    match = report.catalog_match
    return {
        "device_name": env.device_name,
        "backend": env.backend,
        "profile": report.profile,
        "duration_s": round(report.duration_s, 2),
        "catalog_match": match.model_dump(mode="json") if match else None,
        "measured": report.summary_measured(),
        "efficiencies": report.summary_efficiencies(),
        "tips": list(report.tips),
        "warnings": list(report.warnings),
    }


def _error_json(
    code: str, message: str, flag: str | None = None, extra: dict[str, Any] | None = None
) -> str:
    """The API's one error shape: `details` always there, naming the `field` (the option's
    name, as recommend --json and the API name theirs) and the `flag` typed."""
    details: dict[str, Any] = dict(extra or {})
    if flag:
        details |= {"field": flag.lstrip("-").replace("-", "_").lower(), "flag": flag}
    return json.dumps({"error": {"code": code, "message": message, "details": details}})


class _Refusal(Exception):
    def __init__(self, message: str, flag: str | None = None) -> None:
        super().__init__(message)
        self.message, self.flag = message, flag


def _no_gpu_device(device: str) -> str | None:
    """Why ``device`` (cuda[:n]) cannot exist on this Linux host, without importing torch
    (about 14 s on a loaded CPU): neither NVIDIA's (/dev/nvidiactl), AMD's (/dev/kfd) nor
    WSL's (/dev/dxg) device node is there. None where it may exist or cannot be told."""
    if not device.startswith("cuda") or not sys.platform.startswith("linux"):
        return None
    nodes = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")
    if any(os.path.exists(n) for n in nodes):
        return None
    return (
        f"no CUDA or ROCm device for --device {device}: this machine has no GPU device node "
        "(/dev/nvidiactl, /dev/kfd or /dev/dxg); use --device cpu or auto"
    )


def _check_arguments(profile: str, device: str, output: Path | None, upload_to: str | None) -> None:
    """What can be refused before torch is imported and anything measured."""
    from app.bench.runner import PROFILES

    if profile not in PROFILES:
        raise _Refusal(f"unknown profile {profile!r}: use {' or '.join(PROFILES)}", "--profile")
    if upload_to is not None:
        problem = upload_url_problem(upload_to)
        if problem:
            raise _Refusal(problem, "--upload")
    if output is not None:
        problem = output_problem(output)
        if problem:
            raise _Refusal(problem, "--output")
    problem = _no_gpu_device(device)
    if problem:
        raise _Refusal(problem, "--device")


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
    as_json: bool = False,
) -> int:
    """Run the benchmarks and report. See ``EXIT_HELP`` for exit codes.

    ``peaks_lookup(device_name, memory_gb)`` returns ``(slug, name, peaks)`` for the catalog
    GPU matching the device, or None. With ``gpu`` (a catalog slug) it is called as
    ``peaks_lookup(gpu, None)`` and the match is recorded as ``manual``. ``as_json``: the
    summary table, progress and messages go to stderr, and stdout is one JSON object.
    """
    if console is not None:
        con, err = console, console
    else:
        con, err = Console(stderr=as_json, emoji=False), Console(stderr=True, emoji=False)
    code, out = _bench(
        con, err, profile, device, output, upload, token, gpu, peaks_lookup, progress_jsonl
    )
    if as_json:
        _emit(console, out)
    return code


def _bench(
    con: Console, err: Console, profile: str, device: str, output: Path | None,
    upload_to: str | None, token: str | None, gpu: str | None,
    peaks_lookup: PeaksLookup | None, progress_jsonl: Path | None,
) -> tuple[int, str]:  # fmt: skip
    """bench_command's work: the exit code and the --json text."""
    from app.bench.device import probe
    from app.bench.tips import generate_tips

    try:
        _check_arguments(profile, device, output, upload_to)
    except _Refusal as exc:
        _say_error(err, exc.message)
        return 2, _error_json("invalid_input", exc.message, exc.flag)
    if upload_to is not None and (down := unreachable(upload_to)):
        # said before the minutes of measuring, not refused: the server may be up by the end,
        # and a failed upload keeps the report to send later
        err.print(
            f"warning: {down}; measuring anyway (a report the upload cannot deliver is kept, "
            "with the command that sends it later)",
            soft_wrap=True,
            markup=False,
        )
    try:
        info = probe(device)
    except ValueError as exc:
        _say_error(err, str(exc))
        return 2, _error_json("invalid_input", str(exc), "--device")
    except Exception as exc:
        _say_error(err, f"cannot open device {device!r}: {exc}")
        return 2, _error_json("invalid_input", f"cannot open device {device!r}: {exc}", "--device")
    if gpu and info.backend == "cpu":
        # a failed CUDA install on a rented node had uploaded a CPU run as the GPU named
        message = (
            f"--gpu {gpu} names a GPU, but torch sees no GPU here (device {info.device}, "
            f"{info.name}): this run would measure the CPU. Install a CUDA or ROCm build of "
            "torch (torch.cuda.is_available() must be True), or drop --gpu to measure the CPU"
        )
        _say_error(err, message)
        return 2, _error_json("invalid_input", message, "--gpu")

    found = _catalog_match(info.name, info.memory_gb, gpu, peaks_lookup, err)
    if isinstance(found, int):
        return found, _error_json("invalid_input", f"unknown GPU {gpu!r}", "--gpu")
    match, matched_by = found
    con.print(device_line(info, device, match, matched_by))

    peaks = match[2] if match else None
    report = _run_with_progress(con, err, info.device, profile, peaks, progress_jsonl)
    if report is None:
        return 1, _error_json("benchmark_failed", "the benchmark run failed (see stderr)")
    if match:
        report = apply_peaks(report, match[2], match[0], match[1], matched_by)
        report.tips = generate_tips(report)
    _print_report(con, report)
    code, done = _deliver(con, err, report, output, upload_to, token)
    return code, json.dumps({"report": report_summary(report), **done}, indent=2)


def device_line(
    info: DeviceInfo,
    device: str,
    match: tuple[str, str, dict[str, float]] | None,
    matched_by: str | None,
) -> str:
    """The first line a run prints: what it measures. On a machine whose torch sees no GPU
    it says so before the minute of measuring (it had said only "no catalog match for 'AMD
    EPYC'", the CPU's absence from a GPU catalog, and the missing GPU came last of the tips)."""
    if match:
        return f"catalog match: {match[1]} ({match[0]}, by {matched_by})"
    if info.backend == "cpu":
        why = (
            "as --device cpu asks"
            if device == "cpu"
            else "no GPU: torch sees no CUDA, ROCm, MPS or XPU device"
        )
        return (
            f"measuring the CPU ({info.name}), {why}; the catalog lists GPUs, so no "
            "efficiencies are computed"
        )
    return f"no catalog match for {info.name!r}: efficiencies will not be computed"


def _why_not_a_report(exc: ValueError) -> str:
    """Each field a file lacks or gets wrong, by its path in the report ("profile: Field
    required; environment: Field required"), at most five: the message had been the first
    lines of pydantic's text ("2 validation errors for BenchReport profile Field required"),
    which named one field of two and cut the second."""
    if not isinstance(exc, ValidationError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return every_problem(exc.errors(include_url=False, include_input=False))


def upload_command(
    path: Path, server: str, token: str | None, *, console: Console | None = None,
    as_json: bool = False,
) -> int:  # fmt: skip
    """`gpu-advisor upload FILE --server URL`: send a report `bench --output` saved (or a
    failed upload kept). Exit 0 stored (or already stored), 1 the upload failed, 2 a bad
    file or URL."""
    con = console or Console(stderr=as_json, emoji=False)
    err = console or Console(stderr=True, emoji=False)

    def refuse(message: str, flag: str) -> int:
        _say_error(err, message)
        if as_json:
            _emit(console, _error_json("invalid_input", message, flag))
        return 2

    problem = upload_url_problem(server)
    if problem:
        return refuse(problem.replace("--upload", "--server"), "--server")
    try:
        report = BenchReport.model_validate_json(path.read_bytes())
    except OSError as exc:
        return refuse(f"cannot read {path}: {exc.strerror or exc}", "FILE")
    except ValueError as exc:
        return refuse(f"{path} is not a gpu-advisor bench report: {_why_not_a_report(exc)}", "FILE")
    try:
        stored = upload(report, server, token, flag="--server")
    except UploadError as exc:
        _say_error(err, str(exc))
        if as_json:
            named = {"status": exc.status, "field": exc.field}
            _emit(console, _error_json("upload_failed", str(exc), extra=named))
        return 1
    said = "already stored as" if stored.again else "stored as"
    con.print(
        f"uploaded {path}: {said} report id {stored.id}, at {stored.url}",
        soft_wrap=True,
        markup=False,
    )
    if as_json:
        _emit(console, json.dumps({"id": stored.id, "url": stored.url,
                                   "duplicate": stored.again}))  # fmt: skip
    return 0


def _emit(console: Console | None, text: str) -> None:
    """One JSON document on stdout (plain print: a console would wrap it)."""
    if console is None:
        print(text)
    else:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
