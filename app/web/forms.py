"""The question form, generated from the API's request model and parsed through it.

Every field of ``RecommendationRequest`` (walking into ``workload``, ``workload.model``,
``constraints`` and any nested section) that carries form metadata
(``json_schema_extra=ui(...)``, see app/recommend/schemas.py) becomes a form control: its
title is the label, its description the help, its constraints the limits. The only thing
the form does itself is read what people write — "8.03B", "$800", "15k", "1,281,167" —
into numbers; everything else is the pydantic model's validation, whose errors are mapped
back to the fields and said in words.

The form is a GET form, so its query string is the shareable link. A blank field means
"the preset's value" (or the engine's default).
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

import annotated_types as at
from pydantic import BaseModel, ValidationError

from app.errors import error_text
from app.numbers import NUMBER_EXAMPLES as NUMBER_EXAMPLES
from app.numbers import NUMBER_HELP, parse_hours, parse_int, parse_number
from app.recommend.schemas import RecommendationRequest
from app.web.labels import choice_label, form_choice_label

Control = Literal[
    "select", "flag", "checks", "list", "number", "text", "textarea", "report", "preset"
]
MultiItems = Iterable[tuple[str, str]]

# Form sections in page order: (id, legend, folded away by default). A group named in the
# metadata but not here is shown after these, titled by its id.
GROUPS: tuple[tuple[str, str, bool], ...] = (
    ("workload", "The job", False),
    ("model", "The model", False),
    ("serving", "Serving: users, lengths and latency targets", False),
    ("shape", "Model shape (a preset fills these)", True),
    ("budget", "Framework and budget", False),
    ("answer", "What matters most", False),
    ("assumptions", "Assumptions", True),
)


@dataclass(frozen=True)
class FormField:
    name: str  # the query parameter
    path: tuple[str, ...]  # where it goes in the RecommendationRequest
    label: str
    help: str
    group: str
    control: Control
    integer: bool = False
    kind: str | None = None  # "count" (8.03B), "usd" ($800), "preset", "report"
    choices: tuple[tuple[str, str], ...] = ()  # (value, label)
    tasks: tuple[str, ...] | None = None  # None: every task
    assumed: str | None = None  # what a blank means, in words
    default: Any = None  # the schema's default, when it has one
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    exclusive_max: bool = False

    @property
    def numeric(self) -> bool:
        return self.control == "number"

    def show(self, value: Any) -> str:
        """A value as a person writes it: 8.03B, $800, 15k, Yes."""
        return show_value(value, self.kind, self.name)

    @property
    def default_text(self) -> str | None:
        """What a blank means: the schema default or the engine's assumption, in words."""
        if self.default is not None:
            return self.show(self.default)
        return self.assumed

    def show_limit(self, value: float) -> str:
        return show_value(value, self.kind, self.name) if self.kind else fmt_limit(value)

    @property
    def brief(self) -> str:
        """The help's first sentence, shown under the control; a long help keeps the rest
        behind "More" so a new reader scans one line a field."""
        return _help_parts(self.help)[0]

    @property
    def more(self) -> str:
        return _help_parts(self.help)[1]


# A help longer than this shows its first sentence and folds the rest.
_HELP_FOLD_CHARS = 160
# A sentence ends at a full stop followed by a capital or a quote ("e.g. $800" does not).
_SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z'])")


def _help_parts(text: str) -> tuple[str, str]:
    if len(text) <= _HELP_FOLD_CHARS:
        return text, ""
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (text, "")


# ---------------------------------------------------------------------------- numbers


def fmt_limit(v: float) -> str:
    return f"{v:,.0f}" if v == int(v) and abs(v) < 1e15 else f"{v:g}"


def _short(v: float) -> str:
    text = f"{v:.3g}"
    return text


def show_value(value: Any, kind: str | None = None, name: str = "") -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, int | float):
        v = float(value)
        if kind == "usd":
            if v >= 10_000 and v == int(v):
                for unit, scale in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
                    if v >= scale and (v / scale) == round(v / scale, 2):
                        return f"${_short(v / scale)}{unit}"
            return f"${v:,.2f}" if v != int(v) else f"${v:,.0f}"
        if kind == "count" and abs(v) >= 10_000:
            for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
                if abs(v) >= scale:
                    return f"{_short(v / scale)}{unit}"
        if v == int(v):
            return f"{int(v):,}" if abs(v) >= 10_000 else str(int(v))
        return f"{v:g}"
    return choice_label(name, value)


# ---------------------------------------------------------------------------- the fields


def _unwrap_optional(ann: Any) -> Any:
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1:
            return args[0]
        if args and all(typing.get_origin(a) is Literal for a in args):
            # one closed set in two vocabularies (the runtime: a decoder's runtimes or an
            # encoder's embedding servers) is one select of both, not a text box
            return Literal[tuple(v for a in args for v in typing.get_args(a))]
    return ann


def _limits(metadata: Sequence[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in metadata:
        if isinstance(m, at.Ge):
            out["minimum"] = float(m.ge)  # type: ignore[arg-type]
        elif isinstance(m, at.Gt):
            out["minimum"], out["exclusive_min"] = float(m.gt), True  # type: ignore[arg-type]
        elif isinstance(m, at.Le):
            out["maximum"] = float(m.le)  # type: ignore[arg-type]
        elif isinstance(m, at.Lt):
            out["maximum"], out["exclusive_max"] = float(m.lt), True  # type: ignore[arg-type]
    return out


def _walk(model: type[BaseModel], prefix: tuple[str, ...]) -> list[FormField]:
    out: list[FormField] = []
    for key, info in model.model_fields.items():
        ann = _unwrap_optional(info.annotation)
        path = (*prefix, key)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_walk(ann, path))
            continue
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if "group" not in extra or extra.get("form") is False:
            continue
        kind = extra.get("kind")
        kind = str(kind) if kind is not None else None
        choices: tuple[str, ...] = ()
        integer = False
        control: Control
        origin = typing.get_origin(ann)
        if kind in ("preset", "report"):
            control = kind  # type: ignore[assignment]
        elif extra.get("widget") == "textarea" or ann is dict or typing.get_origin(ann) is dict:
            control = "textarea"
        elif origin is Literal:
            control, choices = "select", tuple(str(a) for a in typing.get_args(ann))
        elif ann is bool:
            control = "flag"
        elif origin is list:
            item = _unwrap_optional(typing.get_args(ann)[0]) if typing.get_args(ann) else str
            if typing.get_origin(item) is Annotated:
                # a closed set read in any case (catalog.schemas.VendorIn): its names are
                # the choices
                item = typing.get_args(item)[0]
            if typing.get_origin(item) is Literal:
                control, choices = "checks", tuple(str(a) for a in typing.get_args(item))
            else:
                control = "list"
        elif ann in (int, float):
            control, integer = "number", ann is int
        else:
            control = "text"
        default = None if info.is_required() else info.get_default(call_default_factory=False)
        tasks = extra.get("tasks")
        out.append(
            FormField(
                name=key,
                path=path,
                label=info.title or key.replace("_", " ").capitalize(),
                help=str(extra.get("form_help") or info.description or ""),
                group=str(extra["group"]),
                control=control,
                integer=integer,
                kind=kind,
                choices=tuple((c, form_choice_label(key, c)) for c in choices),
                tasks=tuple(str(t) for t in tasks) if isinstance(tasks, list | tuple) else None,
                assumed=str(extra["assumed"]) if extra.get("assumed") is not None else None,
                default=default if isinstance(default, str | int | float | bool) else None,
                **_limits(info.metadata),
            )
        )
    return out


# An identifier a message names the way the API does ("set ttft_ms_target", with its section
# where it gives one: "constraints.allow_4bit"), with a flag's value after it
# ("gradient_checkpointing: false").
_FIELD_WORD = re.compile(
    r"\b(?:(?:workload|constraints|serving)\.)*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b"
    r"(?::\s*(true|false)\b)?"
)


@cache
def _labels_by_leaf() -> dict[str, str]:
    out: dict[str, str] = {}
    for f in question_fields():
        out.setdefault(f.path[-1], f.label)  # the workload's field first when a leaf repeats
    return out


def as_form_words(text: str) -> str:
    """A message written for the API, as the form says it: the field's label in quotes for
    its identifier, Yes/No for a flag's value. Words that are no form field stay as written."""
    if "_" not in text:
        return text
    labels = _labels_by_leaf()

    def swap(m: re.Match[str]) -> str:
        label = labels.get(m.group(1))
        if label is None:
            return m.group(0)
        flag = m.group(2)
        return f"“{label}”" + (f": {'Yes' if flag == 'true' else 'No'}" if flag else "")

    return _FIELD_WORD.sub(swap, text)


@cache
def question_fields() -> tuple[FormField, ...]:
    """The form's fields, in schema order; a leaf name used twice is qualified by its
    section (``serving.batch_size``) so every query parameter stays unique."""
    fields = _walk(RecommendationRequest, ())
    counts: dict[str, int] = {}
    for f in fields:
        counts[f.name] = counts.get(f.name, 0) + 1
    renamed = []
    for f in fields:
        if counts[f.name] > 1 and len(f.path) > 2:
            f = FormField(**{**f.__dict__, "name": ".".join(f.path[1:])})
        renamed.append(f)
    return tuple(renamed)


def fields_by_name() -> dict[str, FormField]:
    return {f.name: f for f in question_fields()}


def grouped_fields() -> list[tuple[str, str, bool, list[FormField]]]:
    """(group id, legend, folded, fields) in page order; empty groups left out."""
    by_group: dict[str, list[FormField]] = {}
    for f in question_fields():
        by_group.setdefault(f.group, []).append(f)
    known = [g for g, _, _ in GROUPS]
    out = [(g, legend, folded, by_group[g]) for g, legend, folded in GROUPS if g in by_group]
    out += [
        (g, g.replace("_", " ").capitalize(), False, fs)
        for g, fs in by_group.items()
        if g not in known
    ]
    return out


# ---------------------------------------------------------------------------- parsing

# The page's first visit: a preset people recognise.
DEFAULTS: dict[str, str] = {"preset": "llama-3-8b"}


def grouped(items: MultiItems) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in items:
        out.setdefault(key, []).append(value)
    return out


def _set(data: dict[str, Any], path: Sequence[str], value: Any) -> None:
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


@dataclass
class QuestionForm:
    """The question as the user typed it, what it means, and what is wrong with it."""

    values: dict[str, Any] = field(default_factory=dict)  # raw text (lists for checks)
    errors: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)  # RecommendationRequest-shaped
    request: RecommendationRequest | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def add_error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, message)

    def query(self) -> list[tuple[str, str]]:
        """The non-empty fields as query pairs: the canonical shareable link."""
        pairs: list[tuple[str, str]] = []
        for f in question_fields():
            value = self.values.get(f.name)
            values = value if isinstance(value, list) else [value]
            pairs.extend((f.name, str(v)) for v in values if v not in (None, ""))
        return pairs

    def group_has_values(self, group: str) -> bool:
        return any(
            self.values.get(f.name) not in (None, "", []) or f.name in self.errors
            for f in question_fields()
            if f.group == group
        )

    def error_items(self) -> list[tuple[str, str, str]]:
        """(field name, label, message) for the error summary, in the form's own order (the
        order the checks found them in had listed Sequence length before Batch size); errors
        on no field of the form (the request as a whole) last."""
        by_name = fields_by_name()
        order = {f.name: i for i, f in enumerate(f for *_, fs in grouped_fields() for f in fs)}
        names = sorted(self.errors, key=lambda n: order.get(n, len(order)))
        return [
            (name, by_name[name].label if name in by_name else "", self.errors[name])
            for name in names
        ]


def number_example(f: FormField) -> str:
    """'like 3 or 0.5': the examples a number field's message gives."""
    examples = NUMBER_EXAMPLES.get(f.name)
    if examples is None:
        if f.default is not None and not isinstance(f.default, bool | str):
            examples = (f.show(f.default),)
        elif f.kind == "usd":
            examples = ("$800",)
        elif f.kind == "count":
            examples = ("15k", "1,281,167")
        else:
            examples = ("4",) if f.integer else ("2.5",)
    head = ", ".join(examples[:-1])
    return "like " + (f"{head} or {examples[-1]}" if head else examples[-1])


def _number(f: FormField, text: str) -> int | float:
    try:
        if f.kind == "hours":
            return parse_hours(text)
        return parse_int(text) if f.integer else parse_number(text)
    except ValueError as exc:
        if str(exc).endswith(NUMBER_HELP):  # not a number, or an unread word: its own examples
            raise ValueError(str(exc).removesuffix(NUMBER_HELP) + number_example(f)) from None
        raise


def _read(f: FormField, texts: list[str]) -> Any:
    """One field's text as the value the request model expects (may raise ValueError)."""
    if f.control == "checks":
        return list(dict.fromkeys(texts))
    if f.control == "list":
        return [p.strip() for t in texts for p in t.split(",") if p.strip()]
    text = texts[-1]
    if f.control == "number":
        return _number(f, text)
    if f.control == "report" and text.isdigit():
        return int(text)
    if f.control == "textarea" and text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                # json's "Unterminated string starting at" already ends in "at"
                f"must be JSON, like the model's config.json: {exc.msg.removesuffix(' at')} "
                f"at line {exc.lineno}, "
                f"column {exc.colno}"
            ) from None
    return text


NUL = "\x00"
NUL_SHOWN = "\u2400"  # ␀, SYMBOL FOR NULL
NUL_MESSAGE = f"contains a NUL character (%00, shown here as {NUL_SHOWN}): remove it"


def parse_question(
    items: MultiItems,
    *,
    use_defaults: bool = False,
    extra: Mapping[str, Any] | None = None,
) -> QuestionForm:
    """Parse query pairs into a form and validate it with the request model. ``extra`` is
    merged into the request (the answer page asks for ``what_if``)."""
    raw = grouped(items)
    if use_defaults and "preset" not in raw:
        # The first visit (or a link that sets only a few fields): start from a preset.
        raw = {**{k: [v] for k, v in DEFAULTS.items()}, **raw}
    form = QuestionForm()
    for f in question_fields():
        texts = [t.strip() for t in raw.get(f.name, []) if t.strip()]
        nul = any(NUL in t for t in texts)
        if nul:
            # re-shown with a visible mark where the NUL was: HTML cannot carry the NUL itself
            texts = [t.replace(NUL, NUL_SHOWN) for t in texts]
        if f.control in ("checks", "list"):
            form.values[f.name] = texts
        else:
            form.values[f.name] = texts[-1] if texts else ""
        if nul:
            form.add_error(f.name, NUL_MESSAGE)
            continue
        if not texts:
            continue
        try:
            _set(form.data, f.path, _read(f, texts))
        except ValueError as exc:
            form.add_error(f.name, str(exc))
    form.data.setdefault("workload", {})
    try:
        form.request = RecommendationRequest.model_validate({**form.data, **(extra or {})})
    except ValidationError as exc:
        for err in exc.errors():
            name = field_for_loc(err.get("loc", ())) or "_form"
            form.add_error(name, error_message(err))
    if form.errors:
        form.request = None
    return form


# ---------------------------------------------------------------------------- errors


def field_for_loc(loc: Sequence[Any]) -> str | None:
    """The form field a validation error location (or a service's dotted field) names."""
    parts = tuple(str(p) for p in loc if not isinstance(p, int) and p not in ("body", "query"))
    by_path = {f.path: f.name for f in question_fields()}
    while parts:
        if parts in by_path:
            return by_path[parts]
        parts = parts[:-1]
    return None


def field_for_name(name: str | None) -> str | None:
    """Map a service error's ``field`` ('workload.model.params', 'params') to a form field."""
    if not name:
        return None
    if name in fields_by_name():
        return name
    return field_for_loc(name.split("."))


def error_message(err: Mapping[str, Any]) -> str:
    """A pydantic error in the words of the form: limits in the field's own units."""
    kind = str(err.get("type", ""))
    ctx = err.get("ctx") or {}
    name = field_for_loc(err.get("loc", ()))
    f = fields_by_name().get(name or "")

    def lim(value: Any) -> str:
        try:
            return f.show_limit(float(value)) if f else fmt_limit(float(value))
        except (TypeError, ValueError):
            return str(value)

    if kind == "greater_than_equal":
        return f"must be at least {lim(ctx.get('ge'))}"
    if kind == "greater_than":
        return f"must be more than {lim(ctx.get('gt'))}"
    if kind == "less_than_equal":
        return f"must be at most {lim(ctx.get('le'))}"
    if kind == "less_than":
        return f"must be less than {lim(ctx.get('lt'))}"
    if kind in ("int_from_float", "int_parsing"):
        return "must be a whole number"
    if kind in ("float_parsing", "float_type", "int_type"):
        return f"must be a number, {number_example(f) if f else NUMBER_HELP}"
    if kind == "bool_parsing":
        return "choose yes or no"
    if kind == "literal_error":
        if f and f.choices:
            given = err.get("input")
            head = f"'{given}' is not a choice; " if isinstance(given, str) and given else ""
            return head + "choose one of: " + ", ".join(label for _, label in f.choices)
        return "choose one of the listed values"
    if kind == "too_long":
        return f"at most {ctx.get('max_length')} items"
    if kind == "string_too_long":
        return f"at most {ctx.get('max_length')} characters"
    return humanize(error_text(err))


def humanize(message: str) -> str:
    """A service message names fields by id ('num_kv_heads cannot exceed num_heads'):
    say them as the form labels them."""
    out = message
    for f in sorted(question_fields(), key=lambda f: -len(f.name)):
        words = f.label[0].lower() + f.label[1:] if f.label[1:2].islower() else f.label
        # plain words ('task', 'preset') are left alone; ids and dotted paths are not
        prefix = r"(?:[a-z_]+\.)*" if "_" in f.name else r"(?:[a-z_]+\.)+"
        pattern = r"(?<![\w.])" + prefix + re.escape(f.name) + r"(?![\w])"
        out = re.sub(pattern, words, out)
    return out
