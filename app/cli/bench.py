"""`gpu-advisor bench`: measure this machine; match it to the catalog; save/upload."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from app.config import Settings


def catalog_lookup(gpu_slug: str | None) -> Callable[[str, float | None], Any]:
    """A peaks lookup for the bench command, reading the shipped catalog files.

    The bench runner never touches the database; matching uses the same catalog data.
    """
    from app.catalog.loader import read_gpu_specs
    from app.reports.matching import match_device
    from app.reports.service import peaks_for

    specs = read_gpu_specs(Settings().data_dir)
    by_slug = {g.slug: g for g in specs}
    if gpu_slug is not None and gpu_slug not in by_slug:
        raise typer.BadParameter(f"'{gpu_slug}' is not a catalog slug", param_hint="--gpu")

    def lookup(device_name: str, memory_gb: float | None) -> tuple[str, str, dict] | None:
        gpu = by_slug[gpu_slug] if gpu_slug else match_device(device_name, memory_gb, specs)
        if gpu is None:
            return None
        return gpu.slug, gpu.name, peaks_for(gpu)

    return lookup


def register(cli: typer.Typer, console: Console, err: Console) -> None:
    @cli.command()
    def bench(
        profile: str = typer.Option("quick", help="quick (< 20 s on a laptop CPU) | standard"),
        device: str = typer.Option("auto", help="auto | cpu | cuda:0 | mps | xpu"),
        output: Path = typer.Option(None, help="Write the report JSON here."),
        upload: str = typer.Option(None, help="Server base URL to upload the report to."),
        token: str = typer.Option(
            None, help="Bearer token for the upload, if the server needs one."
        ),
        gpu: str = typer.Option(None, help="Catalog slug of this GPU, to override matching."),
        progress_jsonl: Path = typer.Option(None, hidden=True, help="Append progress events here."),
    ) -> None:
        """Benchmark this machine with PyTorch and print what it achieved."""
        if profile not in ("quick", "standard"):
            raise typer.BadParameter("quick or standard", param_hint="--profile")
        from app.bench.command import bench_command

        code = bench_command(
            profile=profile,
            device=device,
            output=output,
            upload=upload,
            token=token,
            gpu=gpu,
            peaks_lookup=catalog_lookup(gpu),
            progress_jsonl=progress_jsonl,
        )
        if code:
            raise typer.Exit(code)
