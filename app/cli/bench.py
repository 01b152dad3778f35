"""`gpu-advisor bench`: measure this machine; match it to the catalog; save/upload."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from app.cli.json_errors import JsonUsageErrors
from app.config import Settings


def slug_suggestions(given: str, slugs: list[str], n: int = 5) -> list[str]:
    """The catalog slugs nearest ``given``: those it begins (``h100`` → h100-nvl,
    h100-pcie, h100-sxm), then the closest spellings."""
    g = given.strip().lower()
    starts = sorted(s for s in slugs if g and s.startswith(g))
    close = difflib.get_close_matches(g, slugs, n=n, cutoff=0.6)
    return list(dict.fromkeys([*starts, *close]))[:n]


def resolve_slug(gpu_slug: str, slugs: list[str]) -> str:
    """The catalog slug ``gpu_slug`` names, whatever its case (H100-SXM is h100-sxm); a
    slug the catalog lacks is refused with the nearest slugs."""
    by_lower = {s.lower(): s for s in slugs}
    found = by_lower.get(gpu_slug.strip().lower())
    if found is not None:
        return found
    near = slug_suggestions(gpu_slug, slugs)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise typer.BadParameter(
        f"'{gpu_slug}' is not a catalog slug{hint} (`gpu-advisor gpus` and "
        "GET /api/v1/gpus list them)",
        param_hint="--gpu",
    )


def catalog_lookup(gpu_slug: str | None) -> Callable[[str, float | None], Any]:
    """A peaks lookup for the bench command, reading the shipped catalog files.

    The bench runner never touches the database; matching uses the same catalog data.
    """
    from app.catalog.loader import read_gpu_specs
    from app.reports.matching import match_device
    from app.reports.service import peaks_for

    specs = read_gpu_specs(Settings().data_dir)
    by_slug = {g.slug: g for g in specs}
    if gpu_slug is not None:
        gpu_slug = resolve_slug(gpu_slug, list(by_slug))

    def lookup(device_name: str, memory_gb: float | None) -> tuple[str, str, dict] | None:
        gpu = by_slug[gpu_slug] if gpu_slug else match_device(device_name, memory_gb, specs)
        if gpu is None:
            return None
        return gpu.slug, gpu.name, peaks_for(gpu)

    return lookup


def register(cli: typer.Typer, console: Console, err: Console) -> None:
    from app.bench.command import EXIT_HELP

    @cli.command(cls=JsonUsageErrors, epilog=EXIT_HELP)
    def bench(
        profile: str = typer.Option("quick", help="quick (< 20 s on a laptop CPU) | standard"),
        device: str = typer.Option("auto", help="auto | cpu | cuda:0 | mps | xpu"),
        output: Path = typer.Option(None, help="Write the report JSON here."),
        upload: str = typer.Option(
            None, help="Server base URL to upload the report to, like http://host:8000."
        ),
        token: str = typer.Option(
            None, help="Bearer token for the upload, if the server needs one."
        ),
        gpu: str = typer.Option(
            None, help="Catalog slug of this GPU (any case), to override matching."
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help="Print the report's summary and where it was stored as JSON on stdout "
            "(the table and progress go to stderr).",
        ),
        progress_jsonl: Path = typer.Option(None, hidden=True, help="Append progress events here."),
    ) -> None:
        """Benchmark this machine with PyTorch and print what it achieved."""
        from app.bench.command import bench_command

        try:
            lookup = catalog_lookup(gpu)
        except typer.BadParameter as exc:
            if not as_json:
                raise
            from app.cli.recommend import error_json

            named = {"field": "gpu", "flag": "--gpu"}
            print(error_json("invalid_input", exc.format_message(), named))
            raise typer.Exit(2) from exc
        code = bench_command(
            profile=profile,
            device=device,
            output=output,
            upload=upload,
            token=token,
            gpu=gpu,
            peaks_lookup=lookup,
            progress_jsonl=progress_jsonl,
            as_json=as_json,
        )
        if code:
            raise typer.Exit(code)

    @cli.command("upload", cls=JsonUsageErrors, epilog=UPLOAD_EXIT_HELP)
    def upload_(
        file: Path = typer.Argument(
            ..., metavar="FILE", help="A report `gpu-advisor bench --output` wrote."
        ),
        server: str = typer.Option(
            ..., help="The server's base URL, like http://host:8000 (as bench --upload)."
        ),
        token: str = typer.Option(
            None, help="Bearer token for the upload, if the server needs one."
        ),
        as_json: bool = typer.Option(
            False, "--json", help="Print the stored id and page as JSON on stdout."
        ),
    ) -> None:
        """Upload a saved benchmark report (stored once: sending it again stores nothing)."""
        from app.bench.command import upload_command

        code = upload_command(file, server, token, as_json=as_json)
        if code:
            raise typer.Exit(code)


UPLOAD_EXIT_HELP = (
    "Exit status: 0 stored, or already stored (said so); 1 the upload failed; 2 a file that "
    "is not a bench report or a --server URL without http:// or https://. With --json, "
    'stdout is {"id", "url", "duplicate"} (duplicate as the API says it: true where the '
    'server already held the report) or the API\'s {"error": {"code", "message", '
    '"details"}}, details always there (the field at fault; a refused upload, the '
    "server's status too)."
)
