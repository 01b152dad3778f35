"""The package as a user gets it: a built wheel, installed in a fresh virtual environment,
serves from an empty directory; and the web side runs without torch."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.support import ROOT, live_server

SHIPPED = ("data", "templates", "static", "migrations", "docs")
# Never part of the wheel: build leftovers and local state.
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", "var",
    ".pytest_cache", ".mypy_cache", ".ruff_cache", "*.db", "node_modules",
)  # fmt: skip


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=240, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, (
        f"{argv} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build from a clean copy of the sources, so stale build/ output cannot leak in."""
    src = tmp_path_factory.mktemp("src") / "gpu-advisor"
    shutil.copytree(ROOT, src, ignore=_NOT_SOURCES)
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: use the setuptools already installed (offline, seconds).
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-w", str(out), str(src)])  # fmt: skip
    (built,) = out.glob("gpu_advisor-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding only the wheel; its dependencies come from the test
    interpreter's site-packages through a .pth file (offline). .pth files found there are
    not processed, so this checkout's editable install stays invisible."""
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", "--without-pip", str(env_dir)])
    python = env_dir / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib.stdout.strip()) / "_test_deps.pth").write_text("\n".join(deps) + "\n")
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)])
    return env_dir


def test_wheel_carries_the_shipped_folders_and_no_torch_requirement(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = [
            line.removeprefix("Requires-Dist: ")
            for line in zf.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist: ")
        ]
    for folder in SHIPPED:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                rel = path.relative_to(ROOT).as_posix()
                assert f"app/_shipped/{rel}" in names, f"{rel} is not in the wheel"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # torch and psutil are for the benchmarks only: the [bench] extra (numpy ranks answers in
    # the web service too, app/domain/ranking.py)
    for heavy in ("torch", "psutil"):
        (req,) = [r for r in requires if r.split(">")[0].split("<")[0].strip() == heavy]
        assert 'extra == "bench"' in req, req


def test_installed_wheel_serves_from_an_empty_directory(venv: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp_path / 'served.db'}",
    }
    where = _run([str(venv / "bin" / "python"), "-c",
                  "import app.shipped.paths as r; print(r.__file__); print(r.shipped_path('data'))"],
                 cwd=empty, env=env)  # fmt: skip
    module_file, data_dir = where.stdout.split()
    assert Path(module_file).is_relative_to(venv) and Path(data_dir).is_relative_to(venv)

    with live_server(env, tmp_path / "server.log", command=[str(venv / "bin" / "gpu-advisor")],
                     cwd=empty) as base:  # fmt: skip
        health = httpx.get(f"{base}/api/v1/health", timeout=10)
        assert health.status_code == 200 and health.json()["database"] == "ok"
        page = httpx.get(f"{base}/gpus", timeout=30)
        assert page.status_code == 200 and "H100" in page.text
        methodology = httpx.get(f"{base}/methodology", timeout=30)
        assert methodology.status_code == 200 and "roofline" in methodology.text.lower()
        css = httpx.get(f"{base}/static/favicon.svg", timeout=10)
        assert css.status_code == 200
        assert css.content == (ROOT / "static" / "favicon.svg").read_bytes()
    assert list(empty.iterdir()) == [], "serve wrote into the working directory"


BLOCK_HEAVY = textwrap.dedent(
    """
    import importlib.abc, sys

    class _Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"torch", "psutil"}:
                raise ImportError(f"{name} is blocked: the web service must not need it")
            return None

    sys.meta_path.insert(0, _Block())
    """
)


def test_web_service_runs_without_torch_or_psutil(tmp_path: Path) -> None:
    script = BLOCK_HEAVY + textwrap.dedent(
        f"""
        from fastapi.testclient import TestClient
        from app.config import Settings
        from app.main import create_app

        settings = Settings(database_url={f"sqlite:///{tmp_path / 'web.db'}"!r})
        with TestClient(create_app(settings)) as client:
            for path in ("/", "/gpus", "/gpus/h100-sxm", "/api/v1/gpus", "/methodology",
                         "/api/v1/health", "/device", "/api/v1/device-reports",
                         "/compare?slugs=h100-sxm,a100-sxm4-80gb"):
                r = client.get(path)
                assert r.status_code == 200, (path, r.status_code, r.text[:300])
            r = client.post("/api/v1/recommendations", json={{
                "workload": {{"preset": "llama-3-8b", "task": "inference"}}, "what_if": True}})
            assert r.status_code == 200, r.text[:300]
            r = client.get("/recommendations", params={{"preset": "llama-3-8b", "task": "inference"}})
            assert r.status_code == 200, r.text[:300]
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in {{"torch", "psutil"}})
        assert not heavy, heavy
        print("ok")
        """
    )
    result = _run([sys.executable, "-c", script], cwd=ROOT)
    assert result.stdout.strip().endswith("ok")


def _pins(lock: str) -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins: dict[str, str] = {}
    for line in (ROOT / lock).read_text().splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name.strip())] = version.split()[0]
    return pins


@pytest.mark.parametrize(
    ("lock", "extras"),
    [("requirements.lock", {"postgres"}), ("requirements-bench.lock", {"postgres", "bench"}),
     ("requirements-dev.lock", {"postgres", "bench", "dev"})],
)  # fmt: skip
def test_lock_files_satisfy_pyproject(lock: str, extras: set[str]) -> None:
    """A dependency changed in pyproject.toml without `make lock` fails here."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for extra in extras:
        wanted += [Requirement(r) for r in project["optional-dependencies"][extra]]
    pins = _pins(lock)
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in pins, f"{lock} lacks {req.name}: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{lock} pins {req.name}=={pins[name]}, outside {req.specifier}: run `make lock`"
        )
    if "bench" not in extras:
        assert not {"torch", "psutil"} & pins.keys(), f"{lock} is for the web image"
    else:  # the pin pip resolves to the CPU build on disk here, and PyPI's build in images
        assert pins["torch"] == "2.13.0"


def test_dockerfile_web_image_is_the_default_and_has_no_torch() -> None:
    text = (ROOT / "Dockerfile").read_text()
    stages = [line.split()[-1] for line in text.splitlines() if line.startswith("FROM ")]
    assert stages[-1] == "web" and "bench" in stages  # `docker build .` gives the web image
    web = text[text.index("AS web") :]
    assert "COPY requirements.lock" in web and "bench.lock" not in web
    assert "pip install -e" not in text and "--editable" not in text


def test_migrations_import_no_live_application_code() -> None:
    """A migration must keep working after the code it was written beside has changed:
    revision files import alembic, sqlalchemy and the standard library only."""
    import ast

    allowed = {"__future__", "alembic", "sqlalchemy", *sys.stdlib_module_names}
    for path in sorted((ROOT / "migrations" / "versions").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{path.name} imports {roots - allowed}"
