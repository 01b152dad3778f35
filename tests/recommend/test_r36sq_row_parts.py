"""A row's parts built with less per-row work (issue 21, thirty-sixth session "sq"): an
alternative reads its row's shown rate only where it runs the row's own job and unit, and the
throughput provenance names the measuring machines only where the figures were measured."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import rank
from app.recommend import rows, service
from app.recommend import schemas as s
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def captured() -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The open question's rows as service.recommend builds them (row_fields's arguments)."""
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    original = service.row_fields

    def keep(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4}}
    )
    mp = pytest.MonkeyPatch()
    mp.setattr(service, "row_fields", keep)
    # every alternative, dominated ones too (rank.undominated leaves an LLM's extra cards at
    # batch 4 out: no faster, dearer): these tests read how a row lists them, not which
    mp.setattr(rank, "undominated", lambda _chosen, others: list(others or []))
    try:
        service.recommend(request, read_gpu_specs(DATA), load_rules(DATA))
    finally:
        mp.undo()
    assert calls
    return calls


def test_alternatives_read_as_if_each_worked_out_its_own_rate(
    captured: list[tuple[tuple[Any, ...], dict[str, Any]]],
) -> None:
    seen = 0
    for args, kwargs in captured:
        alternatives = args[6] or []
        fields = rows.row_fields(*args, **kwargs)
        assert fields["alternatives"] == [rows._alternative_fields(a) for a in alternatives]
        seen += len(alternatives)
    assert seen, "the open question's rows list alternatives"


def test_an_alternative_of_another_job_keeps_its_own_unit(
    captured: list[tuple[tuple[Any, ...], dict[str, Any]]],
) -> None:
    args, kwargs = next((a, k) for a, k in captured if a[6])
    row: rank.Candidate = args[0]
    assert rows.row_rate(row.work, row.perf.unit)[1] == "tokens/s"
    # the same configuration priced as another job, an image model's samples: its unit is
    # its own ("images/s"), not the row's
    other = row.work.with_flags(model=dataclasses.replace(row.work.model, family="cnn"))
    perf = dataclasses.replace(args[6][0].perf, unit="samples/s")
    alt = dataclasses.replace(args[6][0], work=other, perf=perf)
    changed = (*args[:6], [alt], *args[7:])
    fields = rows.row_fields(*changed, **kwargs)
    listed = fields["alternatives"]
    assert isinstance(listed, list)
    (shown,) = listed
    assert shown["unit"] == "images/s"
    assert shown == rows._alternative_fields(alt)
    assert shown["num_gpus"] == alt.n


@pytest.mark.parametrize(
    ("source", "on", "said", "badge"),
    [
        (
            "measured",
            3,
            "modelled, with efficiencies measured on 3 machines of this GPU model",
            True,
        ),
        (
            "measured",
            1,
            "modelled, with efficiencies measured on 1 machine of this GPU model",
            True,
        ),
        (
            "measured",
            0,
            "modelled, with efficiencies measured on 0 machines of this GPU model",
            False,
        ),
        (
            "family",
            2,
            "modelled, with efficiencies measured on the same architecture family",
            False,
        ),
        ("prior", 0, "modelled from datasheet figures and published efficiency priors", False),
    ],
)
def test_throughput_provenance_words(
    captured: list[tuple[tuple[Any, ...], dict[str, Any]]],
    source: str,
    on: int,
    said: str,
    badge: bool,
) -> None:
    row: rank.Candidate = captured[0][0][0]
    perf = dataclasses.replace(
        row.perf, efficiency_source=source, measured_on=on, efficiency_basis=""
    )
    out = rows._provenance(dataclasses.replace(row, perf=perf))
    assert out["throughput"] == said
    assert ("measured_on" in out) is badge
    if badge:
        assert out["measured_on"] == f"{on} machine{'s' if on != 1 else ''}"


def _pair(c: rank.Candidate) -> tuple[Any, Any]:
    return rank.uncertainty(c), rank.first_token_uncertainty(c)


def test_a_rows_two_bands_at_once_are_each_bands_own(
    captured: list[tuple[tuple[Any, ...], dict[str, Any]]],
) -> None:
    cands = [a[0] for a, _ in captured] + [x for a, _ in captured for x in a[6] or []]
    assert any(rank.first_token_uncertainty(c) is not None for c in cands)
    for c in cands:
        assert rank.row_bands(c) == _pair(c)
    # no time to first token: no band on it
    row = cands[0]
    untimed = dataclasses.replace(row, perf=dataclasses.replace(row.perf, ttft_ms=None))
    assert rank.row_bands(untimed) == _pair(untimed)
    assert rank.row_bands(untimed)[1] is None


def test_the_prefill_band_reads_its_own_precision_class(
    captured: list[tuple[tuple[Any, ...], dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.domain import bands

    row: rank.Candidate = captured[0][0][0]
    split = bands.PRECISION_BANDS | {("prefill", row.work.runtime)}
    monkeypatch.setattr(bands, "PRECISION_BANDS", split)
    asked: list[Any] = []
    band_of = bands.band_of

    def keep(key: Any, table: Any) -> Any:
        asked.append(key)
        return band_of(key, table)

    monkeypatch.setattr(bands, "band_of", keep)
    both = rank.row_bands(row)
    assert both == _pair(row)
    # the keys each band is found by: the throughput band's regime (decode) is not split, the
    # prefill band's is, and each is the key its own function makes
    own = rank._row_band_key(row.gpu, row.work, row.perf, row.derived_peak)
    prefill = rank._row_band_key(row.gpu, row.work, row.perf, row.derived_peak, "prefill")
    assert asked[:2] == [own, prefill]
    at = [f.name for f in dataclasses.fields(bands.BandInputs)].index("precision")
    assert own[at] == "" and prefill[at] == row.work.precision
