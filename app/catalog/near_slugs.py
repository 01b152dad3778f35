"""'Did you mean' for a GPU slug that is not in the catalog: /gpus/rtx-3060 was a bare 404
while rtx-3060-12gb and rtx-3060-ti were one click away."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest_slugs(slug: str, slugs: Iterable[str], n: int = 5) -> list[str]:
    """The catalog slugs nearest ``slug``: those that extend it or contain it first (a model
    without its memory size or variant), then the spellings difflib finds close."""
    wanted = slug.strip().lower()
    pool = sorted(set(slugs))
    if not wanted:
        return []
    extending = [s for s in pool if s.startswith(wanted)]
    containing = [s for s in pool if wanted in s and s not in extending]
    close = difflib.get_close_matches(wanted, pool, n=n, cutoff=0.6)
    out: list[str] = []
    for s in (*extending, *containing, *close):
        if s not in out and s != wanted:
            out.append(s)
    return out[:n]
