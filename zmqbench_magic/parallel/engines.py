"""Which futures session runs a block of a flood: the backend's record names it."""

from __future__ import annotations

from typing import Any

from ..params.backends import BACKENDS


def session_for(backend: str, **settings: Any) -> Any:
    """A started session of ``backend`` (one with a futures session: the process pool,
    Dask, Ray); ``ValueError`` naming the extra when its package is missing."""
    return BACKENDS[backend].load_session()(**settings)


# Every backend run through a futures session (all but ipyparallel's own cluster).
FUTURES_BACKENDS = tuple(b.name for b in BACKENDS.values() if b.session)
