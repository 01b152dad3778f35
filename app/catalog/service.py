"""Catalog use cases, shared by the JSON API, the pages and the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.catalog import repository
from app.catalog.mapping import create_from_row, out_from_row, spec_from_row, values_from_create
from app.catalog.models import GpuRow
from app.catalog.near_slugs import closest_slugs
from app.catalog.repository import SORTABLE, GpuFilter
from app.catalog.schemas import (
    CompareOut,
    CompareRow,
    GpuCreate,
    GpuOut,
    GpuPage,
    GpuPatch,
    GpuReplace,
)
from app.db import Snapshots
from app.domain.compat import Rules, has_feature
from app.domain.gpu import GpuSpec
from app.errors import Conflict, InvalidInput, NotFound, invalid_input_from

MAX_LIMIT = 500
MAX_COMPARE = 12
# The figures a side-by-side shows as ratios ("2.1× the bandwidth"): the sortable fields
# but those whose ratio says nothing (a year, a PCIe generation, a lane count, a slot width)
# or that the side-by-side never showed (SMs, driver-visible MiB).
_NO_RATIO = ("release_year", "pcie_gen", "pcie_lanes", "slot_width", "sm_count",
             "visible_memory_mib")  # fmt: skip
COMPARE_FIELDS = tuple(f for f in SORTABLE if f not in _NO_RATIO)


def _require(session: Session, slug: str, field: str = "slug") -> GpuRow:
    row = repository.get_by_slug(session, slug)
    if row is None:
        raise NotFound(f"no GPU with slug '{slug}'{near_hint(session, [slug])}", field=field)
    return row


def unknown_gpus(session: Session, slugs: Sequence[str]) -> str:
    """What a request naming GPUs the catalog lacks is told: the slugs, the nearest ones the
    catalog holds (as the GPU page's 404 lists them), and where the slugs are listed."""
    said = ", ".join(f"'{s}'" for s in slugs)
    near = near_hint(session, slugs)
    return (
        f"no GPU {said} in the catalog{near} (GET /api/v1/gpus or `gpu-advisor gpus` lists "
        "the slugs)"
    )


def near_hint(session: Session, slugs: Sequence[str]) -> str:
    """ "; did you mean 'h100-sxm', 'h100-pcie' or 'h100-nvl'?" for a slug the catalog lacks
    (a slug in upper case: its lower-case self), or "" where none is near: the API's misses had
    named no slug, where the page's 404 lists the near ones. Several slugs: each one's near
    slugs, named with it ("'h100-sxm' for 'H100-SXM'; 'a100-pcie' or … for 'a100'"); only the
    first had been hinted, in words that read as covering them all."""
    pool = [g.slug for g in all_specs(session)]
    hints = []
    for slug in slugs:
        wanted = slug.strip().lower()
        near = [wanted] if wanted in pool else closest_slugs(wanted, pool, 3)
        if near:
            hints.append(_either(near) + (f" for '{slug}'" if len(slugs) > 1 else ""))
    return f"; did you mean {'; '.join(hints)}?" if hints else ""


def _either(slugs: Sequence[str]) -> str:
    said = [f"'{s}'" for s in slugs]
    return (f"{', '.join(said[:-1])} or " if len(said) > 1 else "") + said[-1]


def sort_field(sort: str) -> tuple[str, bool]:
    """'-field' -> ('field', True); 'field' or '+field' -> ('field', False). One sign at most:
    '--field' and '+-field' had been read as a field (stripping every sign), '+-' ascending."""
    if sort[:1] in ("-", "+"):
        return sort[1:], sort[0] == "-"
    return sort, False


def list_gpus(
    session: Session,
    f: GpuFilter,
    *,
    sort: str | None = None,
    limit: int = 100,
    offset: int = 0,
    sort_values: Mapping[str, Mapping[str, float | None]] | None = None,
) -> GpuPage:
    """``sort_values``: more sortable fields the caller shows on each item but the catalog
    does not hold (name -> value per slug, e.g. the offers' "from" price), so that a listing
    sorts on the figure it shows and filters on."""
    extra = sort_values or {}
    descending = False
    if sort:
        sort, descending = sort_field(sort)
        if sort not in SORTABLE and sort not in extra:
            sortable = ", ".join((*SORTABLE, *extra))
            raise InvalidInput(
                f"cannot sort by '{sort}'; sortable fields: {sortable}", field="sort"
            )
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    if offset < 0:
        raise InvalidInput("offset must be 0 or more", field="offset")
    if sort is not None and sort in extra:
        total, rows = repository.list_gpus_by_value(
            session, f, extra[sort], descending=descending, limit=limit, offset=offset
        )
    else:
        total, rows = repository.list_gpus(
            session, f, sort=sort, descending=descending, limit=limit, offset=offset
        )
    return GpuPage(total=total, limit=limit, offset=offset, items=[out_from_row(r) for r in rows])


def require_architectures(session: Session, names: Sequence[str], field: str) -> None:
    """An architecture filter's value the catalog has no GPU of is a typo, said as one (it
    read as an empty list); the match is case-blind, as the filter's."""
    known = {a.lower(): a for a in repository.architectures(session)}
    unknown = [n for n in names if n.lower() not in known]
    if unknown:
        raise InvalidInput(
            f"no GPU of architecture {', '.join(repr(n) for n in unknown)} in the catalog; "
            f"known: {', '.join(sorted(known.values()))}",
            field=field,
        )


def slugs_with_feature(session: Session, feature: str, rules: Rules) -> list[str]:
    """GPUs whose hardware has a feature (bf16, fp8, flash_attention_2, ...) per the
    framework rules; a GPU no rule speaks for is not listed."""
    known = {r.feature for r in rules.features}
    if feature not in known:
        raise InvalidInput(
            f"unknown feature '{feature}'; known: {', '.join(sorted(known))}", field="feature"
        )
    return [
        g.slug
        for g in all_specs(session)
        if has_feature(g, feature, rules, g.backends[0] if g.backends else None)
    ]


def get_gpu(session: Session, slug: str) -> GpuOut:
    row = _require(session, slug)
    return out_from_row(row)


def compare(session: Session, slugs: Sequence[str]) -> CompareOut:
    wanted = [s for s in dict.fromkeys(s.strip() for s in slugs) if s]
    if len(wanted) < 2:
        raise InvalidInput("compare needs at least two distinct slugs", field="slugs")
    if len(wanted) > MAX_COMPARE:
        raise InvalidInput(f"compare takes at most {MAX_COMPARE} slugs", field="slugs")
    rows = repository.get_many(session, wanted)
    missing = [s for s in wanted if s not in rows]
    if missing:
        # a query parameter's value, not a resource at the path: 422, as every filter's typo
        raise InvalidInput(unknown_gpus(session, missing), field="slugs")
    fields = list(COMPARE_FIELDS)
    base = rows[wanted[0]]
    out = []
    for slug in wanted:
        row = rows[slug]
        ratios: dict[str, float | None] = {}
        for name in fields:
            mine, theirs = getattr(row, name), getattr(base, name)
            ratios[name] = round(mine / theirs, 4) if mine is not None and theirs else None
        out.append(CompareRow(gpu=out_from_row(row), ratios=ratios))
    return CompareOut(baseline=wanted[0], fields=fields, gpus=out)


def create_gpu(session: Session, gpu: GpuCreate) -> GpuOut:
    if repository.get_by_slug(session, gpu.slug) is not None:
        raise Conflict(f"a GPU with slug '{gpu.slug}' already exists", field="slug")
    row = repository.add(session, values_from_create(gpu, origin="user"))
    return out_from_row(row)


def replace_gpu(session: Session, slug: str, body: GpuReplace) -> GpuOut:
    row = _require(session, slug)
    gpu = _validated({**body.model_dump(), "slug": slug})
    repository.update(session, row, values_from_create(gpu, origin="user"))
    return out_from_row(row)


def patch_gpu(session: Session, slug: str, patch: GpuPatch) -> GpuOut:
    row = _require(session, slug)
    merged = create_from_row(row).model_dump()
    merged.update(patch.model_dump(exclude_unset=True))
    gpu = _validated(merged)
    repository.update(session, row, values_from_create(gpu, origin="user"))
    return out_from_row(row)


def delete_gpu(session: Session, slug: str) -> None:
    row = _require(session, slug)
    repository.delete(session, row)


def _validated(data: dict[str, object]) -> GpuCreate:
    # The merged entry is checked as a whole, so a PATCH cannot leave an invalid row.
    try:
        return GpuCreate.model_validate(data)
    except ValidationError as exc:
        raise invalid_input_from(exc) from exc


def get_spec(session: Session, slug: str, field: str) -> GpuSpec:
    """The GPU a request names in ``field`` (a body field or query parameter, never the
    path): a slug the catalog lacks is invalid input there, a 422 naming the field, as any
    other bad value of it; 404 is for a resource at a path that is not there."""
    row = repository.get_by_slug(session, slug)
    if row is None:
        raise InvalidInput(unknown_gpus(session, [slug]), field=field)
    return spec_from_row(row)


# The mapped catalog per database, reused while the database's catalog stamp is unchanged.
# GpuSpecs are frozen, so requests can share them; an edit anywhere (this worker, another
# worker, another host on the same database) changes the stamp and the next request reloads.
_specs: Snapshots[tuple[GpuSpec, ...]] = Snapshots()


def all_specs(session: Session, stamp: tuple[Any, ...] | None = None) -> list[GpuSpec]:
    """The whole catalog as GpuSpecs, from the cache when the catalog has not changed
    (``stamp``: the catalog's stamp when the caller read it with others in one query)."""
    return list(
        _specs.get(
            session,
            repository.catalog_stamp(session) if stamp is None else stamp,
            lambda: tuple(spec_from_row(r) for r in repository.rows_for_specs(session)),
        )
    )


def catalog_size(session: Session) -> int:
    return repository.count(session)


# The newest price date in the catalog per database, kept while the catalog is unchanged.
_as_of: Snapshots[str | None] = Snapshots()


def data_as_of(session: Session, stamp: tuple[Any, ...] | None = None) -> str | None:
    """The newest price date of the catalog (``stamp``: the catalog's stamp when the caller
    read it with others in one query)."""
    return _as_of.get(
        session,
        repository.catalog_stamp(session) if stamp is None else stamp,
        lambda: repository.latest_price_date(session),
    )
