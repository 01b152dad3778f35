"""Throughput-versus-latency charts for serving configurations (server-rendered SVG).

One chart per top configuration: inter-token latency against output tokens/s as the number of
concurrent requests grows to saturation, with the asked load and the ITL target marked; an
encoder's (an embedding model, a reranker) its request latency against embeddings/s, with its
latency target."""

from __future__ import annotations

from app.recommend import schemas as rs
from app.vocab import runtime_name
from app.web import charts

CHARTS = 3


def serving_charts(answer: rs.RecommendationResponse) -> list[tuple[str, charts.Chart, list[str]]]:
    """(caption, chart, legend names) for the first configurations on the page: latency between
    tokens against throughput, with the ITL target; and time to first token, with the TTFT
    target, when the user set one."""
    if answer.serving is None:
        return []
    rows = answer.recommendations or answer.serving.closest
    # the targets, as the request set them: the same for every row charted
    sw = answer.workload.serving
    p95 = sw is not None and sw.target_percentile == "p95"
    itl_target = sw.itl_ms_target if sw else None
    itl_default = sw is not None and sw.itl_ms_target_basis != "yours"
    ttft_target = sw.ttft_ms_target if sw else None
    ttft_yours = sw is not None and sw.ttft_ms_target_basis == "yours"
    out = []
    for row in rows[:CHARTS]:
        sv = row.serving
        if sv is not None and sv.kind == "encoder" and sv.encoder_curve:
            out.append(_encoder_chart(row, sv, ttft_target, p95))
            continue
        if sv is None or not sv.curve:
            continue
        out.append(_chart(row, sv, "itl", itl_target, itl_default, p95))
        if ttft_target and ttft_yours:
            out.append(_chart(row, sv, "ttft", ttft_target, False, p95))
    return out


METRICS = {
    "itl": ("inter-token latency, ms", "ITL target", "latency between tokens"),
    "ttft": ("time to first token, ms", "TTFT target", "time to first token"),
}


def judged_at_load(sv: rs.ServingOut, metric: str, p95: bool) -> float | None:
    """The row's latency at the asked load that its target is judged on: the p95 figure where
    the request asks p95 (the table's and the CLI's column), else the mean."""
    if metric == "itl":
        return sv.itl_p95_ms if p95 else sv.itl_ms
    return sv.ttft_p95_ms if p95 else sv.ttft_ms


def _your_load(x: float, y: float, title: str) -> dict[str, object]:
    """The asked load's point on a chart, drawn apart from the curve."""
    return {"x": x, "y": y, "label": "", "title": title, "emphasis": True}


def _target_line(
    curve: list[dict[str, object]], target: float, label: str
) -> list[dict[str, object]]:
    """A latency target drawn across the curve's throughputs."""
    xs = [float(p["x"]) for p in curve]  # type: ignore[arg-type]
    return [{"x": x, "y": target, "label": "", "title": label} for x in (min(xs), max(xs))]


def _chart(
    row: rs.Recommendation,
    sv: rs.ServingOut,
    metric: str,
    target: float | None,
    default: bool,
    p95: bool = False,
) -> tuple[str, charts.Chart, list[str]]:
    """One metric's curve against throughput, the asked load marked at the figure its target is
    judged on and the target drawn. The curve's points are the model's means (the domain's
    curve carries no percentile): under p95 the marked load sits above them, and both say so."""
    y_label, target_name, words = METRICS[metric]

    def y_of(p: rs.CurvePointOut) -> float:
        return p.itl_ms if metric == "itl" else p.ttft_ms

    curve = [
        {
            "x": p.output_tokens_per_s,
            "y": y_of(p),
            # the ITL chart labels its points with the concurrency; TTFT's curve is flat then
            # steep, so its labels would sit on points: the tooltip carries it instead
            "label": f"{p.concurrency * sv.replicas:,}" if metric == "itl" else "",
            "title": f"{p.concurrency * sv.replicas:,} concurrent: ITL {p.itl_ms:,.1f} ms, "
            f"TTFT {p.ttft_ms:,.0f} ms, {p.output_tokens_per_s:,.0f} output tokens/s",
        }
        for p in sv.curve
    ]
    series: list[tuple[str, list[dict[str, object]]]] = [("as concurrency grows", curve)]
    means = ", means" if p95 else ""
    names = [
        f"as concurrency grows (labels: concurrent requests{means})"
        if metric == "itl"
        else f"as concurrency grows{' (means)' if p95 else ''}"
    ]
    at_load = judged_at_load(sv, metric, p95)
    if sv.output_tokens_per_s and at_load:
        load_name = "your load, p95 (the targets' percentile)" if p95 else "your load"
        pct = "p95 " if p95 else ""
        point = _your_load(
            sv.output_tokens_per_s,
            at_load,
            f"your load: {pct}{words} {at_load:,.1f} ms, "
            f"{sv.output_tokens_per_s:,.0f} output tokens/s",
        )
        series.append(("your load", [point]))
        names.append(load_name)
    if target:
        label = f"{target_name} ({target:g} ms{', default' if default else ''})"
        series.append((target_name, _target_line(curve, target, label)))
        names.append(label)
    chart = charts.xy_chart(
        series, x_label="output tokens/s (all replicas)", y_label=y_label, log_x=True, log_y=True
    )
    shape = f"{sv.replicas} × {sv.gpus_per_replica}"
    caption = (
        f"#{row.rank} {row.gpu.name}, {shape} GPU, {sv.weight_precision} weights, "
        f"{sv.kv_cache_precision} KV: {words} vs throughput up to saturation"
    )
    return caption, chart, names


def _encoder_chart(
    row: rs.Recommendation, sv: rs.ServingOut, target: float | None, p95: bool
) -> tuple[str, charts.Chart, list[str]]:
    """An encoder row's latency (p95 where the targets are judged at p95, as its table column)
    against embeddings/s as concurrent clients grow past saturation, the asked load marked and
    the latency target drawn."""
    pct = "p95 " if p95 else ""
    curve = [
        {
            "x": p.embeddings_per_s,
            "y": p.latency_p95_ms if p95 else p.latency_ms,
            "label": f"{p.clients:,}",
            "title": f"{p.clients:,} concurrent: latency {p.latency_ms:,.1f} ms (p95 "
            f"{p.latency_p95_ms:,.1f}), {p.embeddings_per_s:,.0f} embeddings/s",
        }
        for p in sv.encoder_curve
    ]
    series: list[tuple[str, list[dict[str, object]]]] = [("as clients grow", curve)]
    names = ["as concurrent clients grow (labels: clients)"]
    at_load = judged_at_load(sv, "ttft", p95)  # an encoder's latency is its ttft_ms
    if sv.embeddings_per_s and at_load:
        point = _your_load(
            sv.embeddings_per_s,
            at_load,
            f"your load: {pct}latency {at_load:,.1f} ms, {sv.embeddings_per_s:,.0f} embeddings/s",
        )
        series.append(("your load", [point]))
        names.append("your load")
    if target:
        label = f"latency target ({target:g} ms)"
        series.append(("latency target", _target_line(curve, target, label)))
        names.append(label)
    chart = charts.xy_chart(
        series,
        x_label="embeddings/s (all replicas)",
        y_label=f"{pct}latency, ms",
        log_x=True,
        log_y=True,
    )
    caption = (
        f"#{row.rank} {row.gpu.name}, {sv.replicas} × 1 GPU, {sv.weight_precision} on "
        f"{runtime_name(sv.runtime)}: {pct}latency vs embeddings/s up to saturation"
    )
    return caption, chart, names
