"""Chart geometry for hand-written SVG charts (no JavaScript, no library, works offline).

Functions here turn numbers into pixel coordinates and tick labels; the ``_chart_*.html``
partials draw them. Labels stay plain strings so the templates escape them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from app.web.templating import num

WIDTH = 640
HEIGHT = 360
MARGIN_L = 64
MARGIN_R = 20
MARGIN_T = 16
MARGIN_B = 48


@dataclass
class Tick:
    pos: float
    text: str


@dataclass
class Point:
    x: float
    y: float
    label: str
    title: str
    href: str | None = None
    emphasis: bool = False
    series: int = 0
    anchor_end: bool = False  # label drawn to the left of the point
    outlier: bool = False  # beyond the scale: drawn at its edge, marked


@dataclass
class Series:
    name: str
    index: int
    points: list[Point] = field(default_factory=list)

    @property
    def path(self) -> str:
        return " ".join(
            f"{'M' if i == 0 else 'L'}{p.x:.1f},{p.y:.1f}" for i, p in enumerate(self.points)
        )


@dataclass
class Chart:
    width: int
    height: int
    x_label: str
    y_label: str
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    left: float
    right: float
    top: float
    bottom: float
    series: list[Series]
    front: str = ""  # SVG path of the Pareto front, when asked for

    @property
    def empty(self) -> bool:
        return not any(s.points for s in self.series)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 10)]
    while ticks[-1] < hi - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    a = math.floor(math.log10(lo))
    b = math.ceil(math.log10(hi))
    out: list[float] = []
    for e in range(a, b + 1):
        for m in (1, 2, 5) if b - a <= 3 else (1,):
            out.append(m * 10.0**e)
    return [t for t in out if lo / 1.0001 <= t <= hi * 1.0001] or [lo, hi]


def robust_max(values: list[float]) -> float | None:
    """The top of a scale that one outlier cannot set: with five or more values, anything
    beyond the upper quartile + 3 × the interquartile range is off the scale."""
    vals = sorted(v for v in values if v is not None and math.isfinite(v))
    if len(vals) < 5:
        return None
    q1, q3 = vals[len(vals) // 4], vals[(3 * len(vals)) // 4]
    fence = q3 + 3 * (q3 - q1)
    return fence if vals[-1] > fence and fence > 0 else None


class _Axis:
    def __init__(self, values: list[float], lo_px: float, hi_px: float, log: bool) -> None:
        vals = [v for v in values if v is not None and math.isfinite(v)]
        cap = robust_max(vals) if not log else None
        if cap is not None:
            vals = [v for v in vals if v <= cap]
        self.cap = max(vals) if cap is not None and vals else None
        self.log = log and bool(vals) and min(vals) > 0
        if not vals:
            vals = [0.0, 1.0]
        lo, hi = min(vals), max(vals)
        if self.log:
            lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
            if lo == hi:
                hi = lo * 10
            self.ticks = log_ticks(lo, hi)
        else:
            lo = min(0.0, lo)
            ticks = nice_ticks(lo, hi)
            lo, hi = ticks[0], ticks[-1]
            self.ticks = ticks
        self.lo, self.hi = lo, hi
        self.lo_px, self.hi_px = lo_px, hi_px

    def clipped(self, v: float) -> bool:
        return self.cap is not None and v > self.hi

    def __call__(self, v: float) -> float:
        if self.cap is not None:
            v = min(v, self.hi)
        if self.log:
            span = math.log10(self.hi) - math.log10(self.lo)
            frac = (math.log10(v) - math.log10(self.lo)) / span
        else:
            frac = (v - self.lo) / ((self.hi - self.lo) or 1.0)
        return self.lo_px + frac * (self.hi_px - self.lo_px)

    def tick_list(self) -> list[Tick]:
        return [Tick(self(t), num(t, 3)) for t in self.ticks]


def xy_chart(
    series: list[tuple[str, list[dict[str, Any]]]],
    *,
    x_label: str,
    y_label: str,
    log_x: bool = False,
    log_y: bool = False,
    width: int = WIDTH,
    height: int = HEIGHT,
    pareto: bool = False,
) -> Chart:
    """Scatter or line chart. Each point: {x, y, label, title?, href?, emphasis?}.

    ``pareto``: x is a cost and y a benefit; the front (no other point is both cheaper and
    better) is drawn as a step line, and only points with room for their label keep it, so
    labels never overlap (every point keeps its title and is listed beside the chart)."""
    left, right = MARGIN_L, width - MARGIN_R
    top, bottom = MARGIN_T, height - MARGIN_B
    all_pts = [p for _, pts in series for p in pts if _finite(p.get("x")) and _finite(p.get("y"))]
    if log_x:
        all_pts = [p for p in all_pts if p["x"] > 0]
    if log_y:
        all_pts = [p for p in all_pts if p["y"] > 0]
    xa = _Axis([p["x"] for p in all_pts], left, right, log_x)
    ya = _Axis([p["y"] for p in all_pts], bottom, top, log_y)
    out: list[Series] = []
    for i, (name, pts) in enumerate(series):
        s = Series(name=name, index=i)
        for p in pts:
            if p not in all_pts:
                continue
            s.points.append(
                Point(
                    x=xa(p["x"]),
                    y=ya(p["y"]),
                    label=str(p.get("label", "")),
                    title=str(p.get("title") or p.get("label", ""))
                    + (" (off the scale)" if xa.clipped(p["x"]) or ya.clipped(p["y"]) else ""),
                    href=p.get("href"),
                    outlier=xa.clipped(p["x"]) or ya.clipped(p["y"]),
                    emphasis=bool(p.get("emphasis")),
                    series=i,
                )
            )
        out.append(s)
    front = ""
    if pareto:
        placed = sorted((q for ser in out for q in ser.points), key=lambda q: (q.x, q.y))
        best: list[Point] = []
        for q in placed:
            if not best or q.y < best[-1].y - 1e-9:  # screen y: smaller is better
                best.append(q)
        front = " ".join(
            f"M{q.x:.1f},{q.y:.1f}"
            if i == 0
            else f"L{q.x:.1f},{best[i - 1].y:.1f} L{q.x:.1f},{q.y:.1f}"
            for i, q in enumerate(best)
        )
        _declutter(best + [q for q in placed if q not in best], right)
    return Chart(
        width=width,
        height=height,
        x_label=x_label,
        y_label=y_label,
        x_ticks=xa.tick_list(),
        y_ticks=ya.tick_list(),
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        series=out,
        front=front,
    )


def _declutter(points: list[Point], right: float, char_w: float = 6.6, line_h: float = 14) -> None:
    """Keep a point's label only where it overlaps no label already placed (in order)."""
    placed: list[tuple[float, float, float, float]] = []
    for p in points:
        if not p.label:
            continue
        w = len(p.label) * char_w
        x0 = p.x + 8 if p.x + 8 + w <= right else p.x - 8 - w
        box = (x0, p.y - 6 - line_h, x0 + w, p.y - 6)
        apart = (box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in placed)
        if not all(apart):
            p.label = ""
            continue
        p.anchor_end = x0 < p.x
        placed.append(box)


@dataclass
class Bar:
    label: str
    value: float | None
    ref: float | None
    value_text: str
    ref_text: str
    value_w: float
    ref_w: float
    over: bool
    y: float
    clipped: bool = False  # beyond the scale (an outlier): the bar is cut and marked


@dataclass
class BarChart:
    width: int
    height: int
    label_w: int
    bar_h: int
    row_h: int
    value_name: str
    ref_name: str
    bars: list[Bar]
    plot_w: float

    @property
    def empty(self) -> bool:
        return not self.bars


def bar_chart(
    rows: list[dict[str, Any]],
    *,
    value_name: str,
    ref_name: str,
    unit: str = "",
    width: int = WIDTH,
    label_w: int = 200,
) -> BarChart:
    """Horizontal bars: each row {label, value, ref}; value drawn over its reference."""
    row_h, bar_h = 30, 16
    usable = [r for r in rows if _finite(r.get("value")) or _finite(r.get("ref"))]
    every = [float(r[k]) for r in usable for k in ("value", "ref") if _finite(r.get(k))]
    scale_max = robust_max(every) or max(every or [1.0])
    plot_w = width - label_w - 180
    bars = []
    for i, r in enumerate(usable):
        v = float(r["value"]) if _finite(r.get("value")) else None
        ref = float(r["ref"]) if _finite(r.get("ref")) else None
        bars.append(
            Bar(
                label=str(r.get("label", "")),
                value=v,
                ref=ref,
                value_text=f"{num(v)} {unit}".strip() if v is not None else "—",
                ref_text=f"{num(ref)} {unit}".strip() if ref is not None else "—",
                value_w=plot_w * min(v or 0, scale_max) / scale_max,
                ref_w=plot_w * min(ref or 0, scale_max) / scale_max,
                clipped=(v or 0) > scale_max or (ref or 0) > scale_max,
                over=v is not None and ref is not None and v > ref,
                y=8 + i * row_h,
            )
        )
    return BarChart(
        width=width,
        height=16 + len(bars) * row_h,
        label_w=label_w,
        bar_h=bar_h,
        row_h=row_h,
        value_name=value_name,
        ref_name=ref_name,
        bars=bars,
        plot_w=plot_w,
    )


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))
