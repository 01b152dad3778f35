"""gpu-advisor: serve | db (upgrade, seed) | bench | recommend."""

from __future__ import annotations

import sys
from typing import Any

import typer
from rich.console import Console

from app.config import Settings

cli = typer.Typer(help="GPU Advisor: pick the GPU for a deep-learning job.", no_args_is_help=True)
db_cli = typer.Typer(help="Database schema and catalog data.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
console = Console()
err_console = Console(stderr=True)


def worker_app() -> Any:
    """uvicorn factory for `serve`: the parent already migrated and seeded."""
    from app.main import create_app

    return create_app(Settings(migrate_on_start=False, seed_on_start=False))


@cli.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to bind."),
    port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, min=1, max=64, help="Worker processes."),
) -> None:
    """Migrate and seed the database, then serve the web app and API."""
    import uvicorn

    from app.main import prepare_database

    settings = Settings()
    prepare_database(settings)
    console.print(f"GPU Advisor on http://{host}:{port}  (database: {_safe_url(settings)})")
    uvicorn.run("app.cli:worker_app", factory=True, host=host, port=port, workers=workers)


def _safe_url(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)


@db_cli.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply migrations up to REVISION (default: head)."""
    from app import migrate
    from app.db import make_engine

    settings = Settings()
    engine = make_engine(settings.database_url)
    migrate.upgrade(engine, revision)
    engine.dispose()
    console.print(f"database at {revision}: {_safe_url(settings)}")


@db_cli.command("seed")
def db_seed() -> None:
    """Load the shipped catalog (idempotent; keeps rows users added or edited)."""
    from app.catalog.loader import CatalogDataError, seed
    from app.db import make_engine, make_session_factory, session_scope
    from app.offers.loader import seed as seed_offers

    settings = Settings()
    engine = make_engine(settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            result = seed(session, settings.data_dir)
            seed_offers(session, settings.data_dir)
    except CatalogDataError as exc:
        err_console.print(f"[red]catalog data error:[/red] {exc}")
        raise typer.Exit(2) from exc
    finally:
        engine.dispose()
    console.print(
        f"catalog: {result.inserted} inserted, {result.updated} updated, "
        f"{result.unchanged} unchanged, {result.kept_user} user-edited kept"
    )


def _register_feature_commands() -> None:
    from app import cli_bench, cli_offers, cli_recommend

    cli_recommend.register(cli, console, err_console)
    cli_bench.register(cli, console, err_console)
    cli_offers.register(cli, console, err_console)


_register_feature_commands()


def main() -> None:
    try:
        cli()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
