"""Speed from the request's own terms, not from caches keyed on objects (issue 21): no cache
in app/ is keyed on an object's id() and start-up freezes nothing out of the collector; a
card's layer split is a term of the catalog snapshot, made once for every card; the prices of
the cards the catalog's columns found are read without making their configurations; an
answer's rows share the job terms their tips read, each row still getting its own job's."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.domain import evaluate as ev
from app.domain import fleet, perf, rank
from app.domain.workload import WorkloadSpec
from app.recommend import schemas as s
from app.recommend import service, workloads
from app.recommend.presets import load_presets

APP = Path(__file__).resolve().parents[2] / "app"


def _module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level."""
    out: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def _is_id_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"


def _id_keyed(tree: ast.Module) -> Iterator[int]:
    """Lines where a module-level container is read or written at an ``id(...)`` key."""
    names = _module_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_id_call(node.slice):
            owner = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "setdefault", "pop", "__contains__")
            and node.args
            and _is_id_call(node.args[0])
        ):
            owner = node.func.value
        else:
            continue
        if isinstance(owner, ast.Name) and owner.id in names:
            yield node.lineno


def _gc_freezes(tree: ast.Module) -> Iterator[int]:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "freeze"
            and isinstance(node.value, ast.Name)
            and node.value.id == "gc"
        ):
            yield node.lineno


def test_no_cache_in_app_is_keyed_on_an_objects_id_and_nothing_is_frozen() -> None:
    """An id() names an object only while it lives: a module-level dict keyed on it answers
    for whatever later takes the address (workloads._MODEL_OUTS held each object beside its id
    to guard against that), and gc.freeze hid the start-up's objects from the collector to make
    up for caches. Both are gone; what a request reuses is keyed on its values."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        text = path.read_text()
        if "id(" not in text and "freeze" not in text:
            continue  # neither shape can be there: parsing only the rest keeps the scan quick
        tree = ast.parse(text, str(path))
        found += [f"{path.relative_to(APP)}:{n} id()-keyed" for n in _id_keyed(tree)]
        found += [f"{path.relative_to(APP)}:{n} gc.freeze" for n in _gc_freezes(tree)]
    assert not found, found


def test_the_scan_finds_an_id_keyed_cache_and_a_freeze() -> None:
    """The scan above is not blind: the shapes the last session used are found."""
    code = (
        "import gc\n_OUTS = {}\n"
        "def out(m):\n    hit = _OUTS.get(id(m))\n    _OUTS[id(m)] = m\n    gc.freeze()\n"
    )
    tree = ast.parse(code)
    assert list(_id_keyed(tree)) == [4, 5]
    assert list(_gc_freezes(tree)) == [6]
    local = "def f(xs):\n    seen = {}\n    for x in xs:\n        seen[id(x)] = x\n"
    assert not list(_id_keyed(ast.parse(local)))  # a call's own map of objects it holds


@pytest.mark.parametrize("preset_id", ["llama-3-8b", "resnet-50", "whisper-large-v3"])
def test_a_models_output_is_worked_out_from_the_model_each_time(preset_id: str) -> None:
    """The answer's model block is made from the model spec it is asked of, each time: equal
    for equal models, a new object each time (a caller may change its copy), and another
    model's for another model."""
    presets = load_presets()
    if preset_id not in presets:
        pytest.skip(f"no {preset_id} preset")
    m = presets[preset_id].model
    first, again = workloads._model_out(m), workloads._model_out(m)
    assert first == again and first is not again
    assert first.params == m.params and first.family == m.family
    other = dataclasses.replace(m, params=m.params * 2)
    assert workloads._model_out(other).params == 2 * m.params


# ---------------------------------------------------------------- the layer-split column


def _ctx(body: dict[str, Any], rules: Any) -> tuple[WorkloadSpec, ev.Context]:
    req = s.RecommendationRequest.model_validate(body)
    work, _ = service.resolve_workload(req.workload)
    return work, service._context(work, req, req.objective, rules, None)


@pytest.mark.parametrize("runtime", [None, "llama.cpp", "vllm", "transformers"])
def test_the_snapshots_layer_split_is_each_cards_decode_span(
    shipped_catalog: Any, runtime: str | None
) -> None:
    """fleet.Snapshot.layer_split (made once per snapshot) is, card by card, whether the
    runtime's decode profile on that card and backend spans a replica by whole layers, as
    asked of the card alone; gated-out cards are False. It is the same column for another
    request on the same software (a batch size of its own)."""
    gpus, _, rules = shipped_catalog
    workload: dict[str, Any] = {"preset": "llama-3-8b", "task": "inference"}
    if runtime is not None:
        workload["runtime"] = runtime
    _, ctx = _ctx({"workload": workload}, rules)
    catalog = fleet.Catalog(tuple(gpus[::3]), rules, None)  # every third card: kept quick
    snap = fleet.snapshot(catalog, ctx)
    got = snap.layer_split(ctx)
    for i, gpu in enumerate(snap.gpus):
        if snap.variant[i] < 0:
            assert not got[i], gpu.slug
            continue
        v = snap.variants[snap.variant[i]]
        run = ev.job_variant(ctx, (ctx.work.precision, v[0], (), None, None))
        want = perf.profile_for(gpu, run, v[1], "decode").span != "tensor"
        assert bool(got[i]) == want, gpu.slug
    _, other = _ctx({"workload": {**workload, "batch_size": 16}}, rules)
    # (a runtime with a startup rule keeps a snapshot per batch since r31: its usable memory
    # follows the batch, tests/recommend/test_r31ld_snapshot_batch.py)
    again = fleet.snapshot(catalog, other)
    assert again is snap or runtime == "vllm"
    assert np.array_equal(again.layer_split(other), got)


def test_some_runtime_splits_by_layers_and_another_does_not(shipped_catalog: Any) -> None:
    """The column is not one answer for every runtime (the test above would hold for a column
    of constants only if the profiles were): llama.cpp's layer split and vLLM's tensor
    parallel both appear."""
    gpus, _, rules = shipped_catalog
    seen = set()
    for runtime in ("llama.cpp", "vllm"):
        _, ctx = _ctx({"workload": {"preset": "llama-3-8b", "runtime": runtime}}, rules)
        snap = fleet.snapshot(fleet.Catalog(tuple(gpus), rules, None), ctx)
        on = snap.variant >= 0
        seen |= set(snap.layer_split(ctx)[on].tolist())
    assert seen == {True, False}


# ---------------------------------------------------------------- shared job terms


def _ordered(body: dict[str, Any], catalog: Any) -> list[rank.Candidate]:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(body)
    work, _ = service.resolve_workload(req.workload)
    ctx = service._context(work, req, req.objective, rules, None, offers=offers)
    fleet_catalog = fleet.Catalog(tuple(sorted(gpus, key=lambda g: g.slug)), rules, None)
    ordered, *_ = service._ranked(req, ctx, fleet_catalog)
    return ordered


@pytest.mark.parametrize(
    "body",
    [
        {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4}},
        {
            "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 32},
            "constraints": {"max_gpus": 8},
            "objective": "fastest",
            "limit": 20,
        },
    ],
)
def test_rows_sharing_an_answers_job_terms_say_each_rows_own_4_bit_tip(
    shipped_catalog: Any, body: dict[str, Any]
) -> None:
    """One rank.JobTerms for all of an answer's rows gives every row the tips it gets alone
    (its own job, batch and copies: the 4-bit tip's size ratio and decode bytes)."""
    ordered = _ordered(body, shipped_catalog)
    assert len(ordered) > 3
    jobs = rank.JobTerms()
    work = ordered[0].work
    for c in ordered:
        assert rank.tips(c, work, None, jobs) == rank.tips(c, work, None)


def test_job_terms_are_each_jobs_and_copies_own() -> None:
    """Asked of two jobs (another batch, so other KV bytes a step) and of two copy counts,
    one JobTerms gives each its own terms, as four_bit_terms gives them afresh."""
    model = load_presets()["llama-3-8b"].model
    a = WorkloadSpec(task="inference", model=model, precision="bf16", batch_size=1)
    b = dataclasses.replace(a, batch_size=64)
    jobs = rank.JobTerms()
    got = {(w.batch_size, k): jobs.four_bit(w, k) for w in (a, b, a) for k in (1, 2, 1)}
    for (batch, k), terms in got.items():
        assert terms == rank.four_bit_terms(a if batch == 1 else b, k)
    assert len(set(got.values())) == 4
