"""Results and what is derived from them, in pure pandas: no plotting, no front end.

What lives here: the immutable :class:`ResultSet` with its tidy DataFrame, summary and
versioned JSON (:mod:`.resultset`), the environment stored with it
(:mod:`.environment`), statistics over samples (:mod:`.stats`), derived figures such as
the zero-copy crossover (:mod:`.analysis`) and results in words (:mod:`.text`). A new
statistic or comparison goes here; its chart goes in :mod:`zmqbench_magic.charts`.

It may import pandas, numpy, pyzmq (for versions) and :mod:`zmqbench_magic.params`;
never a measurement core, IPython, ipywidgets or altair.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .environment import run_identity
    from .resultset import FORMAT, FORMAT_VERSION, ResultSet, load
    from .spread import spread_warnings
    from .text import summary_line

# Loaded on first use (PEP 562): a driver process (``--driver process``) imports the
# latency histogram from here and needs only numpy and pyzmq, not pandas. (What a run's
# environment was is :func:`.environment.environment`: a name shared with its module
# cannot be loaded lazily.)
_LAZY = {
    "FORMAT": "resultset",
    "FORMAT_VERSION": "resultset",
    "ResultSet": "resultset",
    "load": "resultset",
    "run_identity": "environment",
    "spread_warnings": "spread",
    "summary_line": "text",
}

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ResultSet",
    "load",
    "run_identity",
    "spread_warnings",
    "summary_line",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
