"""Workload presets (data/workloads.yaml) and framework rules (data/frameworks.yaml).

Both files ship with the code and never change at run time, so they are parsed once per
directory and cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, get_type_hints

from app import yamlio
from app.domain.compat import FeatureRule, FrameworkRule, Rules
from app.domain.efficiency import EfficiencyTable, parse_table
from app.domain.workload import ModelSpec
from app.resources import shipped_path

DATA_DIR = shipped_path("data")

# The model fields a preset may set, and which of them are integers: read off ModelSpec so a
# field added there is a preset field too.
_MODEL_TYPES = get_type_hints(ModelSpec)
_MODEL_FIELDS = tuple(f.name for f in fields(ModelSpec))
_INT_FIELDS = tuple(k for k in _MODEL_FIELDS if _MODEL_TYPES[k] in (int, int | None))


@dataclass(frozen=True, slots=True)
class Preset:
    id: str
    name: str
    description: str
    model: ModelSpec
    defaults: dict[str, Any]
    sources: tuple[str, ...] = ()
    notes: str | None = None
    source_refs: dict[str, dict[str, Any]] = field(default_factory=dict)


def _num(value: Any) -> Any:
    # YAML reads 8.03e9 as a string (no dot before the exponent in YAML 1.1 rules)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def model_from_dict(raw: dict[str, Any]) -> ModelSpec:
    kw = {k: _num(raw.get(k)) for k in _MODEL_FIELDS}
    for k in _INT_FIELDS:
        if kw[k] is not None:
            kw[k] = int(kw[k])
    kw["params"] = float(kw["params"])
    return ModelSpec(**kw)


@lru_cache(maxsize=8)
def load_presets(data_dir: Path = DATA_DIR) -> dict[str, Preset]:
    path = data_dir / "workloads.yaml"
    if not path.exists():
        return {}
    doc = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    refs = doc.get("sources") or {}
    out: dict[str, Preset] = {}
    for raw in doc.get("workloads") or []:
        sources = tuple(raw.get("sources") or ())
        out[raw["id"]] = Preset(
            id=raw["id"],
            name=raw.get("name", raw["id"]),
            description=raw.get("description", ""),
            model=model_from_dict(raw["model"]),
            defaults={k: _num(v) for k, v in (raw.get("defaults") or {}).items()},
            sources=sources,
            notes=raw.get("notes"),
            source_refs={s: refs[s] for s in sources if s in refs},
        )
    return out


def _tuple(value: Any) -> tuple[str, ...] | None:
    return tuple(str(v) for v in value) if value is not None else None


@lru_cache(maxsize=8)
def load_rules(data_dir: Path = DATA_DIR) -> Rules:
    path = data_dir / "frameworks.yaml"
    if not path.exists():
        return Rules()
    doc = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    frameworks = tuple(
        FrameworkRule(
            framework=r["framework"],
            backend=r["backend"],
            vendor=r.get("vendor"),
            min_compute_capability=_str(r.get("min_compute_capability")),
            gfx_targets=_tuple(r.get("gfx_targets")),
            status=r.get("status", "supported"),
            versions=r.get("versions"),
            notes=r.get("notes"),
            caveat=r.get("caveat"),
        )
        for r in doc.get("frameworks") or []
    )
    features = tuple(
        FeatureRule(
            feature=r["feature"],
            vendor=r.get("vendor"),
            min_compute_capability=_str(r.get("min_compute_capability")),
            gfx_targets=_tuple(r.get("gfx_targets")),
            backends=_tuple(r.get("backends")),
            max_compute_capability=_str(r.get("max_compute_capability")),
            notes=r.get("notes"),
            status=r.get("status", "supported"),
            versions=_str(r.get("versions")),
        )
        for r in doc.get("features") or []
    )
    return Rules(frameworks=frameworks, features=features)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


@lru_cache(maxsize=8)
def load_efficiency(data_dir: Path = DATA_DIR) -> EfficiencyTable:
    """Runtime efficiencies and bits per weight (data/efficiency.yaml); empty when absent."""
    path = data_dir / "efficiency.yaml"
    if not path.exists():
        return EfficiencyTable()
    return parse_table(yamlio.safe_load(path.read_text(encoding="utf-8")) or {})
