"""The engine's rule tables, read from the shipped data/ folder: framework and feature support
(data/frameworks.yaml) and runtime efficiencies with bits per weight (data/efficiency.yaml).

The catalog (feature filters), the recommender and the benchmarks all read them, so they live
below every feature package. Both files ship with the code and never change at run time, so
each is parsed once per directory and cached.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from app.domain.burst import LengthModel
from app.domain.compat import FeatureRule, FrameworkRule, Rules
from app.domain.efficiency import EfficiencyTable, parse_table
from app.shipped import yamlio
from app.shipped.paths import shipped_path

DATA_DIR = shipped_path("data")


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
            runs_as=_str(r.get("runs_as")),
            segments=_tuple(r.get("segments")),
            caveat=r.get("caveat"),
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


def load_length_models(data_dir: Path = DATA_DIR) -> dict[str, LengthModel]:
    """How benchmark samplers draw request lengths (data/request_lengths.yaml), by dataset."""
    path = data_dir / "request_lengths.yaml"
    if not path.exists():
        return {}
    doc = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    out: dict[str, LengthModel] = {}
    for name, raw in doc.items():
        if raw.get("law") != "exponential":
            raise ValueError(f"request_lengths.yaml {name}: unknown law {raw.get('law')!r}")
        out[name] = LengthModel(
            name=name,
            min_tokens=int(raw["min_tokens"]),
            max_prompt=int(raw["max_prompt_tokens"]),
            max_total=int(raw["max_total_tokens"]),
            mean_prompt=float(raw["mean_prompt_tokens"]),
            mean_output=float(raw["mean_output_tokens"]),
            source=str(raw.get("source") or ""),
        )
    return out
