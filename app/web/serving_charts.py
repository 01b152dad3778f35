"""Throughput-versus-latency charts for serving configurations (server-rendered SVG).

One chart per top configuration: inter-token latency against output tokens/s as the number of
concurrent requests grows to saturation, with the asked load and the ITL target marked."""

from __future__ import annotations

from app.recommend import schemas as rs
from app.web import charts

CHARTS = 3


def serving_charts(answer: rs.RecommendationResponse) -> list[tuple[str, charts.Chart, list[str]]]:
    """(caption, chart, legend names) for the first configurations on the page."""
    if answer.serving is None:
        return []
    rows = answer.recommendations or answer.serving.closest
    target = answer.workload.serving.itl_ms_target if answer.workload.serving else None
    out = []
    for row in rows[:CHARTS]:
        sv = row.serving
        if sv is None or not sv.curve:
            continue
        curve = [
            {
                "x": p.output_tokens_per_s,
                "y": p.itl_ms,
                "label": f"{p.concurrency * sv.replicas:,}",
                "title": f"{p.concurrency * sv.replicas:,} concurrent: ITL {p.itl_ms:,.1f} ms, "
                f"TTFT {p.ttft_ms:,.0f} ms, {p.output_tokens_per_s:,.0f} output tokens/s",
            }
            for p in sv.curve
        ]
        series: list[tuple[str, list[dict[str, object]]]] = [("as concurrency grows", curve)]
        names = ["as concurrency grows (labels: concurrent requests)"]
        if sv.output_tokens_per_s and sv.itl_ms:
            series.append(
                (
                    "your load",
                    [
                        {
                            "x": sv.output_tokens_per_s,
                            "y": sv.itl_ms,
                            "label": "",
                            "title": f"your load: ITL {sv.itl_ms:,.1f} ms, "
                            f"{sv.output_tokens_per_s:,.0f} output tokens/s",
                            "emphasis": True,
                        }
                    ],
                )
            )
            names.append("your load")
        if target:
            xs = [float(p["x"]) for p in curve]  # type: ignore[arg-type]
            series.append(
                (
                    "ITL target",
                    [
                        {"x": min(xs), "y": target, "label": "", "title": f"target {target:g} ms"},
                        {"x": max(xs), "y": target, "label": "", "title": f"target {target:g} ms"},
                    ],
                )
            )
            names.append(f"ITL target ({target:g} ms)")
        chart = charts.xy_chart(
            series,
            x_label="output tokens/s (all replicas)",
            y_label="inter-token latency, ms",
            log_x=True,
            log_y=True,
        )
        shape = f"{sv.replicas} × {sv.gpus_per_replica}"
        caption = (
            f"#{row.rank} {row.gpu.name}, {shape} GPU, {sv.weight_precision} weights, "
            f"{sv.kv_cache_precision} KV: latency vs throughput up to saturation"
        )
        out.append((caption, chart, names))
    return out
