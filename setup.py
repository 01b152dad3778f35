"""Packaging beyond what pyproject.toml can say: the top-level data/, templates/, static/,
migrations/ and docs/ folders travel inside the wheel as ``app/_shipped/<name>``, where
app/shipped/paths.py finds them. Metadata and dependencies live in pyproject.toml."""

from setuptools import find_packages, setup

SHIPPED = ("data", "templates", "static", "migrations", "docs")

setup(
    packages=[
        *find_packages(include=["app", "app.*"]),
        *(f"app._shipped.{name}" for name in SHIPPED),
    ],
    package_dir={f"app._shipped.{name}": name for name in SHIPPED},
    package_data={f"app._shipped.{name}": ["**/*"] for name in SHIPPED},
    exclude_package_data={"": ["__pycache__/*", "**/__pycache__/*", "*.pyc", "**/*.pyc"]},
    include_package_data=False,
)
