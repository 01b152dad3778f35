"""The open question's per-request work kept where its inputs are (issue 21): words the same
card, count and offer always give are kept with the rules, a preset's model is its own when
the request gives none of it, and one answer reads the clock once. Each cache is keyed on
everything its words depend on: a different card, count, backend, offer or rules gives a
different answer, and the kept answer is the one working it out afresh gives."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import pytest

from app.domain import compat, cost, rank
from app.domain import evaluate as ev
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec, WorkloadSpec
from app.recommend import schemas as s
from app.recommend import service, workloads
from app.recommend.presets import load_presets
from tests.domain.fixtures import RESNET50

Catalog = tuple[list[GpuSpec], Mapping[str, cost.GpuOffers], compat.Rules]


def _fresh(rules: compat.Rules) -> compat.Rules:
    """The same rules with nothing remembered (dataclasses.replace would share the memo)."""
    return compat.Rules(rules.frameworks, rules.features)


# ---------------------------------------------------------------- purchase caveats


def _bought(
    gpu: GpuSpec, n: int, rules: compat.Rules, offers: object, basis: str
) -> ev.ConfigResult:
    """A small job on exactly ``n`` × ``gpu``, bought at purchase basis ``basis``."""
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16")
    ctx = ev.Context(
        work=work,
        rules=rules,
        limits=ev.Limits(objective="fastest", acquisition="buy", exact_gpus=n),
        offers=offers,  # type: ignore[arg-type]
        purchase_basis=basis,
    )
    planned = ev.plan(gpu, ctx)
    assert isinstance(planned, list), planned
    (config,) = [c for c in planned if c.num_gpus == n]
    res = ev.evaluate(config, ctx)
    assert res.ok, res.exclusion
    return res


def _caveats(res: ev.ConfigResult) -> tuple[str, ...]:
    """What compat says afresh of the row's purchase (the words the kept ones must be)."""
    assert res.cost is not None and res.acquisition is not None
    buys, rents = ev.acquisition_modes(res.cost, res.acquisition)
    buy = res.pricing.buy if res.pricing is not None else None
    return compat.purchase_caveats(res.config.gpu, res.config.num_gpus, buys, rents, buy)


@pytest.mark.parametrize("slug", ["rtx-4090", "h100-pcie"])
def test_kept_purchase_caveats_follow_the_count(shipped_catalog: Catalog, slug: str) -> None:
    """One card and eight have different words (a rig or a server past one card's worth):
    asked in turn of the same rules, each count gets its own, not the first one's."""
    gpus, offers, shipped = shipped_catalog
    gpu = next(g for g in gpus if g.slug == slug)
    rules = _fresh(shipped)
    said = {}
    for n in (1, 8, 1):
        res = _bought(gpu, n, rules, offers, "auto")
        expected = _caveats(res)
        assert expected, "a bought row says what its price leaves out"
        assert all(w in res.warnings for w in expected), (n, res.warnings)
        said[n] = expected
    assert said[1] != said[8]


def test_kept_purchase_caveats_follow_the_card_and_the_offer_paid(
    shipped_catalog: Catalog,
) -> None:
    """The same count on another card, or the same card bought new rather than used (a
    second-hand price says so), gets its own words from the same rules."""
    gpus, offers, shipped = shipped_catalog
    rules = _fresh(shipped)
    by_slug = {g.slug: g for g in gpus}
    both = next(
        slug
        for slug, o in sorted(offers.items())
        if slug in by_slug
        and {"new", "used"} <= {p.condition for p in o.purchase}
        and by_slug[slug].segment in ("consumer", "workstation")
    )
    gpu = by_slug[both]
    new = _bought(gpu, 1, rules, offers, "new")
    used = _bought(gpu, 1, rules, offers, "used")
    assert new.pricing is not None and used.pricing is not None
    assert new.pricing.buy != used.pricing.buy
    for res in (new, used):
        assert all(w in res.warnings for w in _caveats(res))
    assert any("second-hand" in w for w in used.warnings)
    assert not any("second-hand" in w for w in new.warnings)
    other = _bought(by_slug["h100-pcie"], 1, rules, offers, "auto")
    assert all(w in other.warnings for w in _caveats(other))
    assert _caveats(other) != _caveats(new)


# ---------------------------------------------------------------- graph runtimes


def test_graph_runtimes_kept_with_the_rules_are_each_cards_and_backends(
    shipped_catalog: Catalog,
) -> None:
    """Every card and backend gets the runtimes the rules let run there, as working them out
    afresh gives, asked twice (the second from the memo); they differ between cards (a
    Pascal card runs none of them) and between backends."""
    gpus, _, shipped = shipped_catalog
    rules = _fresh(shipped)
    seen = set()
    for _ in range(2):
        for gpu in gpus:
            for backend in (*gpu.backends, None):
                kept = rank.graph_runtimes_on(gpu, backend, rules)
                afresh = rank.graph_runtimes_on(gpu, backend, _fresh(shipped))
                assert kept == afresh, (gpu.slug, backend)
                seen.add(kept)
    assert len(seen) >= 2


# ---------------------------------------------------------------- the preset's own model


@pytest.mark.parametrize("preset_id", sorted(load_presets()))
def test_a_preset_asked_without_a_model_is_its_own_model(preset_id: str) -> None:
    """No model field given: the preset's model object itself, equal to what rebuilding it from
    its fields gives (the path a request that names model fields takes)."""
    preset = load_presets()[preset_id]
    plain = workloads._merge_model(s.WorkloadIn(preset=preset_id), preset)
    assert plain is preset.model
    rebuilt = workloads._merge_model(s.WorkloadIn(preset=preset_id, model={}), preset)
    assert rebuilt is not preset.model
    assert rebuilt == preset.model
    assert rebuilt == ModelSpec(
        **{f.name: getattr(preset.model, f.name) for f in fields(ModelSpec)}
    )


def test_a_model_field_given_is_not_the_presets_model() -> None:
    preset = load_presets()["llama-3-8b"]
    given = workloads._merge_model(s.WorkloadIn(preset="llama-3-8b", model={"layers": 40}), preset)
    assert given is not preset.model and given.layers == 40 != preset.model.layers


# ---------------------------------------------------------------- one cutoff an answer


@pytest.mark.parametrize(("cutoff", "stale"), [("9999-12-31", True), ("0001-01-01", False)])
def test_every_row_reads_the_answers_one_stale_cutoff(
    shipped_catalog: Catalog, monkeypatch: pytest.MonkeyPatch, cutoff: str, stale: bool
) -> None:
    """The rows' prices are judged stale against the one cutoff the answer reads (each row had
    read the clock itself)."""
    gpus, offers, rules = shipped_catalog
    calls: list[Any] = []

    def fixed() -> str:
        calls.append(None)
        return cutoff

    monkeypatch.setattr(service, "stale_cutoff", fixed)
    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4}}
    )
    answer = service.recommend(request, gpus, rules, offers=offers, explain_empty=False)
    assert len(calls) == 1
    prices = [
        p for row in answer.recommendations for p in (row.cost.rent, row.cost.buy) if p is not None
    ]
    assert len(prices) >= len(answer.recommendations) > 1
    assert all(p.stale is stale for p in prices)
