"""`gpu-advisor gpus`: the catalog's GPUs and their slugs, filtered as GET /api/v1/gpus is.

`offers list --gpu`, `launch-spec --gpu` and `bench --gpu` take a catalog slug, and their
refusals named GET /api/v1/gpus as the list of them, which a command-line user without a
server could not read."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.cli.json_errors import JsonUsageErrors
from app.config import Settings
from app.numbers import shown_of, sig_figs
from app.vocab import BACKENDS, CATALOG_PRECISIONS, SEGMENTS, VENDORS, choices

if TYPE_CHECKING:
    from app.offers.schemas import GpuListItem, GpuListPage

# Below this width the table keeps what picks a slug (the slug, memory, the two prices);
# --json has every field.
WIDE = 120


def register(cli: typer.Typer, console: Console, err_console: Console) -> None:
    @cli.command("gpus", cls=JsonUsageErrors)
    def gpus(
        vendor: list[str] = typer.Option(None, help=f"Only this vendor: {choices(VENDORS)}."),
        segment: list[str] = typer.Option(None, help=f"Only this segment: {choices(SEGMENTS)}."),
        architecture: list[str] = typer.Option(None, help="Only this architecture (Hopper, …)."),
        backend: str = typer.Option(None, help=f"Runs this backend: {choices(BACKENDS)}."),
        min_memory_gb: float = typer.Option(
            None, min=0, max=10_000, help="At least this memory (GiB)."
        ),
        max_memory_gb: float = typer.Option(
            None, min=0, max=10_000, help="At most this memory (GiB)."
        ),
        max_price_usd: float = typer.Option(
            None, help="Buy price (what a recommendation pays for one card) at most this."
        ),
        max_hourly_usd: float = typer.Option(
            None, help="Cheapest launchable on-demand $/GPU-hour at most this."
        ),
        precision: list[str] = typer.Option(
            None, help=f"Has a dense figure for it: {choices(CATALOG_PRECISIONS)}."
        ),
        feature: str = typer.Option(None, help="Hardware feature, e.g. bf16, fp8."),
        search: str = typer.Option(None, help="Free text in the name or slug."),
        sort: str = typer.Option(
            None, help="A numeric field, e.g. memory_gb or -buy_at.usd ('-': descending)."
        ),
        limit: int = typer.Option(500, min=1, max=500),
        offset: int = typer.Option(0, min=0, help="GPUs skipped first (the API's offset)."),
        as_json: bool = typer.Option(
            False, "--json", help="Print the GPUs as the API lists them (a JSON list)."
        ),
    ) -> None:
        """List the catalog's GPUs with their slugs, memory and prices (GET /api/v1/gpus)."""
        from app.cli.offers import _list_refusal, _print_json_list, _session_scope, say_more_pages
        from app.errors import AppError
        from app.offers.gpu_list import GpuQuery, gpu_list

        def refuse(field: str, message: str) -> NoReturn:
            _list_refusal(as_json, err_console, field, message)

        for field, given, allowed in (
            ("vendor", vendor, VENDORS),
            ("segment", segment, SEGMENTS),
            ("backend", [backend] if backend else [], BACKENDS),
            ("precision", precision, CATALOG_PRECISIONS),
        ):
            for value in given or []:
                # stripped as the API's _fold_case strips: "nvidia " is nvidia on both
                if value.strip().lower() not in allowed:
                    refuse(field, f"must be one of {choices(allowed)}, not {value!r}")
        for field, number in (
            ("max_price_usd", max_price_usd),
            ("max_hourly_usd", max_hourly_usd),
            ("min_memory_gb", min_memory_gb),
            ("max_memory_gb", max_memory_gb),
        ):
            # click's float range lets "nan" through (it compares false with both bounds)
            if number is not None and not math.isfinite(number):
                refuse(field, "must be a finite number")
            if number is not None and field.endswith("_usd") and number <= 0:
                refuse(field, "must be greater than 0")
        query = GpuQuery(
            vendors=[v.strip().lower() for v in vendor or []],
            segments=[s.strip().lower() for s in segment or []],
            architectures=[a.strip() for a in ",".join(architecture or []).split(",") if a.strip()],
            backend=backend.strip().lower() if backend else None,
            min_memory_gb=min_memory_gb,
            max_memory_gb=max_memory_gb,
            max_price_usd=max_price_usd,
            max_hourly_usd=max_hourly_usd,
            precisions=[p.strip().lower() for p in precision or []],
            feature=feature,
            q=search,
            sort=sort,
            limit=limit,
            offset=offset,
        )
        settings = Settings()
        engine, scope = _session_scope(settings)
        try:
            with scope as session:
                page = gpu_list(session, settings, query)
        except AppError as exc:
            named = "search" if exc.field == "q" else exc.field
            _list_refusal(as_json, err_console, named, exc.message, exc.code, exc)
        finally:
            engine.dispose()
        if as_json:
            _print_json_list(page.items)
            say_more_pages(err_console, "GPUs", page.total, page.offset, len(page.items))
            return
        console.print(gpus_table(page, console.width))
        console.print(gpus_note(console.width), highlight=False)


def gpus_table(page: GpuListPage, width: int) -> Table:
    """The GPUs of a page, one row each; the slug never folds (it is what the user copies)."""
    wide = width >= WIDE
    count = shown_of(len(page.items), page.total)
    # the title only counts: Rich wraps a title to the table's width, and a narrow table had
    # folded its notes over three centred lines (gpus_note says them below, at full width)
    table = Table(title=f"{count} GPUs", box=box.SIMPLE_HEAD, pad_edge=False)
    columns: list[tuple[str, str, Callable[[GpuListItem], str]]] = [
        ("slug", "slug", lambda g: g.slug),
        ("name", "text", lambda g: g.name),
        ("GiB", "number", lambda g: _figure(g.memory_gb)),
        ("GB/s", "number", lambda g: _figure(g.memory_bandwidth_gbs)),
        ("BF16 TFLOPS", "number", lambda g: _figure(g.bf16_tflops)),
        ("from $/GPU-h", "number", _hourly),
        ("buy $", "number", _buy),
    ]
    if not wide:
        columns = [c for c in columns if c[0] not in _NARROW_DROPS]
    for name, kind, _ in columns:
        if kind == "text":
            table.add_column(name, overflow="fold")
        else:
            table.add_column(name, no_wrap=True, justify="right" if kind == "number" else "left")
    for g in page.items:
        # catalog text is data, never markup: a name with "[/]" in it had crashed the table
        table.add_row(*(escape(cell(g)) for _, _, cell in columns))
    return table


def gpus_note(width: int) -> str:
    """The line under ``gpus_table``: what its slugs and prices are, and at a width that drops
    columns, how to see them."""
    note = "Slugs are for --gpu; prices come from the offers."
    if width < WIDE:
        note += (
            f" Widen the terminal to {WIDE} columns for name, bandwidth and BF16, or use --json."
        )
    return note


_NARROW_DROPS = frozenset({"name", "GB/s", "BF16 TFLOPS"})


def _figure(value: float | None) -> str:
    return sig_figs(value) if value is not None else ""


def _hourly(g: GpuListItem) -> str:
    """Cents from $1 up; below it three significant figures, as the API gives them ($0.0725
    had read "0.07")."""
    r = g.rent_from
    if r is None or r.usd_per_gpu_hour is None:
        return ""
    usd = r.usd_per_gpu_hour
    return f"{usd:,.2f}" if usd >= 1 else sig_figs(usd)


def _buy(g: GpuListItem) -> str:
    b = g.buy_at
    if b is None or b.usd is None:
        return ""
    return f"{b.usd:,.0f} {b.condition}" if b.condition else f"{b.usd:,.0f}"
