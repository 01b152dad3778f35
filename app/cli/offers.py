"""`gpu-advisor offers import | list | unmapped` and `gpu-advisor launch-spec`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.cli.json_errors import JsonUsageErrors
from app.config import Settings
from app.numbers import shown_of
from app.vocab import MOST_GPUS

if TYPE_CHECKING:
    from pydantic import BaseModel
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session

    from app.offers.schemas import OfferOut, OfferPage


def _session_scope(settings: Settings) -> tuple[Engine, AbstractContextManager[Session]]:
    from app.db import make_engine, make_session_factory, session_scope
    from app.main import prepare_database

    # a fresh database is migrated and seeded first, as `gpu-advisor recommend` does
    # (GPU_ADVISOR_MIGRATE_ON_START / _SEED_ON_START): 'offers list' had failed on "no such
    # table: gpus"
    prepare_database(settings)
    engine = make_engine(settings.database_url)
    return engine, session_scope(make_session_factory(engine))


def register(cli: typer.Typer, console: Console, err_console: Console) -> None:
    offers_cli = typer.Typer(help="Cloud and purchase offers (prices).", no_args_is_help=True)
    cli.add_typer(offers_cli, name="offers")

    @offers_cli.command("import")
    def import_(
        files: list[Path] = typer.Argument(
            ..., metavar="FILE", exists=True, dir_okay=False, readable=True
        ),
        provider: str = typer.Option(
            None, help="Cloud of a SkyPilot vms.csv (else its folder name: catalogs/v7/<cloud>)."
        ),
        as_of: str = typer.Option(None, help="Date the prices were retrieved (default today)."),
        source: str = typer.Option(None, help="Where the file came from (URL, commit)."),
    ) -> None:
        """Import SkyPilot vms.csv files or CSVs of our columns: all or nothing, idempotent."""
        from app.errors import AppError
        from app.offers.files import OfferFileError
        from app.offers.service import import_files

        settings = Settings()
        engine, scope = _session_scope(settings)
        try:
            with scope as session:
                report = import_files(
                    session, settings, files, provider=provider, as_of=as_of, source=source
                )
        except (OfferFileError, AppError) as exc:
            err_console.print(
                "[red]import rejected, nothing written:[/red]", escape(str(exc)), emoji=False
            )
            raise typer.Exit(2) from exc
        finally:
            engine.dispose()
        console.print(
            f"offers: {report.added} added, {report.updated} updated, "
            f"{report.unchanged} unchanged, {len(report.skipped)} skipped"
        )
        for s in report.skipped:
            accel = f" [{s.accelerator}]" if s.accelerator else ""
            console.print(f"  skipped {s.file}: {s.instance_type}{accel}: {s.reason}")

    @offers_cli.command("list", cls=JsonUsageErrors)
    def list_(
        gpu: str = typer.Option(None, help="Only this catalog slug."),
        kind: str = typer.Option(None, help="cloud or purchase."),
        provider: str = typer.Option(None, help="Only this provider."),
        limit: int = typer.Option(500, min=1, max=500),
        offset: int = typer.Option(0, min=0, help="Offers skipped first (the API's offset)."),
        as_json: bool = typer.Option(
            False, "--json", help="Print the offers as the API lists them (a JSON list)."
        ),
    ) -> None:
        """Print offers: price, shape, tier, date, source; stale ones marked."""
        from app.errors import AppError
        from app.offers.repository import OfferFilter
        from app.offers.service import list_offers

        if kind not in (None, "cloud", "purchase"):
            _list_refusal(as_json, err_console, "kind", f"must be cloud or purchase, not {kind!r}")
        settings = Settings()
        engine, scope = _session_scope(settings)
        try:
            with scope as session:
                page = list_offers(
                    session,
                    settings,
                    OfferFilter(
                        gpus=[gpu] if gpu else [], providers=[provider] if provider else []
                    ),
                    kind=kind,
                    limit=limit,
                    offset=offset,
                )
        except AppError as exc:
            _list_refusal(as_json, err_console, exc.field, exc.message, exc.code, exc)
        finally:
            engine.dispose()
        if as_json:
            _print_json_list(page.items)
            say_more_pages(err_console, "offers", page.total, page.offset, len(page.items))
            return
        console.print(_offers_table(page, console.width))
        console.print(_offers_note(page, console.width), highlight=False)

    @offers_cli.command("unmapped")
    def unmapped(
        files: list[Path] = typer.Argument(None, metavar="FILE", exists=True, dir_okay=False),
        provider: str = typer.Option(None, help="Cloud of the SkyPilot vms.csv files."),
    ) -> None:
        """Accelerator names no reviewed rule maps to a catalog GPU (never guessed)."""
        from app.offers.files import OfferFileError
        from app.offers.service import unmapped as find_unmapped

        try:
            rows = find_unmapped(Settings(), files or [], provider=provider)
        except OfferFileError as exc:
            err_console.print(f"[red]{escape(str(exc))}[/red]", emoji=False)
            raise typer.Exit(2) from exc
        table = Table(title=f"{len(rows)} unmapped accelerator names")
        for col in ("cloud", "accelerator", "instances", "why"):
            table.add_column(col, overflow="fold")
        for cloud, accel, n, why in rows:
            table.add_row(escape(cloud), escape(accel), str(n), escape(why))
        console.print(table)

    @cli.command("launch-spec")
    def launch_spec(
        gpu: str = typer.Option(..., help="Catalog slug of the GPU to rent."),
        upload: str = typer.Option(..., help="GPU Advisor server URL the report is uploaded to."),
        gpus: int = typer.Option(1, min=1, max=MOST_GPUS, help="GPUs the job needs."),
        provider: str = typer.Option(None, help="Only offers of this cloud."),
        instance_type: str = typer.Option(None, help="This instance type exactly."),
        allow_spot: bool = typer.Option(False, help="Use the spot price where cheaper."),
        output: Path = typer.Option(
            None, "--output", "-o", help="Write the YAML here (default: stdout)."
        ),
    ) -> None:
        """Write a SkyPilot task that benchmarks an offer's machine (nothing is launched)."""
        from app.errors import AppError
        from app.offers.service import launch_spec as make_spec

        settings = Settings()
        engine, scope = _session_scope(settings)
        try:
            with scope as session:
                text = make_spec(
                    session,
                    settings,
                    gpu=gpu,
                    gpus=gpus,
                    upload_url=upload,
                    provider=provider,
                    instance_type=instance_type,
                    allow_spot=allow_spot,
                )
        except AppError as exc:
            err_console.print(
                f"[red]{_option(exc.field)}[/red]: {escape(exc.message)}", emoji=False
            )
            raise typer.Exit(2) from exc
        finally:
            engine.dispose()
        if output is None:
            print(text, end="")
        else:
            _write_spec(output, text, err_console)
            console.print(f"wrote {output} (launch it with: sky launch -c advisor-bench {output})")
        _say_loopback(err_console, upload)


def _write_spec(output: Path, text: str, err_console: Console) -> None:
    """launch-spec -o: a path it cannot write is a bad argument (exit 2, naming --output), as
    bench refuses an unwritable --output; it had ended in a traceback."""
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        err_console.print(f"[red]--output[/red]: cannot write {escape(str(output))}: "
                          f"{escape(exc.strerror or str(exc))}", emoji=False)  # fmt: skip
        raise typer.Exit(2) from exc


def _say_loopback(err_console: Console, upload: str) -> None:
    """launch-spec's warning that a rented machine cannot reach a loopback --upload URL, on
    stderr too: a comment inside the file written with -o alone went unread."""
    from app.offers.launch import loopback_warning

    warning = loopback_warning(upload)
    if warning:
        err_console.print(f"[yellow]warning[/yellow]: {escape(warning)}", emoji=False)


def _list_refusal(
    as_json: bool, err_console: Console, field: str | None, message: str,
    code: str = "invalid_input", cause: Exception | None = None,
) -> NoReturn:  # fmt: skip
    """Refuse `offers list` (exit 2): with --json, the API's error object on stdout, as
    `recommend --json` prints it (a script reads one shape); else a line on stderr."""
    if as_json:
        from app.cli.recommend import error_json

        details = {"field": field, "flag": _option(field)} if field else {}
        print(error_json(code, message, details))
    else:
        err_console.print(f"[red]{_option(field)}[/red]: {escape(message)}", emoji=False)
    raise typer.Exit(2) from cause


def say_more_pages(err_console: Console, what: str, total: int, offset: int, shown: int) -> None:
    """--json prints a list without the API page's total: when it is one page of more, say
    so on stderr with the --offset of the next, so a script that reads 500 of 820 offers
    knows it did (stdout stays the JSON list)."""
    if offset + shown < total:
        err_console.print(
            f"{shown} of {total} {what} from offset {offset}; the next page: "
            f"--offset {offset + shown}",
            emoji=False, highlight=False,
        )  # fmt: skip


def _print_json_list(items: Sequence[BaseModel]) -> None:
    """A list command's --json: the items as the API lists them."""
    # plain print: the console would wrap long lines inside the JSON strings
    print(json.dumps([item.model_dump(mode="json") for item in items], indent=2))


def _option(field: str | None) -> str:
    """The command-line option for a service error's field ("instance_type" is
    --instance-type), so the message names what the user typed."""
    return f"--{field.replace('_', '-')}" if field else "error"


# Below this width the table keeps the columns that decide a choice (what, where, price,
# date) and drops the rest; --json has every field.
WIDE = 140


def _offers_note(page: OfferPage, width: int) -> str:
    """The line under the offers table, at the terminal's full width: what 'stale' marks (it
    had read as if every offer listed were stale) and, where columns are dropped, how to see
    them."""
    note = (
        f"Each GPU's cloud offers run cheapest per GPU-hour first. 'stale': older than "
        f"{page.stale_after_days} days."
    )
    if width < WIDE:
        note += (
            f" Widen the terminal to {WIDE} columns for spot, tier, regions and source, or use "
            "--json."
        )
    return note


def _offers_table(page: OfferPage, width: int) -> Table:
    """The offers of a page as a table, stale ones marked. Numbers and dates never wrap
    (a price split over two lines misreads); names and sources fold."""
    wide = width >= WIDE
    # "(stale: …)" read as if every offer listed were stale: it says what the mark means
    count = shown_of(len(page.items), page.total)
    # the title only counts (Rich wraps it to the table's width); _offers_note says the rest
    table = Table(title=f"{count} offers", box=box.SIMPLE_HEAD, pad_edge=False)
    columns: list[tuple[str, bool, Callable[[OfferOut], str]]] = [
        ("gpu", False, lambda o: o.gpu),
        ("kind", False, lambda o: o.kind),
        ("provider / basis", False, lambda o: o.provider or o.condition or ""),
        ("instance", False, _instance),
        ("GPUs", True, lambda o: str(o.gpus)),
        # narrow only: the hourly or the buying price in one column ("8.00/h", "25,000")
        ("$", True, _price),
        ("$/h", True, lambda o: _money(o.usd_per_hour, 2)),
        # what a GPU's cloud offers are ordered by: 8.00/h on 8 GPUs before 1.82/h on one had
        # read as out of order with only the instance's price shown
        ("$/GPU-h", True, lambda o: _money(o.usd_per_gpu_hour, 2)),
        ("spot $/h", True, lambda o: _money(o.spot_usd_per_hour, 2)),
        ("$ buy", True, lambda o: _money(o.usd, 0)),
        ("tier", False, lambda o: o.tier or ""),
        ("regions", True, lambda o: str(o.regions) if o.regions is not None else ""),
        ("as of", True, lambda o: o.as_of + (" stale" if o.stale else "")),
        ("source", False, lambda o: o.source),
    ]
    drops = _NARROW_DROPS if not wide else {"$"}
    columns = [c for c in columns if c[0] not in drops]
    for name, number, _ in columns:
        if number:
            table.add_column(name, no_wrap=True, justify="right")
        else:
            table.add_column(name, overflow="fold")
    for o in page.items:
        table.add_row(*(escape(cell(o)) for _, _, cell in columns))
    return table


# kind shows in which price column is filled; the others matter less than fitting 80 columns
_NARROW_DROPS = frozenset(
    {"kind", "$/h", "$/GPU-h", "spot $/h", "$ buy", "tier", "regions", "source"}
)


def _instance(o: OfferOut) -> str:
    """The instance, with the marks the GPU page gives an offer no recommendation rents: a
    vast $0.136 RTX 4090 quote had headed the list, cheapest, unmarked at any width."""
    name = o.instance_type or ""
    if o.kind != "cloud":
        return name
    if o.inconsistent:
        return f"{name} (prices contradict, not used)"
    return name if o.launchable else f"{name} (quoted, not bookable)"


def _price(o: OfferOut) -> str:
    """The narrow table's one price: a cloud offer's per GPU-hour (what its rows are ordered
    by; the whole instance's is the wide table's $/h), a purchase's price."""
    if o.usd_per_hour is None:
        return _money(o.usd, 0)
    return f"{_money(o.usd_per_gpu_hour, 2)}/GPU-h"


def _money(value: float | None, digits: int) -> str:
    return f"{value:,.{digits}f}" if value is not None else ""
