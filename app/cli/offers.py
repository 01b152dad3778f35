"""`gpu-advisor offers import | list | unmapped` and `gpu-advisor launch-spec`."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from app.config import Settings

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session

    from app.offers.schemas import OfferPage


def _session_scope(settings: Settings) -> tuple[Engine, AbstractContextManager[Session]]:
    from app.db import make_engine, make_session_factory, session_scope

    engine = make_engine(settings.database_url)
    return engine, session_scope(make_session_factory(engine))


def register(cli: typer.Typer, console: Console, err_console: Console) -> None:
    offers_cli = typer.Typer(help="Cloud and purchase offers (prices).", no_args_is_help=True)
    cli.add_typer(offers_cli, name="offers")

    @offers_cli.command("import")
    def import_(
        files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, readable=True),
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
            err_console.print(f"[red]import rejected, nothing written:[/red] {exc}")
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

    @offers_cli.command("list")
    def list_(
        gpu: str = typer.Option(None, help="Only this catalog slug."),
        kind: str = typer.Option(None, help="cloud or purchase."),
        provider: str = typer.Option(None, help="Only this provider."),
        limit: int = typer.Option(500, min=1, max=500),
    ) -> None:
        """Print offers: price, shape, tier, date, source; stale ones marked."""
        from app.errors import AppError
        from app.offers.repository import OfferFilter
        from app.offers.service import list_offers

        if kind not in (None, "cloud", "purchase"):
            err_console.print("[red]--kind must be cloud or purchase[/red]")
            raise typer.Exit(2)
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
                )
        except AppError as exc:
            err_console.print(f"[red]--{exc.field or 'error'}[/red]: {exc.message}")
            raise typer.Exit(2) from exc
        finally:
            engine.dispose()
        console.print(_offers_table(page))

    @offers_cli.command("unmapped")
    def unmapped(
        files: list[Path] = typer.Argument(None, exists=True, dir_okay=False),
        provider: str = typer.Option(None, help="Cloud of the SkyPilot vms.csv files."),
    ) -> None:
        """Accelerator names no reviewed rule maps to a catalog GPU (never guessed)."""
        from app.offers.files import OfferFileError
        from app.offers.service import unmapped as find_unmapped

        try:
            rows = find_unmapped(Settings(), files or [], provider=provider)
        except OfferFileError as exc:
            err_console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from exc
        table = Table(title=f"{len(rows)} unmapped accelerator names")
        for col in ("cloud", "accelerator", "instances", "why"):
            table.add_column(col, overflow="fold")
        for cloud, accel, n, why in rows:
            table.add_row(cloud, accel, str(n), why)
        console.print(table)

    @cli.command("launch-spec")
    def launch_spec(
        gpu: str = typer.Option(..., help="Catalog slug of the GPU to rent."),
        upload: str = typer.Option(..., help="GPU Advisor server URL the report is uploaded to."),
        gpus: int = typer.Option(1, min=1, max=64, help="GPUs the job needs."),
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
            err_console.print(f"[red]{exc.message}[/red]")
            raise typer.Exit(2) from exc
        finally:
            engine.dispose()
        if output is None:
            print(text, end="")
        else:
            output.write_text(text, encoding="utf-8")
            console.print(f"wrote {output} (launch it with: sky launch -c advisor-bench {output})")


def _offers_table(page: OfferPage) -> Table:
    """The offers of a page as a table, stale ones marked."""
    # "(stale: …)" read as if every offer listed were stale: it says what the mark means
    table = Table(title=f"{page.total} offers ('stale': older than {page.stale_after_days} days)")
    for col in ("gpu", "kind", "provider / basis", "instance", "GPUs", "$/h", "spot $/h",
                "$ buy", "tier", "regions", "as of", "source"):  # fmt: skip
        table.add_column(col, overflow="fold")
    for o in page.items:
        table.add_row(
            o.gpu,
            o.kind,
            o.provider or o.condition or "",
            o.instance_type or "",
            str(o.gpus),
            f"{o.usd_per_hour:.2f}" if o.usd_per_hour is not None else "",
            f"{o.spot_usd_per_hour:.2f}" if o.spot_usd_per_hour is not None else "",
            f"{o.usd:,.0f}" if o.usd is not None else "",
            o.tier or "",
            str(o.regions) if o.regions is not None else "",
            o.as_of + (" (stale)" if o.stale else ""),
            o.source,
        )
    return table
