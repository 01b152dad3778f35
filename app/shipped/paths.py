"""Where the shipped folders are: data/, templates/, static/, migrations/ and docs/.

They live at the top of the repository. A built wheel carries them inside the package as
``app/_shipped/<name>`` (setup.py maps them there), so an installed ``gpu-advisor`` finds
them through ``importlib.resources`` from any working directory; a checkout or an
editable install finds them next to the ``app`` package. Every reader asks here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

Shipped = Literal["data", "templates", "static", "migrations", "docs"]
SHIPPED: tuple[Shipped, ...] = ("data", "templates", "static", "migrations", "docs")
# The name of the folder inside the installed package; setup.py writes the same name.
PACKAGED_DIR = "_shipped"


@cache
def shipped_path(name: Shipped) -> Path:
    """The folder ``name`` as a real directory (wheels install unzipped; Jinja2,
    StaticFiles and Alembic want paths, not Traversables)."""
    if name not in SHIPPED:
        raise ValueError(f"not a shipped folder: {name!r}")
    package = resources.files("app")
    packaged = package.joinpath(PACKAGED_DIR, name)
    if packaged.is_dir():  # an installed wheel
        return Path(str(packaged))
    checkout = Path(str(package)).parent / name  # a checkout or an editable install
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"shipped folder {name!r} is missing: looked in {packaged} and {checkout}; "
        "reinstall the gpu-advisor wheel"
    )
