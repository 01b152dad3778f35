"""`gpu-advisor recommend`: the ranking as a table, with the API's options."""

from __future__ import annotations

import json
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from app.config import Settings
from app.errors import AppError, field_path
from app.vocab import (
    ACQUISITIONS,
    FAMILIES,
    FRAMEWORKS,
    OBJECTIVES,
    OPTIMIZERS,
    PEFTS,
    PRECISIONS,
    TASKS,
    choices,
)


def _fmt(value: float | None, digits: int = 1, unit: str = "") -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}{unit}"
    return f"{value:.{digits}f}{unit}"


def build_request(options: dict[str, Any]) -> dict[str, Any]:
    model = {
        k: options[k]
        for k in ("family", "params", "layers", "hidden_size", "num_heads", "num_kv_heads",
                  "vocab_size", "gflops_per_sample", "input_size")
        if options.get(k) is not None
    }  # fmt: skip
    workload = {
        k: options[k]
        for k in ("preset", "task", "precision", "batch_size", "seq_len", "output_tokens",
                  "optimizer", "peft", "gradient_checkpointing", "dataset_samples", "epochs",
                  "latency_target_ms")
        if options.get(k) is not None
    }  # fmt: skip
    if model:
        workload["model"] = model
    constraints = {
        k: options[k]
        for k in ("framework", "max_purchase_usd", "max_hourly_usd", "max_job_cost_usd",
                  "acquisition", "max_gpus", "electricity_usd_per_kwh")
        if options.get(k) is not None
    }  # fmt: skip
    if options.get("vendors"):
        constraints["vendors"] = options["vendors"]
    if options.get("segments"):
        constraints["segments"] = options["segments"]
    request: dict[str, Any] = {
        "workload": workload,
        "constraints": constraints,
        "objective": options["objective"],
        "limit": options["limit"],
    }
    if options.get("device_report_id") is not None:
        request["device_report_id"] = options["device_report_id"]
    return request


def run(options: dict[str, Any], as_json: bool, console: Console, err: Console) -> int:
    from app.db import make_engine, make_session_factory, session_scope
    from app.main import prepare_database
    from app.recommend.orchestrate import recommend_for
    from app.recommend.schemas import RecommendationRequest

    try:
        request = RecommendationRequest.model_validate(build_request(options))
    except ValidationError as exc:
        for e in exc.errors():
            err.print(f"[red]{field_path(e['loc'], 'request')}[/red]: {e['msg']}")
        return 2
    settings = Settings()
    prepare_database(settings)
    engine = make_engine(settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            response = recommend_for(session, settings, request)
    except AppError as exc:
        err.print(f"[red]{exc.field or 'error'}[/red]: {exc.message}")
        return 2
    finally:
        engine.dispose()
    if as_json:
        console.print_json(json.dumps(response.model_dump(mode="json")))
        return 0
    render(response, console)
    return 0


def render(response: Any, console: Console) -> None:
    w = response.workload
    console.print(
        f"[bold]{w.preset or w.model.family}[/bold] {w.task}, {w.precision}, batch {w.batch_size}"
        f" — needs {response.memory.required_gb:.1f} GB; objective: {response.objective}"
    )
    table = Table(show_lines=False)
    if response.baseline is not None:
        table.add_column("vs yours", justify="right")
    for col in (
        "#",
        "GPU",
        "N",
        "memory GB",
        "throughput",
        "bottleneck",
        "$/h (all)",
        "buy $ (all)",
        "to finish",
        "range",
    ):
        left = col in ("GPU", "bottleneck")
        table.add_column(col, justify="left" if left else "right")
    for r in response.recommendations:
        cost = r.cost
        finish = r.time_to_finish_h
        extra = [f"{r.speedup_vs_baseline:.1f}×" if r.speedup_vs_baseline else "—"]
        table.add_row(
            *(extra if response.baseline is not None else []),
            str(r.rank),
            r.gpu.name,
            str(r.num_gpus),
            f"{r.memory.required_gb:.1f}/{r.memory.available_gb:.0f}",
            f"{_fmt(r.throughput.value)} {r.throughput.unit}",
            r.bottleneck,
            _fmt(cost.hourly_usd, 2),
            _fmt(cost.purchase_usd, 0),
            f"{_fmt(finish)} h" if finish is not None else "—",
            f"{_fmt(r.uncertainty.low)}–{_fmt(r.uncertainty.high)}",
        )
    console.print(table)
    if response.recommendations:
        top = response.recommendations[0]
        console.print(f"[bold]Why {top.gpu.name}:[/bold] " + " ".join(top.explanation))
        for tip in top.tips[:4]:
            console.print(f"  • {tip}")
    if response.baseline is not None and response.baseline.tips:
        console.print(f"[bold]Measured on your machine ({response.baseline.source}):[/bold]")
        for tip in response.baseline.tips:
            console.print(f"  • {tip}")
    for warning in response.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    console.print(f"{len(response.excluded)} GPUs excluded (use --json for the reasons).")


def register(cli: typer.Typer, console: Console, err: Console) -> None:
    @cli.command()
    def recommend(
        preset: str = typer.Option(None, help="Workload preset id (see /api/v1/workloads)."),
        task: str = typer.Option(None, help=choices(TASKS)),
        family: str = typer.Option(None, help=choices(FAMILIES)),
        params: float = typer.Option(None, help="Parameter count, e.g. 7e9."),
        layers: int = typer.Option(None),
        hidden_size: int = typer.Option(None),
        num_heads: int = typer.Option(None),
        num_kv_heads: int = typer.Option(None),
        vocab_size: int = typer.Option(None),
        gflops_per_sample: float = typer.Option(None, help="Forward GFLOPs per sample."),
        input_size: float = typer.Option(None),
        precision: str = typer.Option(None, help=choices(PRECISIONS)),
        batch_size: int = typer.Option(None),
        seq_len: int = typer.Option(None),
        output_tokens: int = typer.Option(None),
        optimizer: str = typer.Option(None, help=choices(OPTIMIZERS)),
        peft: str = typer.Option(None, help=choices(PEFTS)),
        gradient_checkpointing: bool = typer.Option(None, "--checkpointing/--no-checkpointing"),
        dataset_samples: float = typer.Option(None),
        epochs: float = typer.Option(None),
        latency_target_ms: float = typer.Option(None),
        framework: str = typer.Option(None, help=choices(FRAMEWORKS)),
        max_purchase_usd: float = typer.Option(None),
        max_hourly_usd: float = typer.Option(None),
        max_job_cost_usd: float = typer.Option(None),
        acquisition: str = typer.Option(None, help=choices(ACQUISITIONS)),
        vendor: list[str] = typer.Option(None, help="Repeat to allow several."),
        segment: list[str] = typer.Option(None, help="Repeat to allow several."),
        max_gpus: int = typer.Option(None),
        electricity_usd_per_kwh: float = typer.Option(None),
        objective: str = typer.Option("balanced", help=choices(OBJECTIVES)),
        limit: int = typer.Option(10, help="Rows to show (≤ 500)."),
        device_report: int = typer.Option(None, help="Calibrate with this stored device report."),
        as_json: bool = typer.Option(False, "--json", help="Print the API's JSON response."),
    ) -> None:
        """Rank GPUs for a workload, as a table (same engine and options as the API)."""
        options = dict(locals())
        options["vendors"] = vendor
        options["segments"] = segment
        options["device_report_id"] = device_report
        code = run(options, as_json, console, err)
        if code:
            raise typer.Exit(code)
