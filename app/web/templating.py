"""The Jinja2 environment for the pages: autoescaped templates plus number formatting.

Every filter returns plain ``str`` so Jinja escapes it; nothing here marks catalog or user
text as safe, except ``breakable``, which escapes the text itself and adds only ``<wbr>``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import urlencode

import jinja2
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from starlette.requests import Request

from app import __version__
from app.config import Settings
from app.domain.evaluate import hours_text
from app.domain.figures import duration, limit_duration
from app.domain.serving import weights_name
from app.domain.spot import break_even_text
from app.domain.units import GIB_PER_GB
from app.numbers import sig_figs
from app.recommend.deadline import past as past_deadline
from app.recommend.whatif import config_name, reason_count
from app.shipped.paths import shipped_path
from app.web.forms import as_form_words
from app.web.labels import choice_label, short_name
from app.web.labels import vendor as vendor_name
from app.web.offer_words import (
    instance_words,
    instances_in_words,
    price_is_stale,
    stale_rule,
)
from app.web.serving_lines import said_in_cells
from app.web.static_assets import static_url

TEMPLATES_DIR = shipped_path("templates")
DASH = "—"


def _is_number(value: Any) -> bool:
    # a tuple, not ``int | float``: the union is built anew on every call (~800 per answer page)
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def num(value: Any, digits: int = 3) -> str:
    """A number to ``digits`` significant figures with thousands separators; — if unknown."""
    if not _is_number(value):
        return DASH if value is None or value == "" else str(value)
    return sig_figs(float(value), digits)  # the command line's figures too


def usd(value: Any, cents: bool | None = None) -> str:
    if not _is_number(value):
        return DASH
    v = float(value)
    if cents is None:
        cents = abs(v) < 100
    if cents:
        return f"${v:,.2f}"
    return f"${v:,.0f}"


def use_hours(value: Any, hours_per_week: Any = 40) -> str:
    """Hours of *use* (a break-even point), and how long that takes at the user's weekly
    use: '2,200 h of use (≈ 55 weeks at 40 h/week)', never read as calendar time."""
    if not _is_number(value):
        return DASH
    h = float(value)
    out = f"{num(h, 3)} h of use"
    if _is_number(hours_per_week) and float(hours_per_week) > 0:
        weeks = h / float(hours_per_week)
        span = f"{num(weeks, 2)} weeks" if weeks < 104 else f"{num(weeks / 52, 2)} years"
        out += f" (≈ {span} at {num(float(hours_per_week))} h/week)"
    return out


def hours(value: Any) -> str:
    """A duration in hours, in the unit a person would use (figures.duration, as the answer's
    own words say it)."""
    if not _is_number(value):
        return DASH
    return duration(float(value))


# A time in milliseconds past this reads in seconds: "45.8 s", never "45,788 ms".
MS_UP_TO = 10_000.0


def ms(value: Any) -> str:
    """A time given in milliseconds, in the unit a person reads it in: ms below ten seconds,
    seconds up to a minute, then as ``hours`` writes a longer time."""
    if not _is_number(value):
        return DASH
    v = float(value)
    if abs(v) < MS_UP_TO:
        return f"{num(v)} ms"
    if abs(v) < 60_000:
        return f"{num(v / 1000, 3)} s"
    return hours(v / 3_600_000)


def ms_range(low: Any, high: Any, like: Any = None, unit: bool = True) -> str:
    """A range of times in milliseconds in one unit: the one ``ms`` gives ``like`` (the
    figure the range sits beside), else the higher end — '9,100–12,000 ms', '9.1–12 s'.
    ``unit=False`` leaves the unit to the figure beside it."""
    if not (_is_number(low) and _is_number(high)):
        return DASH
    ref = like if _is_number(like) else high
    word = ms(ref).rsplit(" ", 1)[-1]
    scale = {"ms": 1.0, "s": 1000.0}.get(word)
    if scale is None:  # minutes and longer: each end in its own unit
        return f"{ms(low)}–{ms(high)}"
    text = f"{num(float(low) / scale)}–{num(float(high) / scale)}"
    return f"{text} {word}" if unit else text


def ms_like(value: Any, like: Any) -> str:
    """A time in milliseconds in the unit ``ms`` gives ``like`` (a column's longest time), so
    one column reads in one unit: a ranking's batch times had read "8,913 ms" above "10.3 s".
    Times of a minute and more keep their own unit."""
    if not (_is_number(value) and _is_number(like)):
        return ms(value)
    word = ms(like).rsplit(" ", 1)[-1]
    if word == "s" and abs(float(value)) < 60_000:
        return f"{num(float(value) / 1000, 3)} s"
    return ms(value)


def svg_n(value: float, places: int = 1) -> str:
    """An SVG coordinate to ``places`` decimals without a trailing ".0": a chart's hundreds of
    coordinates are an answer page's bytes, and the tenth of a unit is under a pixel."""
    text = f"{float(value):.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def sortable(value: Any) -> str:
    """A figure as a data attribute the page's script sorts and scales by: seven significant
    figures (a sort or a recomputed price never needs more; 15.006582382700827 had cost every
    row's cells 10 bytes each of the page's weight); blank where there is none."""
    if not _is_number(value):
        return ""
    return f"{float(value):.7g}"


def compact(value: Any) -> str:
    """A large count read at a glance: 15,145,036 as 15.1M (three significant figures, as
    every figure of a ranking); below a million as ``num`` writes it."""
    if not _is_number(value):
        return DASH
    v = float(value)
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if abs(v) >= scale:
            return f"{num(v / scale, 3)}{suffix}"
    return num(v)


def pct(value: Any, digits: int = 0) -> str:
    if not _is_number(value):
        return DASH
    return f"{float(value) * 100:.{digits}f}%"


def gb_n(value: Any) -> str:
    """Memory the engine counts in 10^9 bytes, in GiB (2^30 bytes), the unit the vendors' "GB"
    is (an "80 GB" H100 holds 80 GiB), so need and capacity read alike; ``gb`` says "GiB"
    after it: the API's *_gb are 10^9 bytes, and one label had stood for both."""
    if not _is_number(value):
        return DASH
    return num(float(value) / GIB_PER_GB, 3)


def gb(value: Any) -> str:
    return DASH if not _is_number(value) else f"{gb_n(value)} GiB"


def bytes_h(value: Any) -> str:
    """Bytes in decimal units."""
    if not _is_number(value):
        return DASH
    v = float(value)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= scale:
            return f"{num(v / scale, 3)} {unit}"
    return f"{int(v)} B"


def params_h(value: Any) -> str:
    """A parameter count: 7.0B, 124M."""
    if not _is_number(value):
        return DASH
    v = float(value)
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= scale:
            return f"{num(v / scale, 3)}{unit}"
    return num(v)


def flops(value: Any, unit: str = "TFLOPS") -> str:
    """A TFLOPS figure in the unit that fits its size: 0.0381 TFLOPS -> '38.1 GFLOPS'."""
    if not _is_number(value):
        return DASH
    v = float(value)
    base = unit.removesuffix("FLOPS").removesuffix("OPS")
    ops = "FLOPS" if unit.endswith("FLOPS") else "OPS"
    scale = {"P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6}.get(base, 1e12)
    raw = v * scale
    for prefix, size in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6)):
        if abs(raw) >= size:
            return f"{num(raw / size, 3)} {prefix}{ops}"
    return f"{num(raw, 3)} {ops}"


def date_h(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, str) and "T" in value:
        try:
            return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M UTC")
        except ValueError:
            return value
    return DASH if value is None else str(value)


def label(value: Any) -> str:
    """Identifiers as words: 'memory_bandwidth_gbs' -> 'memory bandwidth gbs'."""
    if value is None:
        return DASH
    return str(value).replace("_", " ").replace("-", " ")


def query_string(params: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> str:
    """Encode params, dropping empty values and expanding lists."""
    items = params.items() if isinstance(params, Mapping) else params
    pairs: list[tuple[str, str]] = []
    for key, value in items:
        values = value if isinstance(value, list | tuple) else [value]
        for v in values:
            if v is None or v == "" or v is False:
                continue
            pairs.append((key, "on" if v is True else str(v)))
    return urlencode(pairs)


def url_with(request: Request, **changes: Any) -> str:
    """The current URL's query with some parameters replaced (None removes one)."""
    pairs = [(k, v) for k, v in request.query_params.multi_items() if k not in changes]
    for key, value in changes.items():
        if value is None:
            continue
        pairs.append((key, value))
    qs = query_string(pairs)
    return f"{request.url.path}?{qs}" if qs else request.url.path


_BREAKS = ("_", ".", "/", "-")


def breakable(value: Any) -> Markup:
    """The text, escaped, with a line-break opportunity after each ``_ . / -``: a long
    instance name (``gpu_1x_rtxpro6000blackwell_96``) wraps between its parts in a narrow
    cell instead of mid-word, and still copies as written (``<wbr>`` is not a character)."""
    text = str(escape(value))
    for part in _BREAKS:  # "<wbr>" holds none of them: each pass adds only its own
        text = text.replace(part, part + "<wbr>")
    return Markup(text)


def instance(value: Any, shape: bool = True) -> Markup:
    """An offer's instance as a page shows it: a marketplace's composed id in words, the id
    kept in the tooltip (SkyPilot launches by it); any other name as ``breakable`` writes it."""
    words = instance_words(str(value), shape)
    if words is None:
        return breakable(value)
    return Markup('<span title="instance type {}">{}</span>').format(value, words)


def by_reason(excluded: Sequence[Any]) -> list[tuple[str, str, list[Any]]]:
    """The excluded GPUs grouped by (code, reason), in the order each reason first appears:
    a serving answer leaves dozens of cards out for the same words ("cannot carry the load"),
    and one row per reason lists them without repeating the sentence."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for e in excluded:
        groups.setdefault((e.code, e.reason), []).append(e)
    return [(code, reason, items) for (code, reason), items in groups.items()]


def make_templates(settings: Settings | None = None) -> Jinja2Templates:
    """The pages' environment; ``settings`` (the app's) say when a price is stale."""
    rules = settings or Settings()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        # The templates ship with the code and never change while it runs: without this,
        # every include (four per ranking row) stats its file to see whether to recompile it.
        auto_reload=False,
        # ... and they are a few dozen files, so every one stays compiled in a plain dict: the
        # default LRU cache takes a lock and moves the name in its queue on every include.
        cache_size=-1,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates = Jinja2Templates(env=env)
    env.tests["said_in_cells"] = said_in_cells
    env.filters.update(
        num=num,
        compact=compact,
        sortable=sortable,
        svgn=svg_n,
        usd=usd,
        hours=hours,
        pct=pct,
        gb=gb,
        gb_n=gb_n,
        bytes_h=bytes_h,
        params_h=params_h,
        date_h=date_h,
        label=label,
        qs=query_string,
        flops=flops,
        vendor=vendor_name,
        short_name=short_name,
        use_hours=use_hours,
        ms=ms,
        breakable=breakable,
        instance=instance,
        instances_in_words=instances_in_words,
        by_reason=by_reason,
        # the verb agreeing with the count as the API's empty.message has it ("59 do not fit")
        reason_count=reason_count,
        choice=lambda value, field: choice_label(field, value),
        break_even=break_even_text,
        said_hours=hours_text,
        limit_hours=limit_duration,  # a user's own limit, as they wrote it: 24 h, 2 days
        # a slow-end time told apart from the deadline it misses (2.04 h under 2 h: 2.04 h)
        past_deadline=past_deadline,
        form_words=as_form_words,
        weights=lambda sv: weights_name(sv.weight_precision, sv.weight_format),
    )
    env.globals.update(
        url_with=url_with,
        version=__version__,
        qs=query_string,
        static_url=static_url,
        config_name=config_name,
        ms_range=ms_range,
        ms_like=ms_like,
        # globals, not context: the macros imported without context see them too
        stale_rule=stale_rule(rules),
        stale_mark=partial(stale_mark, rule=stale_rule(rules), settings=rules),
    )
    return templates


def stale_mark(as_of: Any, own_line: Any = False, *, rule: str, settings: Settings) -> Markup:
    """A price older than the server's stale age, marked as the offers API marks it
    (offer_words.price_is_stale), the rule in its tooltip; ``own_line``: on a line of its own.
    A global, not a macro: each include of a per-row template ran its import of the macro
    again (Jinja compares the two templates' globals every time), and each mark was a macro
    call through Jinja's runtime."""
    if not (as_of and price_is_stale(as_of, settings)):
        return Markup("")
    badge = f'<span class="badge warn" data-stale title="{escape(rule)}">stale</span>'
    return Markup(("<br>" if own_line else " ") + badge)


# Pages load nothing from another host; this header makes the browser enforce it.
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


# Where whitespace is content: left exactly as rendered.
_VERBATIM = re.compile(r"(<pre\b.*?</pre>|<textarea\b.*?</textarea>)", re.S | re.I)
_OPENS_VERBATIM = re.compile(r"<(?:pre|textarea)\b", re.I)
_INDENT = re.compile(r"\n[ \t]+")
# A run of spaces beside a tag: the indentation of a line whose newline a block tag took
# (trim_blocks), "</tr>                    <tr>" (1.5 kB of an answer page). One space renders
# the same as many outside <pre>; JSON in a <script> holds no raw "<" or ">" (tojson).
_RUN = re.compile(r"(?<=>)[ \t]{2,}|[ \t]{2,}(?=<)")
# The same for runs of spaces alone, found by their literal two-space start: _RUN's lookbehind
# at every position cost ~6 ms an answer page (a quarter of its time); tabs, which the
# templates do not use, take _RUN.
_SPACES = re.compile(r"  +")


def _beside_tag(m: re.Match[str]) -> str:
    text, start, end = m.string, m.start(), m.end()
    if (start and text[start - 1] == ">") or (end < len(text) and text[end] == "<"):
        return " "
    return m.group(0)


def _tight(text: str) -> str:
    text = _SPACES.sub(_beside_tag, _INDENT.sub("\n", text))
    return _RUN.sub(" ", text) if "\t" in text else text


def squeeze(html: str) -> str:
    """Template indentation dropped (a tenth of an answer page's bytes): a newline stays
    where one was, so the page renders the same; <pre> and <textarea> keep their spaces."""
    if not _OPENS_VERBATIM.search(html):  # most pages (the answer): one pass, not a split
        return _tight(html)
    parts = _VERBATIM.split(html)
    return "".join(p if i % 2 else _tight(p) for i, p in enumerate(parts))


def render(
    request: Request, name: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    templates = request.app.state.templates
    response: HTMLResponse = templates.TemplateResponse(
        request, name, context, status_code=status_code
    )
    body = squeeze(bytes(response.body).decode("utf-8")).encode("utf-8")
    response.body = body
    response.headers["Content-Length"] = str(len(body))
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response
