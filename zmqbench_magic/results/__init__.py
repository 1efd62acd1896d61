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

from .environment import environment, run_identity
from .resultset import FORMAT, FORMAT_VERSION, ResultSet, load
from .spread import spread_warnings
from .text import summary_line

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ResultSet",
    "environment",
    "load",
    "run_identity",
    "spread_warnings",
    "summary_line",
]
