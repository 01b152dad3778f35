"""data/offers/mapping.yaml: which catalog GPU a cloud's accelerator name means, and the
tier of each provider's rows. Rules are reviewed by hand; what no rule matches is unmapped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.vocab import TIERS


class MappingDataError(ValueError):
    """The mapping file is wrong; the message names the rule and the field."""


@dataclass(frozen=True)
class Rule:
    accelerator: str
    slug: str
    cloud: str | None = None
    instance: re.Pattern[str] | None = None
    note: str | None = None

    def matches(self, cloud: str, accelerator: str, instance_type: str) -> bool:
        if accelerator != self.accelerator:
            return False
        if self.cloud is not None and cloud != self.cloud:
            return False
        return self.instance is None or self.instance.search(instance_type) is not None


@dataclass(frozen=True)
class Provider:
    key: str
    name: str
    tier: str


@dataclass
class Mapping:
    rules: list[Rule] = field(default_factory=list)
    providers: dict[str, Provider] = field(default_factory=dict)
    not_in_catalog: dict[str, str] = field(default_factory=dict)

    def slug_for(self, cloud: str, accelerator: str, instance_type: str) -> str | None:
        for rule in self.rules:
            if rule.matches(cloud, accelerator, instance_type):
                return rule.slug
        return None

    def why_unmapped(self, accelerator: str) -> str:
        if accelerator in self.not_in_catalog:
            return self.not_in_catalog[accelerator]
        if any(r.accelerator == accelerator for r in self.rules):
            return (
                f"'{accelerator}' names several catalog GPUs (memory or form factor) and "
                "this instance type does not say which"
            )
        return f"no reviewed mapping for accelerator '{accelerator}'"

    def tier_for(self, cloud: str) -> str:
        provider = self.providers.get(cloud)
        return provider.tier if provider is not None else "on-demand"


def _str(raw: dict[str, Any], key: str, where: str, required: bool = True) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise MappingDataError(f"mapping.yaml: {where}: field '{key}' is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise MappingDataError(f"mapping.yaml: {where}: field '{key}' must be text")
    return value.strip()


def load_mapping(data_dir: Path) -> Mapping:
    path = data_dir / "offers" / "mapping.yaml"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise MappingDataError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(doc, dict):
        raise MappingDataError(f"{path}: expected a mapping")
    out = Mapping()
    for key, raw in (doc.get("providers") or {}).items():
        where = f"provider '{key}'"
        if not isinstance(raw, dict):
            raise MappingDataError(f"mapping.yaml: {where}: expected a mapping")
        tier = _str(raw, "tier", where)
        if tier not in TIERS:
            raise MappingDataError(f"mapping.yaml: {where}: field 'tier': one of {TIERS}")
        out.providers[str(key)] = Provider(str(key), _str(raw, "name", where) or str(key), tier)
    for index, raw in enumerate(doc.get("rules") or []):
        where = f"rule #{index + 1}"
        if not isinstance(raw, dict):
            raise MappingDataError(f"mapping.yaml: {where}: expected a mapping")
        pattern = _str(raw, "instance", where, required=False)
        try:
            compiled = re.compile(pattern, re.IGNORECASE) if pattern else None
        except re.error as exc:
            raise MappingDataError(f"mapping.yaml: {where}: field 'instance': {exc}") from exc
        out.rules.append(
            Rule(
                accelerator=_str(raw, "accelerator", where) or "",
                slug=_str(raw, "slug", where) or "",
                cloud=_str(raw, "cloud", where, required=False),
                instance=compiled,
                note=_str(raw, "note", where, required=False),
            )
        )
    out.not_in_catalog = {str(k): str(v) for k, v in (doc.get("not_in_catalog") or {}).items()}
    return out
