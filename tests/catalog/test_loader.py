"""The loader accepts the shipped data and rejects bad files with a message that names
the file, the GPU and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.catalog.loader import CatalogDataError, read_catalog, seed
from app.db import make_engine, make_session_factory, session_scope
from app.system.migrate import upgrade

GOOD = {
    "slug": "test-gpu",
    "name": "Test GPU 24GB",
    "vendor": "nvidia",
    "architecture": "Ada Lovelace",
    "segment": "consumer",
    "memory_gb": 24,
    "memory_bandwidth_gbs": 1008,
    "fp32_tflops": 82.6,
    "fp16_tflops": 165.2,
    "backends": ["cuda"],
    "sources": ["ds"],
}
SOURCES = {"ds": {"title": "A datasheet", "url": "https://example.org/ds.pdf"}}


def write(
    tmp_path: Path, gpus: list[dict], sources: dict | None = None, name: str = "x.yaml"
) -> Path:
    (tmp_path / "gpus").mkdir(exist_ok=True)
    doc = {"sources": SOURCES if sources is None else sources, "gpus": gpus}
    (tmp_path / "gpus" / name).write_text(yaml.safe_dump(doc))
    return tmp_path


def test_good_file_loads(tmp_path: Path) -> None:
    entries = read_catalog(write(tmp_path, [GOOD]))
    assert [e.slug for e in entries] == ["test-gpu"]
    assert entries[0].sources[0].url == "https://example.org/ds.pdf"


def test_cooling_is_read_through_to_the_row_and_the_spec(tmp_path: Path, database_url: str) -> None:
    """The catalog's cooling field (how the card is sold) reaches the row and the GpuSpec;
    absent, it stays None (unknown), never a default."""
    from app.catalog import repository
    from app.catalog.mapping import out_from_row, spec_from_row

    passive = {**GOOD, "cooling": "passive", "field_sources": {"cooling": "ds"}}
    entries = read_catalog(write(tmp_path, [passive, {**GOOD, "slug": "other", "name": "O"}]))
    assert [e.cooling for e in entries] == ["passive", None]
    factory, engine = _session(database_url)
    with session_scope(factory) as s:
        seed(s, tmp_path)
        row = repository.get_by_slug(s, "test-gpu")
        assert row is not None and row.cooling == "passive"
        assert spec_from_row(row).cooling == "passive"
        assert out_from_row(row).cooling == "passive"
        other = repository.get_by_slug(s, "other")
        assert other is not None and spec_from_row(other).cooling is None
    engine.dispose()


def test_visible_memory_is_read_through_to_the_row_and_the_spec(
    tmp_path: Path, database_url: str
) -> None:
    """The memory CUDA reports (visible_memory_mib, cited) reaches the row and the GpuSpec, and
    so efficiency.usable_gb; absent, it stays None and the engine keeps the vendor's GiB."""
    from app.catalog import repository
    from app.catalog.mapping import out_from_row, spec_from_row
    from app.domain import efficiency

    seen = {**GOOD, "visible_memory_mib": 15094, "field_sources": {"visible_memory_mib": "ds"}}
    entries = read_catalog(write(tmp_path, [seen, {**GOOD, "slug": "other", "name": "O"}]))
    assert [e.visible_memory_mib for e in entries] == [15094, None]
    factory, engine = _session(database_url)
    with session_scope(factory) as s:
        seed(s, tmp_path)
        row = repository.get_by_slug(s, "test-gpu")
        assert row is not None and row.visible_memory_mib == 15094
        spec = spec_from_row(row)
        assert spec.visible_memory_mib == 15094
        assert efficiency.usable_gb(spec) == pytest.approx(15094 * 2**20 / 1e9)
        assert out_from_row(row).visible_memory_mib == 15094
        other = repository.get_by_slug(s, "other")
        assert other is not None and spec_from_row(other).visible_memory_mib is None
    engine.dispose()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"memory_gb": "lots"}, "memory_gb"),
        ({"memory_gb": 24000}, "memory_gb"),  # MB typed as GB
        ({"memory_bandwidth_gbs": -5}, "memory_bandwidth_gbs"),
        ({"fp16_tflops": 165200}, "fp16_tflops"),  # GFLOPS typed as TFLOPS
        ({"vendor": "3dfx"}, "vendor"),
        ({"segment": "toy"}, "segment"),
        ({"slug": "Bad Slug"}, "slug"),
        ({"backends": []}, "backends"),
        ({"release_year": 1990}, "release_year"),
        ({"unknown_field": 1}, "unknown_field"),
        ({"cooling": "fanless"}, "cooling"),
        ({"visible_memory_mib": 22}, "visible_memory_mib"),  # GiB typed as MiB
        (
            {"street_price": {"usd": 1599, "as_of": "last week", "source": "ds"}},
            "street_price.as_of",
        ),
    ],
)
def test_bad_field_is_named(tmp_path: Path, change: dict, field: str) -> None:
    with pytest.raises(CatalogDataError) as err:
        read_catalog(write(tmp_path, [{**GOOD, **change}]))
    message = str(err.value)
    assert "x.yaml" in message
    assert f"'{change.get('slug', 'test-gpu')}'" in message
    assert f"field '{field}" in message


def test_visible_memory_above_the_cards_gib_is_rejected(tmp_path: Path) -> None:
    """CUDA reports what is left of the DRAM: more than the card's GiB is another card's figure
    or a unit slip (a 24 GB card has 24,576 MiB)."""
    with pytest.raises(CatalogDataError, match="visible_memory_mib"):
        read_catalog(write(tmp_path, [{**GOOD, "visible_memory_mib": 24_577}]))
    assert read_catalog(write(tmp_path, [{**GOOD, "visible_memory_mib": 24_576}]))


def test_missing_sources_rejected(tmp_path: Path) -> None:
    with pytest.raises(CatalogDataError, match="field 'sources'"):
        read_catalog(write(tmp_path, [{**GOOD, "sources": []}]))


def test_unknown_source_id_rejected(tmp_path: Path) -> None:
    with pytest.raises(CatalogDataError, match="unknown source id 'nope'"):
        read_catalog(write(tmp_path, [{**GOOD, "sources": ["nope"]}]))


def test_price_must_cite_a_listed_source(tmp_path: Path) -> None:
    bad = {**GOOD, "cloud_price": {"usd_per_hour": 0.5, "as_of": "2026-01-01", "source": "shop"}}
    with pytest.raises(CatalogDataError, match="unknown source id 'shop'"):
        read_catalog(write(tmp_path, [bad]))


def test_source_without_location_rejected(tmp_path: Path) -> None:
    with pytest.raises(CatalogDataError, match="url or a repo"):
        read_catalog(write(tmp_path, [GOOD], sources={"ds": {"title": "nowhere"}}))


def test_duplicate_slug_across_files(tmp_path: Path) -> None:
    write(tmp_path, [GOOD], name="a.yaml")
    write(tmp_path, [GOOD], name="b.yaml")
    with pytest.raises(CatalogDataError, match="duplicate, also in a.yaml"):
        read_catalog(tmp_path)


def test_invalid_yaml(tmp_path: Path) -> None:
    (tmp_path / "gpus").mkdir()
    (tmp_path / "gpus" / "broken.yaml").write_text("gpus: [ {slug: x\n")
    with pytest.raises(CatalogDataError, match="broken.yaml: not valid YAML"):
        read_catalog(tmp_path)


def test_fp16_below_fp32_is_implausible(tmp_path: Path) -> None:
    with pytest.raises(CatalogDataError, match="implausibly below fp32"):
        read_catalog(write(tmp_path, [{**GOOD, "fp16_tflops": 1.0}]))


def _session(url: str) -> tuple[sessionmaker[Session], Engine]:
    engine = make_engine(url)
    upgrade(engine)
    return make_session_factory(engine), engine


def test_seed_is_idempotent_and_keeps_user_rows(tmp_path: Path, database_url: str) -> None:
    from app.catalog import repository

    data = write(tmp_path, [GOOD, {**GOOD, "slug": "other", "name": "Other"}])
    factory, engine = _session(database_url)
    with session_scope(factory) as s:
        first = seed(s, data)
    assert (first.inserted, first.updated) == (2, 0)
    with session_scope(factory) as s:
        again = seed(s, data)
        assert (again.inserted, again.updated, again.unchanged) == (0, 0, 2)
        row = repository.get_by_slug(s, "other")
        assert row is not None
        row.origin, row.name = "user", "Edited by a user"
        repository.add(s, {**_user_row_values(), "slug": "user-added"})
    # A changed seed file updates seed rows but never a user's edit or addition.
    write(tmp_path, [{**GOOD, "memory_gb": 48}, {**GOOD, "slug": "other", "name": "Seed name"}])
    with session_scope(factory) as s:
        third = seed(s, data)
        assert (third.updated, third.kept_user) == (1, 1)
        assert repository.get_by_slug(s, "test-gpu").memory_gb == 48  # type: ignore[union-attr]
        assert repository.get_by_slug(s, "other").name == "Edited by a user"  # type: ignore[union-attr]
        assert repository.get_by_slug(s, "user-added") is not None
    engine.dispose()


def _user_row_values() -> dict:
    from app.catalog.mapping import values_from_create
    from app.catalog.schemas import GpuCreate

    gpu = GpuCreate.model_validate(
        {**GOOD, "sources": [{"id": "ds", "title": "t", "url": "https://example.org"}]}
    )
    return values_from_create(gpu, origin="user")
