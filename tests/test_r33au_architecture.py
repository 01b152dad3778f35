"""r33au: walls tests/test_architecture.py does not check.

- SQL lives in repositories: outside them no module builds a statement (select, insert,
  update, delete, text, func, ...) or runs one on a session; app/system/meta.py's own
  ``select(func.max(...))`` and the offer loader's ``session.delete`` had (both moved into
  app/offers/repository.py). The exceptions are named with why.
- The domain does no I/O: besides itself, the errors and the vocabulary it imports only the
  standard library's pure modules and numpy, and never calls open().
- API routers compute no numbers: no arithmetic in a router's functions (the readiness
  cache's age is the one exception).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"

# sqlalchemy names that build or run a statement (an import of one is a statement built here)
STATEMENT_NAMES = {
    "select", "insert", "update", "delete", "text", "func", "exists", "union", "union_all",
    "and_", "or_", "not_", "case", "literal", "bindparam", "values", "cast",
}  # fmt: skip
# what a session or connection runs a statement with
RUNS = {"execute", "scalar", "scalars", "add", "add_all", "delete", "get", "merge", "query"}
RUNNERS = {"session", "conn", "connection", "db"}

# module -> why it may hold SQL though it is not a repository
SQL_ALLOWED = {
    "app/db.py": "the engine and the session scope: commit and rollback at the edge",
    "app/system/health.py": "the readiness probe's SELECT 1 and read-only checks",
    "app/system/migrate.py": "the migration lock (PostgreSQL's advisory lock)",
    "app/system/state.py": "the app_state table's own two-key store, its model beside it",
}


def _rel(p: Path) -> str:
    return p.relative_to(APP.parent).as_posix()


def _sql_in(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlalchemy":
            built = sorted({a.name for a in node.names} & STATEMENT_NAMES)
            if built and path.name != "models.py":  # models: server defaults (text("0"))
                found.append(f"imports {built} from {node.module}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RUNS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in RUNNERS
        ):
            found.append(f"{node.func.value.id}.{node.func.attr}() at line {node.lineno}")
    return found


OUTSIDE_REPOSITORIES = sorted(
    p
    for p in APP.rglob("*.py")
    if p.name != "repository.py" and _rel(p) not in SQL_ALLOWED and "/bench/" not in _rel(p)
)


@pytest.mark.parametrize("path", OUTSIDE_REPOSITORIES, ids=_rel)
def test_sql_lives_in_repositories(path: Path) -> None:
    assert _sql_in(path) == []


def test_the_sql_check_sees_a_statement() -> None:
    # the walk above finds what it looks for: a repository is full of it
    assert _sql_in(APP / "offers" / "repository.py")


def test_the_exceptions_still_exist() -> None:
    # an exception left behind by a move would let SQL back in under its name
    assert all((APP.parent / p).is_file() for p in SQL_ALLOWED)


PURE_STDLIB = {
    "__future__", "bisect", "collections", "dataclasses", "datetime", "enum", "fractions",
    "functools", "heapq", "itertools", "math", "numbers", "operator", "re", "statistics",
    "typing", "types", "abc", "copy", "decimal", "string",
}  # fmt: skip


@pytest.mark.parametrize("path", sorted((APP / "domain").rglob("*.py")), ids=_rel)
def test_the_domain_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "exec", "eval", "__import__"}, node.lineno
    stdlib = roots & set(sys.stdlib_module_names)
    assert stdlib <= PURE_STDLIB, stdlib - PURE_STDLIB
    assert roots - stdlib <= {"app", "numpy"}


ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
# router function -> why it may do arithmetic
ARITHMETIC_ALLOWED = {("app/system/router.py", "health"): "the readiness cache's age"}


@pytest.mark.parametrize("path", sorted(APP.rglob("router.py")), ids=_rel)
def test_routers_compute_no_numbers(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    computing = [
        f"{fn.name} (line {op.lineno})"
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        and (_rel(path), fn.name) not in ARITHMETIC_ALLOWED
        for op in ast.walk(fn)
        if isinstance(op, ast.BinOp)
        and isinstance(op.op, ARITHMETIC)
        # a string joined or formatted is words, not a number
        and not (isinstance(op.left, ast.Constant) and isinstance(op.left.value, str))
        and not isinstance(op.left, ast.JoinedStr)
    ]
    assert computing == []
