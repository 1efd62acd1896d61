"""The task engines that hand back futures (``%taskflood --backend``): the standard
library's process pool (:mod:`.pool`), Dask (:mod:`.dask_engine`) and Ray
(:mod:`.ray_engine`), each a session over the flood's common protocol (:mod:`.futures`),
their processes tagged for clean-up (:mod:`.tagged`) and an address checked before its
library is asked to connect (:mod:`.reach`). Which session runs a block: the backend's
record finds it in :data:`SESSIONS` (:func:`session_for`).

It may import :mod:`..clusters` (the reaper, the watch's pace), never :mod:`..flood`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...params.backends import DASK, PROCESS_POOL, RAY, Backend

if TYPE_CHECKING:
    from .futures import FuturesSession

# Each session's module is imported when its backend is first used: Dask's and Ray's
# import their libraries, which take seconds and may not be installed.


def pool_session() -> type[FuturesSession]:
    """The process pool's session class."""
    from .pool import PoolSession

    return PoolSession


def dask_session() -> type[FuturesSession]:
    """Dask's session class."""
    from .dask_engine import DaskSession

    return DaskSession


def ray_session() -> type[FuturesSession]:
    """Ray's session class."""
    from .ray_engine import RaySession

    return RaySession


# Every backend run through a futures session (all but ipyparallel's own cluster, whose
# sessions have views and schemes), and the function that gives its session class.
SESSIONS: dict[Backend, Callable[[], type[FuturesSession]]] = {
    PROCESS_POOL: pool_session,
    DASK: dask_session,
    RAY: ray_session,
}


def session_for(backend: Backend, **settings: Any) -> FuturesSession:
    """A started session of ``backend`` (one of :data:`SESSIONS`); ``ValueError``
    naming the extra when its package is missing.

    Example
    -------
    >>> pool = session_for(PROCESS_POOL, workers=2, timeout=30, test=FLOOD_TEST)  # doctest: +SKIP
    >>> pool.sample({"tasks": 16})["tasks_per_s"]  # doctest: +SKIP
    """
    backend.need()
    return SESSIONS[backend]()(**settings)


__all__ = ["SESSIONS", "dask_session", "pool_session", "ray_session", "session_for"]
