"""A frozen spec's own store of terms derived from it (a card's per-runtime step inputs, a
job's GPU-independent terms): created on first use and living as long as the spec, so a
term is worked out once per catalog snapshot or per request instead of in a global memo."""

from __future__ import annotations

from typing import Any

Store = dict[tuple[object, ...], object]


def store_of(spec: Any) -> Store:
    """``spec._derived``, created empty on first use (the spec is frozen: set through
    ``object.__setattr__``)."""
    store: Store | None = spec._derived
    if store is None:
        store = {}
        object.__setattr__(spec, "_derived", store)
    return store
