"""The fast YAML loader reads the shipped data and the test data exactly as PyYAML's safe
loader does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.shipped import yamlio
from app.shipped.paths import shipped_path


def test_uses_libyaml_when_present() -> None:
    assert yamlio.SafeLoader is getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# tests/data: the tuning and held-out sets the benchmarks read through the same loader
TESTS_DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize(
    "path",
    sorted([*shipped_path("data").rglob("*.yaml"), *TESTS_DATA.rglob("*.yaml")]),
    ids=lambda p: p.name,
)
def test_same_documents_as_the_pure_python_loader(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yamlio.safe_load(text) == yaml.safe_load(text)


def test_refuses_python_tags_like_safe_load() -> None:
    with pytest.raises(yaml.YAMLError):
        yamlio.safe_load("!!python/object/apply:os.system ['true']")
