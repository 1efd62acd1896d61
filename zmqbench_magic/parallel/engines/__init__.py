"""The task engines that hand back futures (``%taskflood --backend``): the standard
library's process pool (:mod:`.pool`), Dask (:mod:`.dask_engine`) and Ray
(:mod:`.ray_engine`), each a session over the flood's common protocol (:mod:`.futures`),
their processes tagged for clean-up (:mod:`.tagged`) and an address checked before its
library is asked to connect (:mod:`.reach`). Which session runs a block: the backend's
record names it (:func:`session_for`).

It may import :mod:`..clusters` (the reaper, the watch's pace), never :mod:`..flood`.
"""

from __future__ import annotations

from typing import Any

from ...params.backends import BACKENDS


def session_for(backend: str, **settings: Any) -> Any:
    """A started session of ``backend`` (one with a futures session: the process pool,
    Dask, Ray); ``ValueError`` naming the extra when its package is missing."""
    return BACKENDS[backend].load_session()(**settings)


# Every backend run through a futures session (all but ipyparallel's own cluster).
FUTURES_BACKENDS = tuple(b.name for b in BACKENDS.values() if b.session)
