"""Chart geometry for hand-written SVG charts (no JavaScript, no library, works offline).

Functions here turn numbers into pixel coordinates and tick labels; the ``_chart_*.html``
partials draw them. Labels stay plain strings so the templates escape them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from app.web.labels import short_name
from app.web.templating import num

# Drawn about as wide as a phone shows it (≈ 330 px), so the 11–12 px text stays ≥ 10 px on
# a 390 px screen; on a desktop the SVG scales up.
WIDTH = 400
HEIGHT = 300
MARGIN_L = 56
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
    outlier: bool = False  # beyond the scale: drawn at its edge, marked
    label_x: float = 0.0  # where the label is drawn (set when it has room)
    label_y: float = 0.0
    label_anchor: str = "start"


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

    @property
    def has_outliers(self) -> bool:
        # read here, not in the template, whose map/sum(start=[])/selectattr chain copied the
        # points' list once per series and looked each attribute up through Jinja
        return any(p.outlier for s in self.series for p in s.points)


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
    def __init__(
        self,
        values: list[float],
        lo_px: float,
        hi_px: float,
        log: bool,
        keep: list[float] | None = None,
    ) -> None:
        """``keep``: values the scale must reach whatever the fence says (the top pick's: an
        answer's #1 had been drawn as a hollow, unlabelled ring at the axis's end)."""
        vals = [v for v in values if v is not None and math.isfinite(v)]
        cap = robust_max(vals) if not log else None
        kept = [v for v in keep or [] if v is not None and math.isfinite(v)]
        if cap is not None and kept:
            cap = max(cap, *kept)
            cap = cap if max(vals) > cap else None
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
        return [Tick(self(t), tick_text(t)) for t in self.ticks]


def tick_text(v: float) -> str:
    """Axis numbers short enough that neighbouring ticks never run together on a phone:
    2,000 -> 2k, 50,000 -> 50k, 1,000,000 -> 1M."""
    for scale, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return num(v / scale, 3) + unit
    return num(v, 3)


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
    better) is drawn as a step line and its points are labelled first. Only points with room
    for their label keep it, so labels never overlap (every point keeps its title)."""
    left, right = MARGIN_L, width - MARGIN_R
    top, bottom = MARGIN_T, height - MARGIN_B
    all_pts = [p for _, pts in series for p in pts if _finite(p.get("x")) and _finite(p.get("y"))]
    if log_x:
        all_pts = [p for p in all_pts if p["x"] > 0]
    if log_y:
        all_pts = [p for p in all_pts if p["y"] > 0]
    picks = [p for p in all_pts if p.get("emphasis")]  # never off the scale
    xa = _Axis([p["x"] for p in all_pts], left, right, log_x, [p["x"] for p in picks])
    ya = _Axis([p["y"] for p in all_pts], bottom, top, log_y, [p["y"] for p in picks])
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
                    label_x=xa(p["x"]) + 8,
                    label_y=ya(p["y"]) - 6,
                )
            )
        out.append(s)
    front = ""
    order = [q for ser in out for q in ser.points]  # labels are placed in this order
    if pareto:
        placed = sorted(order, key=lambda q: (q.x, q.y))
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
        order = best + [q for q in placed if q not in best]
    # every label where it overlaps no other label and no point (the y axis's numbers are
    # obstacles too; its title runs up the first ~22 units)
    ticks = [(22.0, t.pos - 9, left - 4.0, t.pos + 5) for t in ya.tick_list()]
    _declutter(order, 22.0, right, top, ticks)
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


def _declutter(
    points: list[Point],
    left: float,
    right: float,
    top: float,
    obstacles: list[tuple[float, float, float, float]] | None = None,
    line_h: float = 14,
) -> None:
    """Keep a point's label only where it overlaps no label already placed (in order) and
    no point: beside, above or below its point, the first place that is free, with the brand
    words dropped when the whole name fits nowhere."""
    placed: list[tuple[float, float, float, float]] = [
        (q.x - 6, q.y - 6, q.x + 6, q.y + 6) for q in points
    ] + list(obstacles or [])
    for p in sorted(points, key=lambda q: not q.emphasis):  # the top pick is named first
        own = (p.x - 6, p.y - 6, p.x + 6, p.y + 6)
        spot = None
        for text in dict.fromkeys((p.label, short_name(p.label))):
            w = text_width(text)
            # (left edge of the text, its baseline, SVG text-anchor)
            for x0, y1, anchor in (
                (p.x + 8, p.y - 6, "start"),  # above right
                (p.x - 8 - w, p.y - 6, "end"),  # above left
                (p.x - w / 2, p.y - 10, "middle"),  # above
                (p.x + 8, p.y + 6 + line_h, "start"),  # below right
                (p.x - 8 - w, p.y + 6 + line_h, "end"),  # below left
                (p.x - w / 2, p.y + 10 + line_h, "middle"),  # below
            ):
                # a little air around it; the drawn text box reaches ~4 units below its baseline
                box = (x0 - 3, y1 - line_h + 2, x0 + w + 3, y1 + 5)
                if not text or x0 < left or x0 + w > right or box[1] < top:
                    continue
                if all(_apart(box, b) for b in placed if b != own):
                    spot = (text, x0, y1, anchor, box)
                    break
            if spot is not None:
                break
        if spot is None:
            p.label = ""
            continue
        p.label, x0, p.label_y, p.label_anchor, box = spot
        p.label_x = {
            "start": x0,
            "end": x0 + text_width(p.label),
            "middle": x0 + text_width(p.label) / 2,
        }[p.label_anchor]
        placed.append(box)


def text_width(text: str, font_px: float = 11.0) -> float:
    """A generous width of ``text`` in the 11 px label font: per-character widths of wide
    sans fonts (DejaVu Sans: capitals and digits ≤ 0.77 em, lower case ≤ 0.63 em, space
    0.32 em), so an estimate never lets two labels touch on any common font."""
    em = 0.0
    for ch in text:
        if ch == " ":
            em += 0.32
        elif ch.isupper() or ch.isdigit() or ch in "×%@MW":
            em += 0.74
        elif ch in "ilj.,:;|!'":
            em += 0.3
        else:
            em += 0.6
    return em * font_px


def _apart(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[2] < b[0] or a[0] > b[2] or a[3] < b[1] or a[1] > b[3]


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

    @property
    def has_ref(self) -> bool:
        """Whether any bar has its reference: a CPU's report has no catalog peak, and a legend
        entry for a bar drawn nowhere had read as a missing line."""
        return any(b.ref is not None for b in self.bars)


def bar_chart(
    rows: list[dict[str, Any]],
    *,
    value_name: str,
    ref_name: str,
    unit: str = "",
    width: int = WIDTH,
    label_w: int = 200,
    robust: bool = True,
) -> BarChart:
    """Horizontal bars: each row {label, value, ref}; value drawn over its reference.
    ``robust``: a figure past ``robust_max`` is cut and marked off scale (one mis-measured
    figure cannot flatten the rest); False for figures that are specs, not measurements."""
    row_h, bar_h = 30, 16
    usable = [r for r in rows if _finite(r.get("value")) or _finite(r.get("ref"))]
    every = [float(r[k]) for r in usable for k in ("value", "ref") if _finite(r.get(k))]
    scale_max = (robust_max(every) if robust else None) or max(every or [1.0])
    plot_w = 100.0  # bars in percent of their track (the words are HTML beside them)
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
