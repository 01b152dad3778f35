"""The question form and its answer: /, /recommendations (HTML, JSON, CSV)."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from app.catalog import service as catalog
from app.config import Settings
from app.deps import SessionDep, SettingsDep, request_session
from app.domain import cost as costs
from app.domain import rank
from app.domain.figures import limit_duration
from app.domain.serving import weights_name
from app.domain.units import GIB_PER_GB
from app.errors import AppError, InvalidInput, NotFound, error_body
from app.recommend import orchestrate
from app.recommend import schemas as rs
from app.recommend.repository import Stamps, input_stamps
from app.recommend.summary import split_stale
from app.recommend.whatif import config_name
from app.recommend.workloads import blank_peft, recipe_checkpointing, resolve_workload
from app.reports import service as reports
from app.vocab import CONV_FAMILIES, RUNTIME_FRAMEWORK, TRAINING_TASKS
from app.web import charts
from app.web.forms import (
    FormField,
    QuestionForm,
    field_for_name,
    fields_by_name,
    grouped_fields,
    humanize,
    parse_number,
    parse_question,
    question_fields,
)
from app.web.labels import CHOICES, choice_label, precision_label
from app.web.offer_words import price_is_stale
from app.web.per_usd import row_per_usd
from app.web.serving_charts import serving_charts
from app.web.templating import num, params_h, query_string, render, usd

router = APIRouter(include_in_schema=False)


# ---------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class PresetView:
    id: str
    name: str
    description: str
    family: str
    params: float
    task: str
    defaults: dict[str, Any]
    model: dict[str, Any]
    hints: dict[str, str] = field(default_factory=dict)  # what a blank field means under it
    # the hints another task changes: {task: {field: text}} (a blank batch under fine-tuning
    # is Alpaca's 128 sequences, not the inference preset's 1)
    task_hints: dict[str, dict[str, str]] = field(default_factory=dict)


# The preset files are read once per data directory (presets.load_presets), so their views
# and placeholders are built once too: every page showed the form rebuilt them (a tenth of
# the answer page). Shared between requests: read-only.
_PRESET_VIEWS: dict[Path, list[PresetView]] = {}


def _presets(settings: Settings) -> list[PresetView]:
    views = _PRESET_VIEWS.get(settings.data_dir)
    if views is None:
        views = [
            PresetView(
                id=w.id,
                name=w.name,
                description=w.description,
                family=w.model.family,
                params=w.model.params,
                task=str(w.defaults.get("task") or ""),
                defaults=dict(w.defaults),
                model=w.model.model_dump(),
                hints=_hints(dict(w.defaults), w.model.model_dump()),
                task_hints=_task_hints(w.id, dict(w.defaults), settings.data_dir),
            )
            for w in orchestrate.list_workloads(settings).workloads
        ]
        _PRESET_VIEWS[settings.data_dir] = views
    return views


def _hints(defaults: dict[str, Any], model: dict[str, Any]) -> dict[str, str]:
    """What a blank field means under a preset, as people write it: placeholders."""
    hints: dict[str, str] = {}
    for f in question_fields():
        if f.path[:2] == ("workload", "model"):
            value = model.get(f.path[-1])
        elif f.path[0] == "workload" and len(f.path) == 2:
            value = defaults.get(f.path[-1])
        else:
            continue
        if value is not None:
            hints[f.name] = f.show(value)
    return hints


def _task_hints(preset: str, defaults: dict[str, Any], data_dir: Path) -> dict[str, dict[str, str]]:
    """The blank batch the engine assumes when the preset is asked for another task that
    trains (workloads._batch_size: GPT-3's tokens per step, Alpaca's 128 sequences, He et
    al.'s 128 images), where it is not the preset's own: the placeholder follows the task as
    the blank "Activation checkpointing" does. Read from the resolver, not copied."""
    out: dict[str, dict[str, str]] = {}
    own = defaults.get("batch_size")
    by_name = fields_by_name()
    show = by_name["batch_size"].show
    for task in TRAINING_TASKS:
        if task == defaults.get("task"):
            continue
        try:
            work, _ = resolve_workload(rs.WorkloadIn(preset=preset, task=task), data_dir)
        except AppError:
            continue  # the task is refused for this preset: the answer says why
        said: dict[str, str] = {}
        if work.batch_size != own:
            said["batch_size"] = show(work.batch_size)
        # a fine-tuning recipe's checkpointing is not carried into pretraining
        # (workloads._gradient_checkpointing): "Yes (preset)" had stood over an answer
        # priced without it (a recipe that turns it on says so itself: RECIPE_ON)
        if defaults.get("gradient_checkpointing") and not work.gradient_checkpointing:
            said["gradient_checkpointing"] = by_name["gradient_checkpointing"].show(False)
        if said:
            out[task] = said
    return out


def _preset_hints(presets: list[PresetView]) -> dict[str, dict[str, str]]:
    return {p.id: p.hints for p in presets}


def _device_reports(session: Any) -> list[Any]:
    try:
        return list(reports.list_reports(session, limit=100).items)
    except AppError:
        return []


def _form_context(
    session: Any, form: QuestionForm, presets: list[PresetView], prev: str = ""
) -> dict[str, Any]:
    """What the question form (templates/_question.html) shows."""
    hints = _preset_hints(presets)
    preset_id = str(form.values.get("preset") or "")
    current = next((p for p in presets if p.id == preset_id), None)
    task = str(form.values.get("task") or (current.task if current else "") or "")
    shown = hints.get(preset_id, {})
    if current is not None and task in current.task_hints:
        shown = {**shown, **current.task_hints[task]}
    return {
        "form": form,
        "groups": grouped_fields(),
        "presets": presets,
        "preset_hints": hints,
        "preset_tasks": {p.id: p.task for p in presets},
        # what the script needs to say a blank "Activation checkpointing" and a blank batch
        # as the engine reads them under the task chosen
        "preset_recipes": {
            p.id: [p.family, p.defaults.get("peft") or "", p.task_hints] for p in presets
        },
        "current_hints": shown,
        "blank_labels": _blank_labels(form, current, task),
        "no_preset_labels": NO_PRESET_BLANK,
        "custom_note": CUSTOM_NOTE,
        "current_task": task,
        "device_reports": _device_reports(session),
        "fixed_assumptions": FIXED_ASSUMPTIONS,
        "assumptions_summary": _assumptions_summary(form),
        # the question this one changes, carried by the form so the answer can compare them
        "prev": prev,
    }


# A blank choice with no preset behind it reads "Default" (or "Default: <assumed>"), except a
# field a custom model must give: the model family ("Default" had sat over a refusal naming
# it). static/js/app.js restores these words when "Custom" is picked.
NO_PRESET_BLANK: dict[str, str] = {"family": "Choose one (no preset)"}

# What a custom model must give, as workloads._check_model asks it (one round trip, not three:
# the family, then a transformer's layers and hidden size, each had been refused in turn).
CUSTOM_NOTE = (
    "Custom workload: give the task, the model family and its size (Parameters), or paste its "
    "config.json; a transformer (decoder, encoder, encoder–decoder) also needs its Layers and "
    "Hidden size, a CNN, diffusion model or MLP its Forward GFLOPs per sample, a vision "
    "transformer either (under “Model shape”)."
)


# The blank "Activation checkpointing" where the engine turns it on whatever the preset says
# (workloads.recipe_checkpointing): "No (preset)" had sat above an answer saying "Gradient
# checkpointing is on, as fine-tuning recipes run it". static/js/app.js keeps it current.
RECIPE_ON = "Yes (fine-tuning default)"


def _blank_labels(form: QuestionForm, preset: PresetView | None, task: str) -> dict[str, str]:
    """Blank options whose words depend on other fields, by field name."""
    peft = str(form.values.get("peft") or "") or blank_peft(
        task, preset.defaults.get("peft") if preset else None
    )
    family = preset.family if preset else str(form.values.get("family") or "")
    if recipe_checkpointing(task, peft, family):
        return {"gradient_checkpointing": RECIPE_ON}
    return {}


def _assumptions_summary(form: QuestionForm) -> str:
    """The folded assumptions panel's values in one line, so a default is never hidden."""
    parts = []
    for f in question_fields():
        if f.group != "assumptions":
            continue
        given = form.values.get(f.name)
        text = f.show(_number_or_text(given)) if given else (f.default_text or "—")
        parts.append(f"{f.label}: {text}")
    return " · ".join(parts)


def _number_or_text(text: str) -> Any:
    try:
        return parse_number(text)
    except ValueError:
        return text


# What the engine assumes that the request does not let you set; shown in the assumptions
# panel beside the fields that set the rest (usage, price basis, balanced weight,
# electricity), so nothing is hidden.
FIXED_ASSUMPTIONS: tuple[tuple[str, str], ...] = (
    (
        "Renting",
        "the cheapest instance that holds the GPUs a row needs, paid whole (a larger node "
        "when no smaller shape exists), from the kinds of host you allow; dated.",
    ),
    ("Power", "each card draws its board power (TDP) while it works; an upper bound."),
)


# ---------------------------------------------------------------------------- the question


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    presets = _presets(settings)
    form = parse_question(request.query_params.multi_items(), use_defaults=True)
    # The home page shows the question; errors only appear once the user submits.
    form.errors.clear()
    prev = _prev_of(request.query_params.multi_items())
    return render(request, "index.html", _form_context(session, form, presets, prev))


def _prev_of(items: Items) -> str:
    """The previous question's query (the ``prev`` pair the form carries), if it is a link."""
    prev = dict(items).get("prev", "")
    return prev if len(prev) <= SHARE_URL_LIMIT else ""


class _FormInvalid(Exception):
    def __init__(self, form: QuestionForm) -> None:
        self.form = form


Items = list[tuple[str, str]]


def _answer(
    request: Request,
    session: Any,
    settings: Settings,
    *,
    what_if: bool = False,
    items: Items | None = None,
    stamps: Stamps | None = None,
) -> tuple[QuestionForm, list[PresetView], rs.RecommendationResponse]:
    presets = _presets(settings)
    pairs = request.query_params.multi_items() if items is None else items
    form = parse_question(pairs, extra={"what_if": what_if})
    if form.request is None:
        raise _FormInvalid(form)
    try:
        answer = orchestrate.recommend_for(session, settings, form.request, stamps)
    except (InvalidInput, NotFound) as exc:
        form.add_error(field_for_name(exc.field) or "_form", humanize(exc.message))
        raise _FormInvalid(form) from exc
    return form, presets, answer


def _invalid_page(
    request: Request, session: Any, settings: Settings, form: QuestionForm, prev: str = ""
) -> HTMLResponse:
    ctx = _form_context(session, form, _presets(settings), prev)
    return render(request, "index.html", ctx, status_code=422)


@router.get("/recommendations", response_class=HTMLResponse)
def recommendations(request: Request) -> Response:
    # the session opened here, in the page's own thread (app.deps.request_session)
    with request_session(request) as session:
        settings: Settings = request.app.state.settings
        return _answer_page(request, session, settings, request.query_params.multi_items())


def _answer_url(request: Request) -> str:
    """``request.url_for("recommendations")``, from the path pages.install found once."""
    return str(request.app.state.answer_path.make_absolute_url(base_url=request.base_url))


# A question longer than this (a pasted config.json) is answered from the POSTed form
# rather than redirected to a link: servers and proxies refuse request lines much longer
# than 8 KiB (uvicorn's h11 limit is 16 KiB, nginx's default 8 KiB).
SHARE_URL_LIMIT = 8000


@router.post("/recommendations", response_class=HTMLResponse)
async def recommendations_post(
    request: Request, session: SessionDep, settings: SettingsDep
) -> Response:
    """The form posts here, so a question of any size up to the body limit gets through; a
    short one is sent on to its shareable GET link (post/redirect/get)."""
    body = await request.body()
    try:
        items = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        items = []
    query = urlencode(items)
    if len(query) <= SHARE_URL_LIMIT:
        url = _answer_url(request) + ("?" + query if query else "")
        return RedirectResponse(url, status_code=303)
    return await run_in_threadpool(_answer_page, request, session, settings, items)


def _answer_page(request: Request, session: Any, settings: Settings, items: Items) -> Response:
    # What changes the answer re-ranks the catalog about seven times: it is computed when the
    # reader asks for it (a link on the page adds what_if=1), not for every answer.
    what_if = dict(items).get("what_if") == "1"
    prev = _prev_of(items)
    # read once, for the answer's caches and the catalog's date
    stamps = input_stamps(session)
    try:
        form, presets, answer = _answer(
            request, session, settings, what_if=what_if, items=items, stamps=stamps
        )
    except _FormInvalid as exc:
        return _invalid_page(request, session, settings, exc.form, prev)
    if not answer.recommendations and not what_if:
        # Nothing can run it: what would change that is the answer, so it is always shown.
        form, presets, answer = _answer(
            request, session, settings, what_if=True, items=items, stamps=stamps
        )
    query = form.query()
    share = query_string(query)
    linkable = len(share) <= SHARE_URL_LIMIT
    changed = bool(prev) and prev != share  # the user changed a question: offer the comparison
    # The answer page has no form (its "change the question" links to the one on /): none of
    # the form's context (_form_context: the stored reports it offers, its hints) is read here.
    ctx = dict(
        answer=answer,
        query=query,
        what_if_href="?" + urlencode([*query, ("what_if", "1")]) + "#what-if" if linkable else None,
        preset=next((p for p in presets if p.id == answer.workload.preset), None),
        price_charts=_price_charts(answer),
        memory_chart=_memory_chart(answer),
        load_memory=_load_memory(answer),
        per_dollar=_per_dollar_label(answer),
        # each row's work per dollar on the basis its cost uses, within the user's caps
        row_per_usd=partial(
            row_per_usd, acquisition=answer.acquisition, constraints=_constraints(form)
        ),
        score_head=SCORE_HEADS.get(answer.objective, SCORE_HEADS["balanced"]),
        # "change the question" carries this one along, so the next answer can compare them
        change_href="/?" + (urlencode([*query, ("prev", share)]) if linkable else share),
        prev_href="/recommendations?" + prev if changed else None,
        compare_href=(
            "?" + urlencode([*query, ("prev", prev), ("compare", "1")]) + "#compare"
            if changed
            else None
        ),
        compared=(
            _compare(request, session, settings, answer, form, prev, stamps)
            if changed and dict(items).get("compare") == "1"
            else None
        ),
        serving_charts=serving_charts(answer),
        verdict=split_stale(answer.summary.sentence) if answer.summary else ("", None),
        echo=_echo(
            answer,
            form.request,
            catalog.data_as_of(session, stamps.catalog),
            change_href="/?" + share + "#f-dataset_samples" if linkable else "#question",
        ),
        share_url=_answer_url(request) + "?" + share if linkable else None,
        # the usage every cost on the page assumes (the request's, defaults filled in)
        usage=_constraints(form).usage(),
        more_rows=more_rows(answer, query) if linkable else None,
        cards_href=_cards_href(answer, form.request),
    )
    return render(request, "recommendations.html", ctx)


def _cards_href(answer: Any, req: rs.RecommendationRequest | None = None) -> str | None:
    """The top picks side by side on /compare with the preset's job (its task and PEFT, and
    the batch size, sequence length and output tokens ``req`` asked): a new user who asked a
    QLoRA fine-tune had compared the two cards from the catalog's ticks, spec sheet only. None
    for serving (the comparison has no load) or a custom model."""
    w = answer.workload
    slugs = list(dict.fromkeys(r.gpu.slug for r in answer.recommendations))[:3]
    if not w.preset or w.task == "serving" or len(slugs) < 2:
        return None
    job = [("slugs", ",".join(slugs)), ("preset", w.preset), ("task", w.task)]
    if w.peft and w.peft != "none":
        job.append(("peft", w.peft))
    if req is not None:  # the sizes asked, not the preset's (which /compare fills in itself)
        # output tokens only where the job generates them (the comparison refuses them
        # elsewhere, as the question does)
        generated = ("output_tokens",) if w.task == "inference" else ()
        for key in ("batch_size", "seq_len", *generated):
            if (value := getattr(req.workload, key)) is not None:
                job.append((key, str(value)))
    return "/compare?" + urlencode(job)


def more_rows(answer: rs.RecommendationResponse, query: Items) -> tuple[int, int, str] | None:
    """Rows ranked past ``limit``: how many, how many there are, and the link that asks
    for them all (within the form's own bound on ``limit``). Without it a card sorted below
    the rows shown (experimental software after supported, whatever its score) was counted in
    "GPUs that can run it" and appeared nowhere on the page."""
    hidden = answer.count - len(answer.recommendations)
    bound = fields_by_name()["limit"].maximum
    rows = min(answer.count, int(bound)) if bound else answer.count
    if hidden <= 0 or rows <= len(answer.recommendations):
        return None
    pairs = [(k, v) for k, v in query if k != "limit"] + [("limit", str(rows))]
    return hidden, answer.count, "?" + urlencode(pairs) + "#ranking"


def _constraints(form: QuestionForm) -> rs.ConstraintsIn:
    return form.request.constraints if form.request else rs.ConstraintsIn()


def _echo(
    answer: rs.RecommendationResponse,
    req: rs.RecommendationRequest | None,
    as_of: str | None,
    change_href: str | None = None,
) -> list[tuple[str, ...]]:
    """Every assumption behind the answer, in words, for the page's header; an assumed job size
    carries the link (``change_href``) to the form field that replaces it."""
    w = answer.workload
    out: list[tuple[str, ...]] = [("Task", choice_label("task", w.task))]
    if answer.serving is not None:
        # The planner picks weights/KV precision and batch per GPU; the job is the load.
        out.append(("Load", answer.serving.load))
        given = req.workload.runtime if req and req.workload else None
        out.append(
            (
                "Runtime",
                choice_label("runtime", given)
                if given
                else "per GPU: vLLM on NVIDIA, AMD and Intel (llama.cpp where vLLM does not run), "
                "MLX on Apple, llama.cpp on CPU",
            )
        )
        return out + _echo_limits(answer, req, as_of)
    job = [
        precision_label(w.precision, w.task, w.model.family, w.runtime, w.master_weights),
        f"batch {num(w.batch_size)}",
    ]
    if w.seq_len:
        job.append(f"{num(w.seq_len)} tokens in")
    if w.output_tokens and w.task in ("inference", "serving"):
        job.append(f"{num(w.output_tokens)} tokens out")
    if w.peft != "none":
        # the form's own words ("QLoRA (4-bit base)"), never the id shouted ("QLORA")
        job.append(choice_label("peft", w.peft) + (f" rank {w.lora_rank}" if w.lora_rank else ""))
    if w.gradient_checkpointing:
        job.append("activation checkpointing")
    if req is not None and req.workload.channels_last and w.model.family in CONV_FAMILIES:
        job.append("channels-last tensors")
    out.append(("Job", ", ".join(job)))
    if w.dataset_samples and w.task in ("training", "fine-tuning"):
        size = f"{params_h(w.dataset_samples)} samples × {num(w.epochs)} epoch" + "s" * (
            w.epochs != 1
        )
        basis = w.dataset_basis or "yours"
        if basis.startswith("assumed") and change_href:
            out.append(("Dataset", f"{size}, {basis}", change_href))
        else:
            out.append(("Dataset", f"{size}, {basis}"))
    if w.latency_target_ms:
        out.append(("Latency target", f"{num(w.latency_target_ms)} ms per batch"))
    llm = w.task == "inference" and w.model.family == "decoder"
    return out + _runtime_echo(w.runtime, llm) + _echo_limits(answer, req, as_of)


# torch.compile as an LLM's decode and prefill are priced: CUDA graphs, gpt-fast's mode
# (data/efficiency.yaml's decode|prefill row); other jobs get the form's "default mode" label
COMPILE_LLM_LABEL = 'torch.compile (CUDA graphs, mode="reduce-overhead")'


def _runtime_echo(runtime: str, llm_inference: bool = False) -> list[tuple[str, ...]]:
    """What runs the job: its framework, and the runtime where that is not the framework's
    own; a runtime that is no framework's program alone."""
    framework = RUNTIME_FRAMEWORK.get(runtime)
    if framework is None:
        return [("Runtime", choice_label("runtime", runtime))]
    out: list[tuple[str, ...]] = [("Framework", choice_label("framework", framework))]
    if runtime == "torch-compile" and llm_inference:
        out.append(("Runtime", COMPILE_LLM_LABEL))
    elif runtime != framework:
        out.append(("Runtime", choice_label("runtime", runtime)))
    return out


_BUY_BASIS = {
    "auto": "a new price, else used/market, else launch",
    "new": "new prices only",
    "used": "used/market prices only",
    "launch": "launch prices (MSRP) only",
}


def _echo_limits(
    answer: rs.RecommendationResponse, req: rs.RecommendationRequest | None, as_of: str | None
) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    c = req.constraints if req else rs.ConstraintsIn()
    hosts = ", ".join(c.tiers) if c.tiers else "any host"
    if c.exclude_marketplace:
        hosts = "on-demand"
    spot = ", spot allowed" if c.allow_spot else ""
    rent = f"renting: the cheapest suitable instance ({hosts}{spot})"
    buy = "buying: " + _BUY_BASIS[c.purchase_basis]
    either = f"{buy}; {rent}; each option at the cheaper of the two"
    basis = {"buy": buy, "rent": rent, "either": either}[answer.acquisition]
    out.append(("Prices", basis))
    if answer.acquisition != "rent":
        # the hours a bought card's price is spread over: nothing to say when nothing is bought
        use = c.usage()
        out.append(
            (
                "Usage",
                f"{use.hours_per_week:g} h/week × {use.years:g} years = {use.hours:,.0f} h"
                + (f", resale {use.resale_fraction:.0%}" if use.resale_fraction else "")
                + " (a bought card's price is spread over it)",
            )
        )
    limits = []
    if c.max_purchase_usd is not None:
        limits.append(f"buy ≤ {usd(c.max_purchase_usd)}")
    if c.max_hourly_usd is not None:
        limits.append(f"rent ≤ {usd(c.max_hourly_usd)}/h")
    if c.max_job_cost_usd is not None:
        limits.append(f"job ≤ {usd(c.max_job_cost_usd)}")
    out.append(("Budget", ", ".join(limits) or "no limit"))
    if c.max_hours is not None:
        out.append(("Finish within", limit_duration(c.max_hours)))
    out.append(
        ("GPUs per option", f"exactly {c.num_gpus}" if c.num_gpus else f"up to {c.max_gpus}")
    )
    kwh = (
        c.electricity_usd_per_kwh
        if c.electricity_usd_per_kwh is not None
        else costs.DEFAULT_ELECTRICITY_USD_PER_KWH
    )
    out.append(("Electricity", f"${kwh:g} per kWh"))
    if c.vendors:
        out.append(("Vendors", ", ".join(choice_label("vendors", v) for v in c.vendors)))
    if c.segments:
        out.append(("Kinds of card", ", ".join(choice_label("segments", v) for v in c.segments)))
    ranked = choice_label("objective", answer.objective)
    if answer.serving is not None and answer.objective == "cheapest":
        # a serving plan has no job to finish: it is ranked on the price of an hour of the load
        ranked = "Cheapest per hour of the load"
    if answer.objective == "balanced":
        w = req.speed_weight if req else rank.DEFAULT_SPEED_WEIGHT
        ranked += f" (speed^{w:g} × value^{1 - w:g})"
    out.append(("Ranked by", ranked))
    out.append(("Catalog data as of", as_of or "unknown"))
    return out


# The column that explains the order: the score each row is ranked by (rank.rank), named for
# the objective. Scores are relative to the highest-scoring card evaluated, which need not be
# shown: under balanced a card without a price scores on speed alone and is listed last.
SCORE_HEADS: dict[str, tuple[str, str]] = {
    "balanced": (
        "Balanced score",
        "speed^w × value^(1−w), speed and value each as a fraction of the best card's; "
        "1 is the highest score among the cards evaluated",
    ),
    "fastest": ("Speed score", "throughput as a fraction of the fastest card's"),
    "best_value": ("Value score", "work per dollar as a fraction of the best card's"),
    "cheapest": ("Cost score", "the cheapest card's cost ÷ this card's"),
}


@dataclass(frozen=True)
class Compared:
    """Two answers side by side: what the user changed and what the top pick became."""

    changes: list[tuple[str, str, str]]  # field label, before, now
    rows: list[tuple[str, str, str]]  # what, before, now
    error: str | None = None


def _compare(
    request: Request,
    session: Any,
    settings: Settings,
    answer: rs.RecommendationResponse,
    form: QuestionForm,
    prev: str,
    stamps: Stamps | None = None,
) -> Compared:
    items = parse_qsl(prev, keep_blank_values=True)
    try:
        before_form, _, before = _answer(request, session, settings, items=items, stamps=stamps)
    except _FormInvalid as exc:
        return Compared([], [], "the previous question no longer reads: " + _first(exc.form))
    # the questions as the engine read them (defaults filled in), so a field the form now
    # sets to its default is no change
    was = before_form.request.model_dump(mode="json") if before_form.request else {}
    now = form.request.model_dump(mode="json") if form.request else {}
    changes = []
    for f in question_fields():
        old, new = _at(was, f.path), _at(now, f.path)
        if old != new:
            changes.append((f.label, _shown(f, old), _shown(f, new)))
    rows = [
        (what, _top_fact(before, what), _top_fact(answer, what))
        for what in ("Top pick", "Throughput", "Price", "GPUs that can run it")
    ]
    return Compared(changes, rows)


def _first(form: QuestionForm) -> str:
    return next(iter(form.errors.values()), "invalid")


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _shown(f: FormField, value: Any) -> str:
    """A request value as the form's choices name it; None is the engine's default."""
    words = CHOICES.get(f.name, {})
    values = value if isinstance(value, list) else [value]
    text = ", ".join(
        words.get(str(v), str(v)) if isinstance(v, str) else f.show(v)
        for v in values
        if v not in (None, "")
    )
    return text or "— (default)"


def _top_fact(answer: rs.RecommendationResponse, what: str) -> str:
    if what == "GPUs that can run it":
        return str(answer.count)
    if not answer.recommendations:
        return "no GPU"
    top = answer.recommendations[0]
    if what == "Top pick":
        return config_name(top.gpu.name, top.num_gpus)
    if what == "Throughput":
        return f"{num(top.throughput.value)} {top.throughput.unit}"
    prices = []
    if answer.acquisition in ("buy", "either") and top.cost.purchase_usd is not None:
        prices.append(f"buy {usd(top.cost.purchase_usd)}")
    if answer.acquisition in ("rent", "either") and top.cost.hourly_usd is not None:
        prices.append(f"rent {usd(top.cost.hourly_usd)}/h")
    return ", ".join(prices) or "no price known"


def _per_dollar_thing(answer: rs.RecommendationResponse) -> str:
    """What work per dollar counts: the throughput's own unit ("tokens" of "tokens/s")."""
    unit = answer.recommendations[0].throughput.unit if answer.recommendations else "samples/s"
    return unit.split("/")[0] if "/" in unit else "samples"


def _per_dollar_label(answer: rs.RecommendationResponse) -> str:
    thing = _per_dollar_thing(answer)
    how = {"rent": " (rented)", "buy": " (bought)"}.get(answer.acquisition, "")
    return f"{thing} per ${how}"


def _price_charts(answer: rs.RecommendationResponse) -> list[tuple[str, charts.Chart]]:
    if answer.serving is not None:
        return []  # every row carries the same load: the serving charts plot latency instead
    bases = {"buy": ["buy"], "rent": ["rent"]}.get(answer.acquisition, ["buy", "rent"])
    unit = answer.recommendations[0].throughput.unit if answer.recommendations else ""
    out = []
    for basis in bases:
        points = []
        for row in answer.recommendations:
            # the row's own prices (its offer, all GPUs), as the table shows them
            price = row.cost.hourly_usd if basis == "rent" else row.cost.purchase_usd
            if price is None:
                continue
            name = config_name(row.gpu.name, row.num_gpus)
            points.append(
                {
                    "x": price,
                    "y": row.throughput.value,
                    "label": name,
                    "title": f"#{row.rank} {name}: {num(row.throughput.value)} "
                    f"{row.throughput.unit} for {usd(price)}{'/h' if basis == 'rent' else ''}",
                    "href": f"#rec-{row.rank}",
                    "emphasis": row.rank == 1,
                }
            )
        if not points:
            continue
        chart = charts.xy_chart(
            [("GPUs", points)],
            x_label="rent, $ per hour (all GPUs)" if basis == "rent" else "price, $ (all GPUs)",
            y_label=f"throughput ({unit})",
            log_x=True,
            pareto=True,
        )
        what = "rental price per hour" if basis == "rent" else "purchase price"
        out.append((f"Throughput vs {what}", chart))
    return out


@dataclass(frozen=True)
class LoadMemory:
    """A serving answer's memory card, per replica of the top pick: the model's weights (each
    replica holds a whole copy) plus the KV cache of that replica's share of the load
    (``kv_gb``, None where no row carries it), over its ``gpus``, and its per-GPU share; the
    fleet's total (every replica's weights and KV cache) is said apart, named as such. The
    whole-job figure other tasks show is, for serving, the weights alone: "15 GB" for 100
    requests of 8,256 tokens (about 124 GB with their KV cache) read as one 24 GB card; and one
    replica's weights beside all replicas' KV cache ("15 GB of weights + 11.7 GB of KV cache",
    5 replicas) was neither a replica's nor the fleet's memory."""

    weights_gb: float
    kv_gb: float | None = None
    gpus: int = 0  # per replica
    per_gpu_gb: float = 0.0
    replicas: int = 1

    @property
    def total_gb(self) -> float:
        """One replica: its weights + its KV cache."""
        return self.weights_gb + (self.kv_gb or 0.0)

    @property
    def fleet_gb(self) -> float:
        return self.replicas * self.total_gb


def _load_memory(answer: rs.RecommendationResponse) -> LoadMemory | None:
    """The serving card's figures: the KV cache one replica of the top pick holds at the asked
    load (its per-GPU KV over the replica's GPUs: its requests in flight, prompt + output
    tokens each), as the API's row gives it; the weights are ``answer.memory`` (the whole
    model, once per replica)."""
    if answer.serving is None:
        return None
    top = answer.recommendations[0] if answer.recommendations else None
    if top is None or top.serving is None:
        return LoadMemory(weights_gb=answer.memory.required_gb)
    sv = top.serving
    kv = top.memory.breakdown.get("kv_cache", 0.0) * sv.gpus_per_replica
    return LoadMemory(
        answer.memory.required_gb, kv, sv.gpus_per_replica, top.memory.required_gb, sv.replicas
    )


def _memory_chart(answer: rs.RecommendationResponse) -> charts.BarChart:
    rows = [
        {
            "label": f"#{r.rank} {config_name(r.gpu.name, r.num_gpus)}",
            # in GiB (2^30 bytes), like every memory figure on the pages
            "value": r.memory.required_gb / GIB_PER_GB,
            "ref": (r.memory.available_gb or 0.0) / GIB_PER_GB or None,
        }
        for r in answer.recommendations[:15]
    ]
    # scaled to the largest card, none cut off: a card's memory is a spec, not a measurement
    # robust scaling guards against, and where the rows needed ~5 GiB on 8-16 GiB cards its
    # fence (11.1 GiB) had marked a 12 GiB card "off scale" (llama-3-8b int4)
    return charts.bar_chart(
        rows,
        value_name="needed per GPU",
        ref_name="available per GPU",
        unit="GiB",
        label_w=260,
        robust=False,
    )


@router.get("/recommendations.json")
def recommendations_json(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    try:
        _, _, answer = _answer(request, session, settings)
    except _FormInvalid as exc:
        return _form_json_error(exc.form)
    return JSONResponse(answer.model_dump(mode="json"))


def _form_json_error(form: QuestionForm) -> JSONResponse:
    errors = [{"field": k, "message": v} for k, v in form.errors.items()]
    first = errors[0]
    return JSONResponse(
        error_body(
            "invalid_input",
            f"{first['field']}: {first['message']}",
            {"field": first["field"], "errors": errors},
        ),
        status_code=422,
    )


CSV_COLUMNS = (
    "rank",
    "slug",
    "name",
    "num_gpus",
    "fits",
    "precision",
    "memory_required_gb",
    "memory_available_gb",
    "throughput",
    "throughput_unit",
    "latency_ms",
    "time_to_finish_h",
    "bottleneck",
    "purchase_usd",
    "purchase_basis",
    "hourly_usd",
    "offer_provider",
    "offer_instance_type",
    "offer_gpus",
    "offer_instances",
    "offer_tier",
    "offer_as_of",
    "rent_to_finish_usd",
    "buy_to_finish_usd",
    "job_cost_usd",
    "samples_per_usd_rent",
    "samples_per_usd_buy",
    "score",
    "throughput_low",
    "throughput_high",
    "speedup_vs_baseline",
    # added after the columns above, which keep their names and places for existing readers
    "purchase_as_of",
    "purchase_source",
    "purchase_stale",
    "offer_source",
    "offer_stale",
    "per_usd_unit",
    # a serving question's figures the page shows (empty for other tasks): the row's own
    # whole-hour $ per million output tokens on its price basis, latency at the load, and what
    # the weights and the KV cache are stored as
    "usd_per_million_output_blended",
    "price_basis",
    "ttft_ms",
    "ttft_p95_ms",
    "itl_ms",
    "itl_p95_ms",
    "weight_format",
    "kv_cache_precision",
    # an encoder's serving row (an embedding model, a reranker) in its own units, where a
    # decoder's has tokens: embeddings (sequences) a second at the load and at saturation, its
    # request latency (mean, the figure a p50 target is judged on; p95) and $ per million
    # embeddings on the row's price basis; empty on a decoder's row, whose TTFT/ITL and
    # output-token columns are in turn empty on an encoder's
    "embeddings_per_s",
    "max_embeddings_per_s",
    "embedding_latency_ms",
    "embedding_latency_p95_ms",
    "usd_per_million_embeddings",
    # a deadline's reading of the row: the hours to finish at its band's slow end, and whether
    # that end misses the deadline (both empty without a deadline)
    "slow_end_hours",
    "may_miss_deadline",
)

# Figures are estimates good to a few percent: more digits than this are noise in a sheet
# (102.287454480918 tokens/s, 12.884901888000002 GB).
CSV_DIGITS = 4


def _csv_number(value: float, money: bool = False) -> float | int:
    """A float to CSV_DIGITS significant figures; an amount of dollars (``money``) to the
    cent where that keeps more (a $12,345.67 job, not $12,350). A whole result is written
    as an integer."""
    if not math.isfinite(value) or value == 0:
        return value
    digits = CSV_DIGITS - 1 - math.floor(math.log10(abs(value)))
    rounded = round(value, max(digits, 2) if money else digits)
    if rounded == int(rounded) and abs(rounded) < 1e15:
        return int(rounded)
    return rounded


def _csv_cell(value: Any, money: bool = False) -> Any:
    # Spreadsheet formula injection: text that starts like a formula is quoted.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    if isinstance(value, float):
        return _csv_number(value, money)
    return "" if value is None else value


def _csv_dates(r: rs.Recommendation, settings: Settings) -> tuple[Any, ...]:
    """The purchase price's date and source and the rented offer's source, each with
    whether it is stale (the offers API's rule)."""
    buy = r.cost.buy
    as_of = buy.as_of if buy is not None else r.cost.purchase_as_of
    offer_as_of = r.offer.as_of if r.offer is not None else None
    return (
        as_of,
        buy.source if buy is not None else None,
        price_is_stale(as_of, settings) if as_of else None,
        r.offer.source if r.offer is not None else None,
        price_is_stale(offer_as_of, settings) if offer_as_of else None,
    )


def _csv_serving(sv: rs.ServingOut | None) -> tuple[Any, ...]:
    if sv is None:
        return (None,) * 13
    if sv.kind == "encoder":
        # one forward pass a request: no first token, no next one, no output tokens, no KV cache
        return (
            None,
            sv.price_basis,
            *(None,) * 4,
            weights_name(sv.weight_precision, sv.weight_format),
            None,
            sv.embeddings_per_s,
            sv.max_embeddings_per_s,
            sv.ttft_ms,
            sv.ttft_p95_ms,
            sv.usd_per_million_embeddings,
        )
    return (
        sv.usd_per_million_output_tokens_blended,
        sv.price_basis,
        sv.ttft_ms,
        sv.ttft_p95_ms,
        sv.itl_ms,
        sv.itl_p95_ms,
        weights_name(sv.weight_precision, sv.weight_format),
        sv.kv_cache_precision,
        *(None,) * 5,
    )


@router.get("/recommendations.csv")
def recommendations_csv(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    try:
        _, _, answer = _answer(request, session, settings)
    except _FormInvalid as exc:
        return _form_json_error(exc.form)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_COLUMNS)
    # samples_per_usd_* keep their names; this says what they count ("tokens per USD")
    unit = f"{_per_dollar_thing(answer)} per USD"
    for r in answer.recommendations:
        row = (
            r.rank,
            r.gpu.slug,
            r.gpu.name,
            r.num_gpus,
            r.fits,
            r.precision,
            r.memory.required_gb,
            r.memory.available_gb,
            r.throughput.value,
            r.throughput.unit,
            r.latency_ms,
            r.time_to_finish_h,
            r.bottleneck,
            r.cost.purchase_usd,
            r.cost.purchase_basis,
            r.cost.hourly_usd,
            # what the hourly price rents: the instance, as the page names it
            *(
                (o.provider, o.instance_type, o.gpus, o.instances, o.tier, o.as_of)
                if (o := r.offer) is not None
                else (None,) * 6
            ),
            r.cost.rent_to_finish_usd,
            r.cost.buy_to_finish_usd,
            r.cost.job_cost_usd,
            r.cost.samples_per_usd_rent,
            r.cost.samples_per_usd_buy,
            r.score,
            r.uncertainty.low,
            r.uncertainty.high,
            r.speedup_vs_baseline,
            *_csv_dates(r, settings),
            unit,
            *_csv_serving(r.serving),
            r.slow_end_hours,
            r.may_miss_deadline,
        )
        writer.writerow(
            [_csv_cell(v, name.endswith("_usd")) for name, v in zip(CSV_COLUMNS, row, strict=True)]
        )
    return Response(
        buf.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="gpu-recommendations.csv"'},
    )
