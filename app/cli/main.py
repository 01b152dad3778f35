"""gpu-advisor: serve | db (upgrade, seed) | bench | recommend | gpus | offers."""

from __future__ import annotations

import sys
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from app.config import Settings


def _flags_show_no_type() -> None:
    """Typer's rich help prints every option's type, a flag's too ("--json <bool>"), which
    reads as a flag that takes a value ("--json true"); its plain help, and click's, print a
    flag bare. One patch here, before any command is built, covers every command's flags and
    Typer's own (--help, --install-completion); an option that takes a value keeps its type."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_flags_bare", False):
        return  # another Typer, where the patch does not apply (its test says so), or done

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        return shown(self, ctx)

    display_type_rich._flags_bare = True  # type: ignore[attr-defined]
    setattr(TyperOption, "display_type_rich", display_type_rich)  # noqa: B010


_flags_show_no_type()

cli = typer.Typer(help="GPU Advisor: pick the GPU for a deep-learning job.", no_args_is_help=True)
db_cli = typer.Typer(help="Database schema and catalog data.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)


def worker_app() -> Any:
    """uvicorn factory for `serve`: the parent already migrated and seeded."""
    from app.main import create_app

    # The event loop shares the GIL with the request threads; a shorter switch interval
    # (default 5 ms) lets it accept connections and answer probes promptly under load.
    sys.setswitchinterval(0.001)

    return create_app(Settings(migrate_on_start=False, seed_on_start=False))


def supervised_worker_app() -> Any:
    """uvicorn factory for `serve --workers N` (N > 1): each worker exits with its master."""
    from app.system.process import exit_with_parent

    exit_with_parent()
    return worker_app()


# A short_help where the docstring's first paragraph runs over lines: Typer's command list
# keeps a docstring's line breaks, which broke `gpu-advisor --help` mid-sentence.
@cli.command(short_help="Serve the web app and API (migrating and seeding only when needed).")
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to bind."),
    port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, min=1, max=64, help="Web worker processes."),
    no_worker: bool = typer.Option(
        False,
        "--no-worker",
        help="Do not start a local benchmark worker (runs then need "
        "`gpu-advisor worker` somewhere).",
    ),
) -> None:
    """Serve the web app and API. Migrates and seeds first only when needed (schema behind
    head, shipped data changed), under the database's lock; `gpu-advisor db upgrade` is the
    explicit step."""
    import uvicorn

    from app.system import migrate
    from app.system.listen import cannot_listen

    problem = cannot_listen(host, port)
    if problem:
        err_console.print(f"error: {problem}", soft_wrap=True, markup=False)
        raise typer.Exit(1)
    settings = Settings()
    migrate.prepare(settings)  # at head with the same data: two small queries
    # soft_wrap: an address is one word, never broken by Rich at 80 columns (a pipe, a log)
    console.print(
        f"GPU Advisor on http://{host}:{port}  (database: {_safe_url(settings)})",
        soft_wrap=True,
        markup=False,
    )
    bench_worker = None if no_worker else _start_local_worker()
    factory = "app.cli.main:supervised_worker_app" if workers > 1 else "app.cli.main:worker_app"
    try:
        # Keep idle connections longer than a load balancer's idle timeout (commonly 60 s), so
        # the server never closes one the balancer or a client is about to reuse.
        uvicorn.run(factory, factory=True, host=host, port=port, workers=workers,
                    timeout_keep_alive=75, log_config=_uvicorn_logs(settings))  # fmt: skip
    finally:
        if bench_worker is not None:
            bench_worker.terminate()
            try:
                bench_worker.wait(timeout=10)
            except Exception:
                bench_worker.kill()


def _uvicorn_logs(settings: Settings) -> dict[str, Any]:
    from app.http.observability import uvicorn_log_config

    return uvicorn_log_config(settings.log_level, json_lines=settings.log_format == "json")


def worker_logging(settings: Settings) -> None:
    """The worker's lines, its queue's (Huey's "Executing …") included, in the configured
    format: a basicConfig had written them as plain text into `serve`'s JSON log."""
    from app.http.observability import configure_logging

    json_lines = settings.log_format == "json"
    configure_logging(settings.log_level, json_lines=json_lines, loggers=("gpu_advisor", "huey"))


def _start_local_worker() -> Any:
    """`gpu-advisor worker` for this host, as a child that dies with `serve`."""
    import subprocess

    from app.system.process import die_with_parent

    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "worker"],
        preexec_fn=die_with_parent,
        stdin=subprocess.DEVNULL,
    )


@cli.command()
def worker(
    label: str | None = typer.Option(
        None, help="This worker's label; runs asked for it come here (default: host name)."
    ),
) -> None:
    """Take benchmark runs from the queue and run them on this machine, one at a time."""
    from app.reports.executor import run_worker
    from app.reports.queue import default_label, queue_location, safe_location

    settings = Settings()
    worker_logging(settings)
    name = label or default_label(settings)
    queue = safe_location(queue_location(settings))
    console.print(f"benchmark worker '{name}' on queue {queue}", soft_wrap=True, markup=False)
    run_worker(settings, name)


def _safe_url(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)


def _bad_revision(exc: Exception) -> bool:
    """Whether alembic refused the REVISION argument itself: "Can't locate revision identified
    by 'x'" (its ResolutionError, alembic/script/base.py _catch_revision_errors), or a
    revision upgrade cannot reach from the current head ("Destination x is not a valid upgrade
    target"). Every other CommandError is not the argument's fault."""
    from alembic.script.revision import RangeNotAncestorError, ResolutionError

    cause = exc.__cause__
    return str(exc).startswith("Can't locate revision") or isinstance(
        cause, ResolutionError | RangeNotAncestorError
    )


@db_cli.command(
    "upgrade",
    short_help="Apply migrations up to REVISION (default: head) and load the shipped catalog.",
)
def db_upgrade(revision: str = typer.Argument("head", metavar="REVISION")) -> None:
    """Apply migrations up to REVISION (default: head) and load the shipped catalog, under a
    lock: safe when several processes run it at once."""
    from alembic.util.exc import CommandError

    from app.catalog.loader import CatalogDataError
    from app.system import migrate

    settings = Settings()
    try:
        migrate.prepare(settings, revision=revision, seed=revision == "head")
    except CatalogDataError as exc:
        err_console.print(f"[red]catalog data error:[/red] {escape(str(exc))}", emoji=False)
        raise typer.Exit(2) from exc
    except CommandError as exc:
        if not _bad_revision(exc):
            raise  # multiple heads, a missing script location: the install's fault, a traceback
        # an unknown revision, or one upgrade cannot reach: alembic's own words name it
        err_console.print(f"[red]REVISION[/red]: {escape(str(exc))}", emoji=False)
        raise typer.Exit(2) from exc
    # soft_wrap: Rich had broken the line before the URL at 80 columns ("database at head:
    # " then "sqlite:////home/…"), in `make run`'s first lines
    console.print(f"database at {revision}: {_safe_url(settings)}", soft_wrap=True, markup=False)


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
        err_console.print(f"[red]catalog data error:[/red] {escape(str(exc))}", emoji=False)
        raise typer.Exit(2) from exc
    finally:
        engine.dispose()
    console.print(
        f"catalog: {result.inserted} inserted, {result.updated} updated, "
        f"{result.unchanged} unchanged, {result.kept_user} user-edited kept"
    )


def _register_feature_commands() -> None:
    from app.cli import bench, gpus, offers, recommend

    recommend.register(cli, console, err_console)
    bench.register(cli, console, err_console)
    offers.register(cli, console, err_console)
    gpus.register(cli, console, err_console)


_register_feature_commands()


def main() -> None:
    from app.cli.failures import explain

    try:
        cli()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        status = explain(exc, sys.argv[1:])
        if status is None:
            raise
        sys.exit(status)


if __name__ == "__main__":
    main()
