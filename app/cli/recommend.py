"""`gpu-advisor recommend`: the ranking as a table, with the API's options."""

from __future__ import annotations

import inspect
import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from rich.console import Console
from rich.markup import escape
from rich.table import Table

# typer 0.29 runs on a click of its own (typer._click), whose exceptions plain click's except
# clauses do not catch; earlier releases run on click itself
try:
    from typer._click.core import Context, Parameter
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - typer < its bundled click
    from click import Context, Parameter, UsageError  # type: ignore[assignment]
from typer.core import TyperCommand

from app.config import Settings
from app.domain.evaluate import hours_text
from app.domain.figures import limit_duration
from app.domain.serving import weights_name
from app.domain.units import gib, vram
from app.errors import AppError, error_body, error_text, field_path
from app.numbers import field_error, parse_hours, parse_int, parse_number, sig_figs
from app.recommend.schemas import ConstraintsIn, RecommendationRequest, WorkloadIn
from app.recommend.whatif import best_config, kinds_of_gpu, price_note
from app.vocab import PEFT_LABELS, runtime_name
from app.vocab import choices as choices_text


def _fmt(value: float | None, digits: int | None = None, unit: str = "") -> str:
    """A figure as the pages write it (``digits`` None: three significant figures, whole from
    1,000, numbers.sig_figs): a throughput had read 0.802 beside 1.8 for 1.83 (one decimal
    above one, three figures below). ``digits``: that many decimals (money, milliseconds)."""
    if value is None:
        return "—"
    if digits is None:
        return f"{sig_figs(value)}{unit}"
    if abs(value) >= 1000:
        return f"{value:,.0f}{unit}"
    return f"{value:.{digits}f}{unit}"


def _job_basis(r: Any) -> str:
    """ " rent" or " buy": which of the row's prices its job cost is (cost.job_cost_usd)."""
    job, rent, buy = r.cost.job_cost_usd, r.cost.rent, r.cost.buy
    if job is None:
        return ""
    if rent is not None and rent.job_usd is not None and abs(rent.job_usd - job) < 0.005:
        return " rent"
    if buy is not None and buy.job_usd is not None and abs(buy.job_usd - job) < 0.005:
        return " buy"
    return ""


def _dollars(value: float | None) -> str:
    """A job's cost as the verdict says it: cents below $100 ($3.44 and $3.66 had read "3"
    and "4", hiding the order "cheapest" ranks by), a tenth of a cent below $1 ($0.031 against
    $0.029), whole dollars from $100 ($123, $4,560)."""
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"


# ---------------------------------------------------------------- options from the schema

# A pasted config.json is given as a file on the command line.
_FILE_FIELDS: dict[tuple[str, ...], str] = {
    ("workload", "model", "hf_config"): "--hf-config",
}

# Flags kept from earlier versions of the CLI (the schema name is the default).
_FLAG_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("constraints", "vendors"): ("--vendor",),
    ("constraints", "segments"): ("--segment",),
    ("workload", "gradient_checkpointing"): ("--checkpointing/--no-checkpointing",),
    ("device_report_id",): ("--device-report",),
}


@dataclass(frozen=True)
class CliOption:
    """One leaf field of the request as a command-line option."""

    path: tuple[str, ...]  # where the value goes in the request body
    name: str  # the Python parameter name (unique)
    kind: type  # str, int, float or bool
    multiple: bool
    flags: tuple[str, ...]
    help: str


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if get_origin(annotation) in (Union, UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _scalar(annotation: Any) -> tuple[type, tuple[str, ...]] | None:
    """The Python type a CLI value is parsed as, and the allowed values of a Literal (one
    read in any case, catalog.schemas.VendorIn, names its values as the Literal does)."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is Literal:
        values = tuple(str(v) for v in get_args(annotation))
        return str, values
    if annotation in (bool, int, float, str):
        return annotation, ()
    if get_origin(annotation) in (Union, UnionType):  # e.g. str | int: pass the text on
        return str, ()
    return None


def _help(info: FieldInfo, choices: tuple[str, ...]) -> str:
    bounds = {a: getattr(m, a) for m in info.metadata for a in ("ge", "gt", "le", "lt")
              if getattr(m, a, None) is not None}  # fmt: skip
    parts = [info.description] if info.description else []
    if choices:
        parts.append(choices_text(choices))
    if bounds:
        low = bounds.get("gt", bounds.get("ge"))
        high = bounds.get("lt", bounds.get("le"))
        if low is not None and high is not None:
            lo = "(" if "gt" in bounds else "["
            hi = ")" if "lt" in bounds else "]"
            parts.append(f"{lo}{_bound(low)}, {_bound(high)}{hi}")
        elif low is not None:
            parts.append(f"{'>' if 'gt' in bounds else '≥'} {_bound(low)}")
        elif high is not None:
            parts.append(f"{'<' if 'lt' in bounds else '≤'} {_bound(high)}")
    return " ".join(parts)


def _bound(v: float) -> str:
    """A range's end as people write it: 2,097,152 (not 2.09715e+06); 1e+13 stays short."""
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e7 else f"{v:g}"


def request_options(
    model: type[BaseModel] = RecommendationRequest, prefix: tuple[str, ...] = ()
) -> list[CliOption]:
    """Every leaf field of the request model, depth first, as options. Nested models are
    flattened; a leaf name already taken gets its parent's name in front."""
    out: list[CliOption] = []
    _walk(model, prefix, out, set())
    return out


def _walk(model: type[BaseModel], prefix: tuple[str, ...], out: list[CliOption],
          taken: set[str]) -> None:  # fmt: skip
    for field_name, info in model.model_fields.items():
        path = (*prefix, field_name)
        annotation = _unwrap(info.annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _walk(annotation, path, out, taken)
            continue
        if path in _FILE_FIELDS:
            taken.add(field_name)
            # the field's own description starts "A Hugging Face config.json: ...": say
            # only what the option adds (it takes a path), not the file's name twice
            out.append(CliOption(path, field_name, str, False, (_FILE_FIELDS[path],),
                                 "Path of the file. " + (info.description or "")))  # fmt: skip
            continue
        multiple = get_origin(annotation) is list
        scalar = _scalar(get_args(annotation)[0] if multiple else annotation)
        if scalar is None:
            continue  # not expressible as a flag: only through --request
        kind, choices = scalar
        name = field_name if field_name not in taken else "_".join(path[-2:])
        taken.add(name)
        default_flag = "--" + name.replace("_", "-")
        if kind is bool:
            default_flag = f"{default_flag}/--no-{name.replace('_', '-')}"
        flags = _FLAG_NAMES.get(path, (default_flag,))
        out.append(CliOption(path, name, kind, multiple, flags, _help(info, choices)))


OPTIONS = request_options()


def build_request(options: dict[str, Any], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request body: ``base`` (a --request file) with every given option set on top."""
    request: dict[str, Any] = json.loads(json.dumps(base or {}))  # a deep copy
    for opt in OPTIONS:
        value: Any = options.get(opt.name)
        if value is None or (opt.multiple and not value):
            continue
        node = request
        for key in opt.path[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        if opt.path in _FILE_FIELDS:
            value = read_json_file(str(value), _FILE_FIELDS[opt.path])
        elif opt.kind in (int, float) and isinstance(value, str):
            value = _number(opt, value)
        node[opt.path[-1]] = list(value) if opt.multiple else value
    request.setdefault("workload", {})
    return request


class OptionError(ValueError):
    """An option's value the CLI cannot read (a file, a number), named by its flag."""

    def __init__(self, flag: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.flag = flag
        self.field = field


# The request's fields written as a time (schemas' ui kind "hours": "36h", "2 days"), read
# as the form and the JSON API read them
HOURS_FIELDS = frozenset(
    name
    for model in (ConstraintsIn, WorkloadIn)
    for name, f in model.model_fields.items()
    if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("kind") == "hours"
)


def _number(opt: CliOption, text: str) -> float | int:
    """A number as the form reads it (8.03B, 15k, $800, 1,281,167): the help's own examples,
    which the CLI's float parsing refused."""
    try:
        if opt.path[-1] in HOURS_FIELDS:
            return parse_hours(text)  # --max-hours 36h, "2 days", as the form reads it
        return parse_int(text) if opt.kind is int else parse_number(text)
    except ValueError as exc:
        said = field_error(exc, ".".join(opt.path[-2:]) if "serving" in opt.path else opt.path[-1])
        raise OptionError(opt.flags[0], str(said), ".".join(opt.path)) from exc


def read_json_file(path: str, flag: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OptionError(flag, f"cannot read a JSON object from {path} ({exc})") from exc
    if not isinstance(data, dict):
        raise OptionError(flag, f"{path} is not a JSON object")
    return data


def read_request_file(path: str) -> dict[str, Any]:
    """A JSON request body from a file, or from stdin for ``-``."""
    where = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where} is not text (UTF-8), so not a JSON request") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # "Expecting value: line 1 column 1 (char 0)" alone had not said the file is not JSON
        raise ValueError(
            f"{where} is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from exc
    if not isinstance(data, dict):
        raise ValueError(f"{where} holds JSON but not an object: the request must be one")
    return data


# An error names the flag a CLI user typed, and the request field (as --request and the API
# name it): "--batch-size (workload.batch_size)".
_FLAG_OF = {".".join(o.path): o.flags[0].split("/")[0] for o in OPTIONS}


def _flag_of(path: str) -> str | None:
    """The flag of a request field; a list's item ("constraints.vendors.0", a repeated
    option's first value) is its list's flag (--vendor)."""
    return _FLAG_OF.get(".".join(p for p in path.split(".") if not p.isdigit()))


def _where(path: str) -> str:
    flag = _flag_of(path)
    return f"{flag} ({path})" if flag else path


# A leaf name one option alone carries ("max_hours" -> --max-hours), for the answer's words
_LEAVES = [o.path[-1] for o in OPTIONS]
_FLAG_OF_LEAF = {
    o.path[-1]: _FLAG_OF[".".join(o.path)] for o in OPTIONS if _LEAVES.count(o.path[-1]) == 1
}
_FIELD_WORD = re.compile(
    r"\b((?:(?:workload|constraints|serving)\.)*)([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b"
)


def as_flags(text: str) -> str:
    """An answer's words as the CLI's: the request's field names, which the API's text uses,
    become the flags a CLI user types ("give dataset_samples" -> "give --dataset-samples"),
    as the page turns them into its form's labels."""

    def swap(m: re.Match[str]) -> str:
        named = m.group(1) + m.group(2)
        if m.group(1):  # a section named: that field, or none ("serving.batch_size")
            flag = _FLAG_OF.get(named) or _FLAG_OF.get("workload." + named)
        else:
            flag = _FLAG_OF_LEAF.get(named)
        return flag or m.group(0)

    return _FIELD_WORD.sub(swap, text) if "_" in text else text


# Exit statuses (the command's --help says them): scripts tell an answer with rows from a
# question nothing can run without parsing the table.
EXIT_INVALID = 2  # an option or request the API would refuse (422); click's usage errors too
EXIT_NO_FIT = 3  # an answer, but no configuration fits the question: counts.ranked is 0

EXIT_CODES_HELP = (
    "Exit status: 0 an answer with ranked rows; 2 an option or request the API refuses "
    '(with --json, the API\'s error object, {"error": {"code", "message", '
    '"details"}}, on stdout, its details naming the field and the flag); 3 no '
    "configuration fits the question (the answer is still printed, as JSON with --json, "
    "counts.ranked 0, and says what would change it); 1 anything else."
)


# What --device-report reads: `recommend` answers from this machine's database, where a
# report uploaded to a server (`bench --upload`) is not.
LOCAL_REPORTS = (
    "`gpu-advisor recommend` reads the local database (GPU_ADVISOR_DATABASE_URL), not the "
    "server a report was uploaded to; ask that server instead (its page, or POST "
    "/api/v1/recommendations with device_report_id), or store the report here with "
    "`gpu-advisor bench --output FILE` and `gpu-advisor upload FILE --server` a local "
    "`gpu-advisor serve`"
)


def safe_database_url(url: str) -> str:
    """The database URL with any password hidden, as `serve` prints it."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "the configured database"


def refusal_line(field: str | None, message: str) -> str:
    """The stderr line of a refusal the service raised: the flag and field, then the message
    in the CLI's words (the flags its field names are, as an answer's warnings say them:
    "extra_gpus applies to task 'inference' only" read as API text after --extra-gpus)."""
    where = _where(field) if field else "error"
    return f"[red]{where}[/red]: {escape(as_flags(message))}"


def error_json(code: str, message: str, details: dict[str, Any]) -> str:
    """The API's one error shape, as --json prints it (on stdout, where a script reads the
    answer)."""
    return json.dumps(error_body(code, message, details))


def _refuse(as_json: bool, console: Console, err: Console, body: str, lines: list[str]) -> int:
    if as_json:
        console.print(body, markup=False, highlight=False, soft_wrap=True)
    else:
        for line in lines:
            err.print(line, emoji=False)
    return EXIT_INVALID


def _validation_body(exc: ValidationError) -> str:
    """As the API answers a request its schema refuses (app/main.py, validation_error)."""
    errors = [{"field": field_path(e["loc"], "request"), "message": error_text(e)}
              for e in exc.errors()]  # fmt: skip
    first = errors[0]
    details: dict[str, Any] = {"field": first["field"], "errors": errors}
    flag = _flag_of(first["field"])
    if flag:
        details["flag"] = flag
    return error_json("invalid_input", f"{first['field']}: {first['message']}", details)


def run(options: dict[str, Any], as_json: bool, console: Console, err: Console,
        request_file: str | None = None) -> int:  # fmt: skip
    from app.db import make_engine, make_session_factory, session_scope
    from app.main import prepare_database
    from app.recommend.orchestrate import recommend_for
    from app.recommend.presets import DATA_DIR, load_presets

    try:
        base = read_request_file(request_file) if request_file else None
    except (OSError, ValueError) as exc:
        body = error_json("invalid_input", f"body: {exc}", {"field": "body", "flag": "--request"})
        return _refuse(as_json, console, err, body, [f"[red]--request[/red]: {escape(str(exc))}"])
    try:
        request = RecommendationRequest.model_validate(build_request(options, base))
    except OptionError as exc:
        field = exc.field or exc.flag
        body = error_json("invalid_input", f"{field}: {exc}", {"field": field, "flag": exc.flag})
        return _refuse(as_json, console, err, body, [f"[red]{exc.flag}[/red]: {escape(str(exc))}"])
    except ValidationError as exc:
        lines = [f"[red]{_where(field_path(e['loc'], 'request'))}[/red]: {escape(error_text(e))}"
                 for e in exc.errors()]  # fmt: skip
        return _refuse(as_json, console, err, _validation_body(exc), lines)
    settings = Settings()
    prepare_database(settings)
    engine = make_engine(settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            response = recommend_for(session, settings, request)
    except AppError as exc:
        details = dict(exc.details)
        flag = _flag_of(exc.field) if exc.field else None
        if flag:
            details["flag"] = flag
        message = exc.message
        if exc.field == "device_report_id":
            # a report uploaded to a server is not in this machine's database
            database = safe_database_url(settings.database_url)
            details["database"] = database
            message = f"{message} in {database}: {LOCAL_REPORTS}"
        lines = [refusal_line(exc.field, message)]
        if exc.field == "workload.preset":  # the CLI has no other way to list them
            lines.append("known presets: " + ", ".join(sorted(load_presets(DATA_DIR))))
        return _refuse(as_json, console, err, error_json(exc.code, message, details), lines)
    finally:
        engine.dispose()
    if as_json:
        console.print_json(json.dumps(response.model_dump(mode="json")))
    else:
        render(response, console)
    return 0 if response.recommendations else EXIT_NO_FIT


def _verdict(response: Any, console: Console) -> None:
    """The answer in one sentence (``summary``), first, as the page and the API give it."""
    said = getattr(response, "summary", None)
    if said is not None:
        console.print(f"[bold]Verdict:[/bold] {escape(as_flags(said.sentence))}")


def _bullet(console: Console, text: str) -> None:
    """A bullet whose wrapped lines hang under its text, not at column 0 (a long verdict at
    80 columns had read as loose lines)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row("  •", escape(text))
    console.print(grid)


def _nearest(response: Any, console: Console) -> None:
    """An empty answer's nearest configurations, as the page lists them under its banner."""
    empty = getattr(response, "empty", None)
    if empty is None or not empty.nearest:
        return
    console.print("[bold]These changes would let GPUs run it:[/bold]")
    for v in empty.nearest:
        _bullet(console, f"{as_flags(v.change)}: {kinds_of_gpu(v.can_run)}, best "
                + best_config(v, response.acquisition))  # fmt: skip


def render_serving(response: Any, console: Console) -> None:
    summary = response.serving
    console.print(f"[bold]{response.workload.preset or 'model'}[/bold] serving: {summary.load}")
    _verdict(response, console)
    # the API's field names in these words become flags, as the verdict's do: "raise
    # constraints.max_gpus from 2 to 4", "set ttft_ms_target" had been printed as the API says them
    message = as_flags(summary.message)
    console.print(("[green]" if summary.met else "[red]") + escape(message) + "[/]")
    for tip in summary.relax:
        _bullet(console, as_flags(tip))
    _nearest(response, console)
    rows = response.recommendations or summary.closest
    if not rows:
        # nothing to tabulate: the changes above say what would give rows
        for warning in response.warnings:
            console.print(f"[yellow]warning:[/yellow] {escape(as_flags(warning))}")
        return
    if rows[0].serving is not None and rows[0].serving.kind == "encoder":
        _render_encoder_rows(response, rows, console)
        return
    # $ per 1M output tokens as people compare it with API price lists (the whole hour ÷ the
    # output tokens it produces) first; the split by phase after it, as the pages show them
    # under acquisition 'either' each row is priced, and ranked, on its cheaper basis: named
    either = response.acquisition == "either"
    sv = [r.serving for r in rows]
    p95 = _judged_at(response) == "p95"
    pct = "p95 " if p95 else ""
    cols = [
        _Col("#", [str(r.rank) for r in rows]),
        _Col("GPU", [r.gpu.name for r in rows], left=True),
        _Col("replicas × GPUs", [f"{s.replicas} × {s.gpus_per_replica}" for s in sv]),
        _Col(
            "weights/KV",
            [
                f"{weights_name(s.weight_precision, s.weight_format)}/{s.kv_cache_precision}"
                for s in sv
            ],
            left=True,
        ),
        # at the percentile the targets are judged at: under p95 the mean had shown a B200's
        # ITL as 48.8 ms against a 100 ms target its p95 of 94.6 ms nearly missed
        _Col(f"{pct}TTFT ms", [_fmt(s.ttft_p95_ms if p95 else s.ttft_ms, 0) for s in sv]),
        _Col(f"{pct}ITL ms", [_fmt(s.itl_p95_ms if p95 else s.itl_ms, 1) for s in sv]),
        _Col("out tok/s", [_fmt(s.output_tokens_per_s, 0) for s in sv]),
        _Col("max tok/s", [_fmt(s.max_output_tokens_per_s, 0) for s in sv]),
        _Col("$/1M out", [_fmt(s.usd_per_million_output_tokens_blended, 2) for s in sv]),
        _Col(
            "split out/in",
            [
                "/".join(
                    _fmt(x, 2)
                    for x in (s.usd_per_million_output_tokens, s.usd_per_million_input_tokens)
                )
                for s in sv
            ],
        ),
        _Col("$/h", [_fmt(s.usd_per_hour, 2) for s in sv]),
    ]
    # folded as the inference table is (README "The CLI"): piped or at 80 columns the GPU
    # names had vanished and "1,952" read "1,9"
    dropped = _print_served(cols, sv, either, console, _SERVING_DROP_FIRST)
    split = "split out/in" not in dropped
    # the page's heads say it under each name; a student serving a 70B met "TTFT" and "ITL" bare
    console.print("TTFT: time to the first token; ITL: time between output tokens")
    console.print(
        "$/1M out: the whole hour ÷ the output tokens it produces"
        + (
            "; split: the hour's decode share ÷ output tokens / its prefill share ÷ prompt tokens"
            if split
            else ""
        )
        + (
            "; basis: what $/1M out and $/h rest on, the cheaper of owning the cards (own) and "
            "renting the row's offer (rent), the one the row is ranked on"
            if either and "basis" not in dropped
            else ""
        )
        + _hour_basis(response.acquisition, dropped)
    )
    if response.recommendations:
        _more_rows(response, console)
    for warning in response.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(as_flags(warning))}")


def _hour_basis(acquisition: str, dropped: list[str]) -> str:
    """What the hour behind a serving row's prices is where the question asked one way, as the
    page says it: a buyer's hour is owning the cards, not a rental, and had gone unsaid."""
    if acquisition == "either":
        return ""  # the basis column, and its legend, name each row's
    hour = "the hour" if "$/h" in dropped else "the hour ($/h)"
    if acquisition == "buy":
        owned = "purchase less resale over your hours of use, plus energy"
        return f"; {hour}: owning the cards ({owned})"
    return f"; {hour}: renting the offer named in the row (whole instances)"


def _print_served(
    cols: list[_Col], sv: list[Any], either: bool, console: Console, drop_first: tuple[str, ...]
) -> list[str]:
    """A serving table's last columns (the price basis when asked either way, the targets),
    fitted to the terminal and printed with what it left out; what it left out."""
    if either:
        names = {"buy": "own", "rent": "rent"}
        cols.append(_Col("basis", [names.get(s.price_basis or "", "—") for s in sv]))
    cols.append(_Col("targets", ["met" if s.meets_slo else "missed" for s in sv]))
    table, dropped = _fitted(cols, console, drop_first)
    console.print(table)
    if dropped:
        console.print(f"Left out at this width: {', '.join(dropped)} (a wider terminal "
                      "or --json shows them).")  # fmt: skip
    return dropped


def _render_encoder_rows(response: Any, rows: list[Any], console: Console) -> None:
    """An encoder's serving rows (an embedding model, a reranker: one forward pass a request,
    no tokens follow): latency, embeddings/s and $ per million embeddings."""
    sv = [r.serving for r in rows]
    p95 = _judged_at(response) == "p95"
    pct = "p95 " if p95 else ""
    cols = [
        _Col("#", [str(r.rank) for r in rows]),
        _Col("GPU", [r.gpu.name for r in rows], left=True),
        _Col("replicas × GPUs", [f"{s.replicas} × {s.gpus_per_replica}" for s in sv]),
        _Col(
            "weights", [f"{s.weight_precision} · {runtime_name(s.runtime)}" for s in sv], left=True
        ),
        _Col(f"{pct}latency ms", [_fmt(s.ttft_p95_ms if p95 else s.ttft_ms, 1) for s in sv]),
        _Col("emb/s", [_fmt(s.embeddings_per_s, 0) for s in sv]),
        _Col("max emb/s", [_fmt(s.max_embeddings_per_s, 0) for s in sv]),
        _Col("$/1M emb", [_fmt(s.usd_per_million_embeddings, 3) for s in sv]),
        _Col("$/h", [_fmt(s.usd_per_hour, 2) for s in sv]),
    ]
    dropped = _print_served(
        cols, sv, response.acquisition == "either", console, _ENCODER_DROP_FIRST
    )
    console.print(
        "latency: a request in to its embedding out; emb/s: embeddings (sequences) a second "
        "at the load; $/1M emb: the whole hour ÷ the embeddings it produces"
        + _hour_basis(response.acquisition, dropped)
    )
    if response.recommendations:
        _more_rows(response, console)
    for warning in response.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(as_flags(warning))}")


# an encoder's columns dropped first on a narrow terminal, as _SERVING_DROP_FIRST's
_ENCODER_DROP_FIRST = ("max emb/s", "$/h", "basis", "weights", "replicas × GPUs")


def _judged_at(response: Any) -> str:
    """The percentile a serving question's targets are judged at (the resolved workload's
    target_percentile): p50 unless the request asked p95."""
    serving = getattr(response.workload, "serving", None)
    return str(getattr(serving, "target_percentile", None) or "p50")


def _narrow(console: Console) -> bool:
    """Too narrow for every header on one line beside the names (the tables have up to 13
    columns)."""
    return console.width < 160


def _column(
    table: Table,
    head: str,
    *,
    left: bool = False,
    narrow: bool = True,
    cells: list[str] | None = None,
    width: int | None = None,
) -> None:
    """A column folded rather than cut: at 80 columns (and whenever output is piped)
    "1,110…" and "0.…" were all a reader got of a likely range and a price. Text columns
    (``left``) fold between words, never narrower than their longest word (of ``cells``, the
    column's text, and the header); a figure never breaks ("2.6/12." over "0" read as two
    numbers): number columns do not wrap, so the table takes their width from the text beside
    them. ``width``: a text column's, set where the table would not fit otherwise."""
    if left:
        words = [w for text in (cells or []) + [head] for w in text.split()]
        table.add_column(head, justify="left", overflow="fold", width=width,
                         min_width=max(len(w) for w in words) if words else None)  # fmt: skip
        return
    table.add_column(
        "\n".join(_head_lines(head, narrow)), justify="right", no_wrap=True, overflow="fold"
    )


def _head_lines(head: str, narrow: bool) -> list[str]:
    """A number column's header as ``_column`` sets it: on a narrow terminal on lines of a word
    or two (unwrapped, "throughput (images/s)" set the column's width and left the GPU names
    no room); a wide one keeps one header line."""
    width = max(8, *(len(word) for word in head.split())) if narrow else len(head)
    # "end-to-end" whole: a header breaks between words only
    return textwrap.wrap(head, width=width, break_on_hyphens=False)


def render(response: Any, console: Console) -> None:
    if getattr(response, "serving", None) is not None:
        render_serving(response, console)
        return
    w = response.workload
    # memory a person reads is in GiB (2^30 bytes, the vendors' "GB"), as the rows' explanations
    # and the pages say it (README "One memory unit"): one label for one unit ("GB" over 2^30
    # bytes beside the API's 10^9-byte *_gb had read as one unit); the footnote says --json's
    # *_gb differ
    # "on one GPU", as the page's card says: a pick sharded over several needs less on each
    # ("needs at least 20.4 GiB" headed a pick of 2 × 16 GB cards at 15.7 GiB each)
    recs = response.recommendations
    top = (
        f"; the top pick: {recs[0].num_gpus} GPUs, {gib(recs[0].memory.required_gb)} GiB each"
        if recs and recs[0].num_gpus > 1
        else ""
    )
    # the adapters' recipe, as the page's "Job" line names it: "llama-3.1-8b fine-tuning, bf16"
    # had headed a QLoRA answer whose 10.9 GiB only the 4-bit base explains
    peft = f", {PEFT_LABELS[w.peft]}" if w.peft in PEFT_LABELS and w.peft != "none" else ""
    console.print(
        f"[bold]{w.preset or w.model.family}[/bold] {w.task}{peft}, {w.precision}, "
        f"batch {w.batch_size} — needs at least {gib(response.memory.required_gb)} GiB on one GPU"
        f"{top}"
        f" (each row: its own); objective: {response.objective}"
    )
    _verdict(response, console)
    rows = response.recommendations
    # LLM inference: $ per 1M output tokens, the whole hour ÷ the tokens it produces — of a
    # rented hour, so not for a buyer (the page leaves it out there too: a buy answer showed
    # rent prices for the rows that happen to have offers and a blank for its pick)
    per_token = response.acquisition != "buy" and any(
        r.usd_per_million_output_tokens_blended is not None for r in rows
    )
    # the unit once in the header when every row shares it: at 80 columns "1,019 tokens/s" in
    # each cell squeezed every column to "throu…", "compu…", "597.4…"
    units = {r.throughput.unit for r in rows}
    unit = units.pop() if len(units) == 1 else None
    throughput_head = f"throughput ({unit})" if unit else "throughput"
    # LLM inference: the headline is output tokens over whole requests, the prompt's prefill
    # included, which people set against llama.cpp's and Ollama's decode "eval rate" (a Mac
    # read as slow): named for what it is, with the decode rate beside it
    llm = _llm_inference(response)
    if llm:
        throughput_head = "tok/s end-to-end"
    # the prices the question asks about, as the page shows them
    rent_col = response.acquisition in ("rent", "either")
    buy_col = response.acquisition in ("buy", "either")
    # what the job costs to finish on the row's footing (rented or bought): what "cheapest"
    # ranks by, so wherever a row has one
    job_col = any(r.cost.job_cost_usd is not None for r in rows)
    cols: list[_Col] = []
    if response.baseline is not None:
        # three figures as the page writes it: one decimal had printed "5222.0×" against a CPU
        cols.append(_Col("vs yours", [_fmt(r.speedup_vs_baseline, unit="×") for r in rows]))
    cols += [
        _Col("#", [str(r.rank) for r in rows]),
        _Col("GPU", [r.gpu.name + _EXP * _experimental(r) for r in rows], left=True),
        _Col("N", [str(r.num_gpus) for r in rows]),
        # the capacity to a tenth, as the verdict gives it: "15.3/16" hid 0.3 GB of room
        _Col(
            "memory GiB",
            [
                f"{vram(r.memory.required_gb):.1f}/{vram(r.memory.available_gb or 0.0):.1f}"
                for r in rows
            ],
        ),
        _Col(
            throughput_head,
            [_fmt(r.throughput.value) + ("" if unit else f" {r.throughput.unit}") for r in rows],
        ),
    ]
    if llm:
        cols.append(_Col(_DECODE_HEAD, [_fmt(decode_rate(r.ms_per_output_token, w.batch_size))
                                        for r in rows]))  # fmt: skip
    if per_token:
        cols.append(_Col("$/1M out", [_fmt(r.usd_per_million_output_tokens_blended, 2)
                                      for r in rows]))  # fmt: skip
    cols.append(_Col("bottleneck", [r.bottleneck for r in rows], left=True))
    if rent_col:
        cols.append(_Col("$/h (all)", [_fmt(r.cost.hourly_usd, 2) for r in rows]))
    if buy_col:
        cols.append(_Col("buy $ (all)", [_fmt(r.cost.purchase_usd, 0) for r in rows]))
    if job_col:
        # asked 'either', a rented job and a whole purchase share the column: each says which
        # (lab PI's review: 11.78, 755 and 3,192 had read as one kind of figure)
        both = response.acquisition == "either"
        cols.append(
            _Col(
                "job $",
                [_dollars(r.cost.job_cost_usd) + (_job_basis(r) if both else "") for r in rows],
            )
        )
    cols += [
        # as the verdict says it
        _Col(
            "to finish",
            [
                hours_text(r.time_to_finish_h) if r.time_to_finish_h is not None else "—"
                for r in rows
            ],
        ),
        _Col(
            "likely range", [f"{_fmt(r.uncertainty.low)}–{_fmt(r.uncertainty.high)}" for r in rows]
        ),
    ]
    if rows:
        table, dropped = _fitted(cols, console)
        console.print(table)
        if dropped:
            console.print(f"Left out at this width: {', '.join(dropped)} (a wider terminal "
                          "or --json shows them).")  # fmt: skip
        if llm:
            console.print(
                f"tok/s end-to-end: output tokens ÷ the whole request (the {w.seq_len:,}-token "
                f"prompt's prefill, then {w.output_tokens:,} output tokens) at batch "
                f"{w.batch_size}; decode: tokens/s while generating (batch × 1000 ÷ ms per "
                "output token), at batch 1 what llama.cpp and Ollama call the eval rate."
            )
        console.print("memory GiB: 2^30 bytes each, the unit the cards' \"GB\" are (an 80 GB "
                      "H100 holds 80 GiB); --json's *_gb fields are 10^9 bytes.")  # fmt: skip
        # a bought row's blank "job $" beside its price says why (cost.job_cost_missing)
        blank = [r for r in rows if r.cost.job_cost_note]
        if job_col and blank:
            console.print(f"job $ — {blank[0].cost.job_cost_note}.")
        if any(_experimental(r) for r in rows):
            console.print(f"{_EXP.strip()}: experimental software support for this "
                          "framework; such rows rank after the supported ones, whatever "
                          "their score.")  # fmt: skip
        _more_rows(response, console)
    _notes(response, console)


# The GPU cell's mark on a row whose software support is experimental: a cheaper, faster card
# ranked below a P40 had read as a ranking error
_EXP = " (exp.)"


def _experimental(row: Any) -> bool:
    return bool(row.framework_status == "experimental")


def _more_rows(response: Any, console: Console) -> None:
    """The rows ranked past --limit, counted but not shown: a card sorted below the rows
    shown (experimental software after supported) had appeared nowhere."""
    shown = len(response.recommendations)
    hidden = response.count - shown
    if shown and hidden > 0:
        asks = min(response.count, _MAX_ROWS)
        see = f"--limit {asks} to see them" if asks > shown else f"at most {_MAX_ROWS} are shown"
        console.print(f"{hidden} more ranked rows not shown ({see}).")


# The most rows a request may ask for: the schema's bound on ``limit``
_MAX_ROWS = next(
    int(m.le) for m in RecommendationRequest.model_fields["limit"].metadata if hasattr(m, "le")
)


_DECODE_HEAD = "decode tok/s"


def _llm_inference(response: Any) -> bool:
    """An LLM inference answer (the page's test too): its rows carry a decode pace."""
    w = response.workload
    return bool(w.task == "inference" and w.model.family == "decoder")


def decode_rate(ms_per_output_token: float | None, batch: int = 1) -> float | None:
    """Tokens a batch gets each second while generating, as the verdict says it: at batch 1
    llama.cpp's and Ollama's "eval rate", which people compare a card by."""
    return batch * 1000.0 / ms_per_output_token if ms_per_output_token else None


@dataclass(frozen=True)
class _Col:
    """One column of the ranking table: its header, its cells, and whether it holds text."""

    head: str
    cells: list[str]
    left: bool = False


# Columns left out, first to last, where the table cannot be as narrow as the terminal with
# every GPU name in whole words: the band (the verdict gives the pick's), what limits each row
# (its explanation says), then the prices per hour beside a job's whole cost
_DROP_FIRST = ("likely range", "bottleneck", "$/h (all)", "buy $ (all)", "to finish")
# The serving table's: the capacity beyond the asked load, the price split by phase (the
# blended $/1M out stays), then the hourly price the $/1M rests on, then the replica shape
# and precisions (the verdict names the pick's); TTFT, ITL, throughput, $/1M out and whether
# the targets are met are what the question asks and always stay
_SERVING_DROP_FIRST = ("max tok/s", "split out/in", "$/h", "basis", "weights/KV",
                       "replicas × GPUs")  # fmt: skip


def _fitted(
    cols: list[_Col], console: Console, drop_first: tuple[str, ...] = _DROP_FIRST
) -> tuple[Table, list[str]]:
    """The table of ``cols`` no wider than the console, where dropping the columns of
    ``drop_first`` (in its order) gets it there, with the headers of those dropped. Text
    folds between words, never inside one: at 80 columns "NVIDIA GeForce RTX 4090" read
    "NV / ID / IA / Ge / Fo / rc / e" down the GPU column."""
    narrow = _narrow(console)
    # a column with no figure in any row says nothing: it goes before any that has one (an
    # inference answer's "to finish", all "—" without a dataset, had kept its place while
    # "buy $ (all)" went, and the bought pick's row showed no price)
    blank = {c.head for c in cols if all(x.strip() in ("—", "") for x in c.cells)}
    drop_first = tuple(
        sorted(drop_first, key=lambda h: h not in blank)  # stable: the given order otherwise
    )
    dropped: list[str] = []
    while True:
        kept = [c for c in cols if c.head not in dropped]
        # each column at its narrowest (a figure whole, text at its longest word, the header
        # as _column wraps it) with its two spaces of padding, and a rule between and outside
        need = sum(_least(c, narrow) + 2 for c in kept) + len(kept) + 1
        left = [h for h in drop_first if h not in dropped and any(c.head == h for c in kept)]
        if need <= console.width or not left:
            break
        dropped.append(left[0])
    widths = _text_widths(kept, narrow, console.width - need)
    table = Table(show_lines=False)
    for c in kept:
        _column(table, c.head, left=c.left, narrow=narrow, cells=c.cells, width=widths.get(c.head))
    for i in range(len(cols[0].cells)):
        # cells are data (GPU names, an answer's words), never markup: a GPU named with
        # "[/]" in it had crashed the table
        table.add_row(*(escape(c.cells[i]) for c in kept))
    return table, dropped


def _text_widths(kept: list[_Col], narrow: bool, spare: int) -> dict[str, int]:
    """The text columns' widths where the table cannot show every line whole: each its
    longest word, and the ``spare`` room shared out by what each would take more. Rich's own
    sharing narrows the widest text column first and then widens any below its longest
    word back, past the terminal: a decode column beside "bottleneck" had pushed "to finish"
    off an 80-column table."""
    text = [c for c in kept if c.left]
    want = {c.head: max(len(x) for x in [*c.cells, c.head]) - _least(c, narrow) for c in text}
    if spare < 0 or spare >= sum(want.values()):
        return {}  # room for every line whole (rich lays it out), or none to share
    total = sum(want.values())
    return {c.head: _least(c, narrow) + spare * want[c.head] // total for c in text}


def _least(col: _Col, narrow: bool) -> int:
    """The narrowest ``col`` can be: its longest word where it holds text, else its widest
    figure, and no narrower than its header's longest line (``_column``)."""
    head = _head_lines(col.head, narrow) if not col.left else col.head.split()
    cells = [w for text in col.cells for w in text.split()] if col.left else col.cells
    return max(len(x) for x in [*head, *cells])


def _not_in_verdict(response: Any) -> str:
    """The empty answer's message less the sentences the verdict above it already printed:
    how far memory keeps the job off the cards closes both (the page shows the verdict only),
    and the CLI had printed that paragraph twice."""
    message: str = response.empty.message
    said = getattr(response, "summary", None)
    cut = message.find(" Memory: ")
    if said is not None and cut >= 0 and message[cut:].strip() in said.sentence:
        return message[:cut]
    return message


def _notes(response: Any, console: Console) -> None:
    """Below the table: the answer's own words on a deadline and on an empty table, as the
    page shows them, the pick's reasons, the measured machine's tips, the what-ifs, the
    warnings."""
    if response.deadline is not None:
        console.print(f"[bold]Finish within {limit_duration(response.deadline.max_hours)}:[/bold] "
                      + escape(as_flags(response.deadline.message)))  # fmt: skip
        for line in response.deadline.would:
            _bullet(console, as_flags(line))
    if response.empty is not None:
        console.print(f"[bold]No row:[/bold] {escape(as_flags(_not_in_verdict(response)))}")
    if response.recommendations:
        top = response.recommendations[0]
        console.print(
            f"[bold]Why {escape(top.gpu.name)}:[/bold] " + escape(" ".join(top.explanation))
        )
        for tip in top.tips[:4]:
            _bullet(console, tip)
    if response.baseline is not None and response.baseline.tips:
        console.print(f"[bold]Measured on your machine ({response.baseline.source}):[/bold]")
        for tip in response.baseline.tips:
            _bullet(console, tip)
    if response.what_if:
        console.print("[bold]What changes the answer:[/bold]")
        for w in response.what_if:
            pick = w.top_name or "nothing can run it"
            count = f" ×{w.num_gpus}" if w.num_gpus and w.num_gpus > 1 else ""
            speed = f", {_fmt(w.throughput)} {w.unit}" if w.throughput is not None else ""
            price = price_note(w, response.acquisition)
            _bullet(
                console,
                f"{w.change}: {pick}{count}{speed}{price}; needs {gib(w.required_gb)} GiB, "
                f"{kinds_of_gpu(w.can_run)} can run it" + (f"; {w.quality}" if w.quality else ""),
            )
    for warning in response.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(as_flags(warning))}")
    console.print(f"{len(response.excluded)} GPUs excluded (use --json for the reasons).")


def register(cli: typer.Typer, console: Console, err: Console) -> None:
    def recommend(**kwargs: Any) -> None:
        """Rank GPUs for a workload, as a table (same engine and options as the API).

        Every field of the API's request is an option; --request reads a whole request body
        (JSON, '-' for stdin) and the options given change it."""
        as_json = kwargs.pop("as_json")
        request_file = kwargs.pop("request_file")
        code = run(kwargs, as_json, console, err, request_file)
        if code:
            raise typer.Exit(code)

    params = [
        inspect.Parameter(
            "request_file", inspect.Parameter.KEYWORD_ONLY, annotation=str | None,
            default=typer.Option(None, "--request", help="A request body as JSON ('-': stdin)."),
        ),
    ]  # fmt: skip
    for opt in OPTIONS:
        # numbers come in as text, read as the form reads them (15k, 8.03B, $800)
        kind = str if opt.kind in (int, float) and not opt.multiple else opt.kind
        annotation: Any = list[kind] | None if opt.multiple else kind | None  # type: ignore[valid-type]
        extra = " Repeat to give several." if opt.multiple else ""
        params.append(inspect.Parameter(
            opt.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
            default=typer.Option(None, *opt.flags, help=opt.help + extra),
        ))  # fmt: skip
    params.append(inspect.Parameter(
        "as_json", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
        default=typer.Option(False, "--json", help="Print the API's JSON response."),
    ))  # fmt: skip
    recommend.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    cli.command(cls=_PlainHelp, epilog=EXIT_CODES_HELP)(recommend)


class _PlainHelp(TyperCommand):
    """Click's own help layout for this one command: Rich's four-column option table cut
    a third of its ~100 option names to "--activation-mb-pe…" at 80 columns, where click
    puts a long name on a line of its own and wraps the help under it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """With --json, an option click refuses (an unknown flag, a missing value) is the API's
        error object on stdout too, as every other refusal is: a script reads one shape."""
        given = list(args)  # the parser consumes ``args``
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:  # typer's own click
            if "--json" not in given:
                raise
            details: dict[str, Any] = {"field": "request"}
            flag = getattr(exc, "option_name", None) or _param_flag(getattr(exc, "param", None))
            if flag:
                details["flag"] = flag
            typer.echo(error_json("invalid_input", exc.format_message(), details))
            raise typer.Exit(EXIT_INVALID) from exc


def _param_flag(param: Parameter | None) -> str | None:
    opts = getattr(param, "opts", None)
    return str(opts[0]) if opts else None
