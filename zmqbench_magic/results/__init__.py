"""Results and what is derived from them, in pure pandas: no plotting, no front end.

Bottom up, each part importing only the parts listed before it:

- :mod:`.resultlike`: what a result is to the functions that read one (a protocol);
- :mod:`.storage`: what is kept on this host between runs (the cache folder, the
  noise floor);
- :mod:`.statistics`: statistics over samples, a result's summary, comparisons and
  their verdicts, histories, derived figures such as the zero-copy crossover;
- :mod:`.words`: results, comparisons, histories and advice in words and Markdown;
- :mod:`.resultset`: the immutable :class:`ResultSet` (kept samples, settings, runs,
  the versioned JSON file), whose methods call statistics and words;
- :mod:`.host`: the versions, host and host conditions stored with each result;
- :mod:`.synthetic`: runs with a known answer, for measuring the verdicts themselves.

A new statistic goes in :mod:`.statistics`, its words in :mod:`.words`, its chart in
:mod:`zmqbench_magic.charts`.

It may import pandas, numpy, pyzmq (for versions) and :mod:`zmqbench_magic.params`;
never a measurement core, IPython, ipywidgets or altair.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host.environment import run_identity
    from .resultset import FORMAT, FORMAT_VERSION, ResultSet, load, load_runs
    from .statistics.spread import spread_warnings
    from .words.summary_lines import summary_line

# Loaded on first use (PEP 562): a driver process (``--driver process``) imports the
# latency histogram from here and needs only numpy and pyzmq, not pandas. (What a run's
# environment was is :func:`.host.environment.environment`: a name shared with its module
# cannot be loaded lazily.)
_LAZY = {
    "FORMAT": "resultset",
    "FORMAT_VERSION": "resultset",
    "ResultSet": "resultset",
    "load": "resultset",
    "load_runs": "resultset",
    "run_identity": "host.environment",
    "spread_warnings": "statistics.spread",
    "summary_line": "words.summary_lines",
}

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ResultSet",
    "load",
    "load_runs",
    "run_identity",
    "spread_warnings",
    "summary_line",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
