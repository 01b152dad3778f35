"""Keeps the design's walls standing by walking the imports of every module.

- app/domain and app/bench import neither FastAPI nor SQLAlchemy;
- app/domain imports no torch, pydantic-settings, or other app package but itself, errors and
  the vocabulary;
- app/vocab.py imports nothing but the standard library (everyone imports it);
- routers and pages import no SQLAlchemy;
- nothing outside app/bench imports torch at module level;
- app/bench imports no other app package but the vocabulary (it is a leaf the CLI and job
  runner call);
- layers point one way: offers and recommend may know the catalog, the catalog knows neither;
  app/shipped (the shipped data's readers) knows no feature package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"


def modules() -> list[Path]:
    return sorted(p for p in APP.rglob("*.py"))


def imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _roots(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def rel(p: Path) -> str:
    return p.relative_to(APP.parent).as_posix()


@pytest.mark.parametrize("path", [p for p in modules() if "/domain/" in p.as_posix()], ids=rel)
def test_domain_is_pure(path: Path) -> None:
    names = imports(path)
    assert not _roots(names) & {"fastapi", "sqlalchemy", "torch", "pydantic_settings", "starlette"}
    app_deps = {n for n in names if n.startswith("app.")}
    assert all(n.startswith(("app.domain", "app.errors", "app.vocab")) for n in app_deps), app_deps


def test_vocabulary_imports_only_the_standard_library() -> None:
    assert _roots(imports(APP / "vocab.py")) <= {"__future__", "typing"}


@pytest.mark.parametrize("path", [p for p in modules() if "/bench/" in p.as_posix()], ids=rel)
def test_bench_is_a_leaf(path: Path) -> None:
    names = imports(path)
    assert not _roots(names) & {"fastapi", "sqlalchemy", "starlette", "jinja2"}
    app_deps = {n for n in names if n.startswith("app.")}
    # app.vocab and app.validation_words import the standard library alone (tests above/below)
    leaves = {"app.vocab", "app.validation_words"}
    assert all(n.startswith("app.bench") or n in leaves for n in app_deps), names


def test_validation_words_import_only_the_standard_library() -> None:
    assert _roots(imports(APP / "validation_words.py")) <= {
        "__future__",
        "re",
        "collections",
        "typing",
    }


EDGES = [p for p in modules() if p.name in {"router.py", "pages.py"} or "/web/" in p.as_posix()]


@pytest.mark.parametrize("path", EDGES, ids=rel)
def test_routers_and_pages_have_no_sql(path: Path) -> None:
    assert "sqlalchemy" not in _roots(imports(path))


@pytest.mark.parametrize("path", [p for p in modules() if "/bench/" not in p.as_posix()], ids=rel)
def test_no_torch_at_module_level_outside_bench(path: Path) -> None:
    assert "torch" not in _roots(imports(path, top_level_only=True))


def test_bench_report_module_does_not_need_torch() -> None:
    # The web process validates uploaded reports with this schema; it must not pull torch in.
    assert "torch" not in _roots(imports(APP / "bench" / "report.py"))
    assert "torch" not in _roots(imports(APP / "bench" / "__init__.py", top_level_only=True))


def test_only_config_reads_the_environment() -> None:
    offenders = [
        rel(p)
        for p in modules()
        if p.name != "config.py"
        and "/bench/" not in p.as_posix()  # records env vars that change measurements
        and ("os.environ" in p.read_text() or "getenv(" in p.read_text())
        and p.name != "executor.py"  # passes the environment on to its child process
    ]
    assert offenders == []


def _app_packages(path: Path) -> set[str]:
    return {n.split(".")[1] for n in imports(path) if n.startswith("app.") and n.count(".") >= 1}


@pytest.mark.parametrize("path", [p for p in modules() if "/catalog/" in p.as_posix()], ids=rel)
def test_catalog_knows_neither_offers_nor_recommend(path: Path) -> None:
    assert not _app_packages(path) & {"offers", "recommend", "reports", "web"}


@pytest.mark.parametrize("path", [p for p in modules() if "/shipped/" in p.as_posix()], ids=rel)
def test_shipped_data_readers_know_no_feature(path: Path) -> None:
    features = {"catalog", "offers", "recommend", "reports", "web", "cli", "bench"}
    assert not _app_packages(path) & features


def test_the_root_of_app_keeps_few_modules() -> None:
    # The app factory, settings, sessions, dependencies, errors and the vocabulary; features
    # and infrastructure live in packages named for what they do.
    loose = sorted(p.name for p in APP.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 8, loose
