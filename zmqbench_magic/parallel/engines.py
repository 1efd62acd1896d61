"""Which futures backend runs a block, and a clear error when its package is missing."""

from __future__ import annotations

import importlib.util
from typing import Any

from ..params.flood import BACKEND

# The backend, the module that must import, and the extra that installs it.
_NEEDS = {"dask": ("distributed", "dask"), "ray": ("ray", "ray")}


def need(backend: str) -> None:
    """Raise ``ValueError`` naming the extra when ``backend``'s package is missing."""
    module, extra = _NEEDS[backend]
    if importlib.util.find_spec(module) is None:
        msg = (
            f"backend {backend} needs the {module} package, not installed in this Python: "
            f"pip install 'zmqbench_magic[{extra}]'"
        )
        raise ValueError(msg)


def session_for(backend: str, **settings: Any) -> Any:
    """A started session of ``backend`` (processpool, dask or ray)."""
    if backend == "processpool":
        from .pool import PoolSession

        return PoolSession(**settings)
    need(backend)
    if backend == "dask":
        from .dask_engine import DaskSession

        return DaskSession(**settings)
    from .ray_engine import RaySession

    return RaySession(**settings)


# Every backend the declaration of --backend allows but ipyparallel.
FUTURES_BACKENDS = tuple(b for b in BACKEND.choices if b != "ipyparallel")
