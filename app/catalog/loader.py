"""data/gpus/*.yaml -> validated entries -> database (idempotent, keeps user rows)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.catalog import repository
from app.catalog.mapping import spec_from_create, values_from_create
from app.catalog.schemas import GpuCreate
from app.domain.gpu import GpuSpec
from app.errors import field_path
from app.shipped import yamlio
from app.system import state as system_state


class CatalogDataError(ValueError):
    """A seed file is wrong; the message names the file, the GPU and the field."""


@dataclass
class SeedResult:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_user: int = 0

    @property
    def total(self) -> int:
        return self.inserted + self.updated + self.unchanged + self.kept_user


def parse_gpu_file(path: Path) -> list[GpuCreate]:
    try:
        doc = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CatalogDataError(f"{path.name}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("gpus"), list):
        raise CatalogDataError(f"{path.name}: expected a mapping with a 'gpus' list")
    sources = doc.get("sources") or {}
    if not isinstance(sources, dict):
        raise CatalogDataError(f"{path.name}: 'sources' must be a mapping of id -> source")
    entries: list[GpuCreate] = []
    for index, raw in enumerate(doc["gpus"]):
        label = raw.get("slug", f"#{index}") if isinstance(raw, dict) else f"#{index}"
        if not isinstance(raw, dict):
            raise CatalogDataError(f"{path.name}: gpu {label}: expected a mapping")
        entries.append(_parse_entry(path, label, raw, sources))
    return entries


def _parse_entry(path: Path, label: str, raw: dict[str, Any], sources: dict[str, Any]) -> GpuCreate:
    data = dict(raw)
    cited = data.get("sources") or []
    if not isinstance(cited, list) or not cited:
        raise CatalogDataError(
            f"{path.name}: gpu '{label}': field 'sources': at least one source id is required"
        )
    ids = list(dict.fromkeys([*cited, *(data.get("field_sources") or {}).values()]))
    for price_key in ("street_price", "cloud_price"):
        price = data.get(price_key)
        if isinstance(price, dict) and price.get("source"):
            ids.append(price["source"])
    resolved = []
    for sid in dict.fromkeys(ids):
        if sid not in sources:
            raise CatalogDataError(
                f"{path.name}: gpu '{label}': field 'sources': unknown source id '{sid}'"
            )
        ref = sources[sid]
        if not isinstance(ref, dict):
            raise CatalogDataError(f"{path.name}: source '{sid}': expected a mapping")
        resolved.append({"id": sid, **{k: _as_str(v) for k, v in ref.items()}})
    data["sources"] = resolved
    for price_key in ("street_price", "cloud_price"):
        if isinstance(data.get(price_key), dict):
            data[price_key] = {
                k: _as_str(v) if k == "as_of" else v for k, v in data[price_key].items()
            }
    if data.get("compute_capability") is not None:
        data["compute_capability"] = str(data["compute_capability"])
    try:
        return GpuCreate.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CatalogDataError(
            f"{path.name}: gpu '{label}': "
            f"field '{field_path(first['loc'], '(entry)')}': {first['msg']}"
        ) from exc


def _as_str(value: Any) -> Any:
    # YAML turns 2024-05-01 into a date; the schema stores ISO strings.
    return value.isoformat() if hasattr(value, "isoformat") else value


def read_catalog(data_dir: Path) -> list[GpuCreate]:
    files = sorted((data_dir / "gpus").glob("*.yaml"))
    if not files:
        raise CatalogDataError(f"{data_dir / 'gpus'}: no *.yaml catalog files")
    seen: dict[str, str] = {}
    entries: list[GpuCreate] = []
    for path in files:
        for entry in parse_gpu_file(path):
            if entry.slug in seen:
                raise CatalogDataError(
                    f"{path.name}: gpu '{entry.slug}': field 'slug': "
                    f"duplicate, also in {seen[entry.slug]}"
                )
            seen[entry.slug] = path.name
            entries.append(entry)
    return entries


def read_gpu_specs(data_dir: Path) -> list[GpuSpec]:
    """The shipped catalog as domain objects, without a database (tests, benchmarks)."""
    return [spec_from_create(e) for e in read_catalog(data_dir)]


def seed(session: Session, data_dir: Path) -> SeedResult:
    """Upsert the shipped entries. Rows a user added or edited (origin 'user') are kept, and
    entries someone deleted stay deleted (tombstones)."""
    result = SeedResult()
    entries = read_catalog(data_dir)
    existing = repository.get_many(session, [e.slug for e in entries])
    deleted = repository.tombstoned(session)
    for entry in entries:
        if entry.slug in deleted:
            result.kept_user += 1
            continue
        values = values_from_create(entry, origin="seed")
        row = existing.get(entry.slug)
        if row is None:
            repository.add(session, values)
            result.inserted += 1
        elif row.origin == "user":
            result.kept_user += 1
        elif any(getattr(row, k) != v for k, v in values.items()):
            repository.update(session, row, values)
            result.updated += 1
        else:
            result.unchanged += 1
    return result


SEEDED_KEY = "seed.fingerprint"


def data_fingerprint(data_dir: Path, schema_revision: str | None) -> str:
    """sha256 over every file under ``data_dir`` (path and bytes) and the schema revision:
    equal fingerprints mean seeding again would change nothing."""
    digest = hashlib.sha256(f"schema:{schema_revision}\0".encode())
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(data_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def seed_if_changed(
    session: Session, data_dir: Path, schema_revision: str | None
) -> SeedResult | None:
    """Seed only when the shipped data (or the schema) changed since the last seed that
    recorded its fingerprint; None when nothing needed doing. `gpu-advisor db seed`
    seeds unconditionally."""
    fingerprint = data_fingerprint(data_dir, schema_revision)
    if system_state.get(session, SEEDED_KEY) == fingerprint:
        return None
    result = seed(session, data_dir)
    system_state.put(session, SEEDED_KEY, fingerprint)
    return result
