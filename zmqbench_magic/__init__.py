"""zmqbench_magic: ZeroMQ benchmarks for Jupyter.

``%load_ext zmqbench_magic`` registers ``%zmqthr`` and ``%zmqlat``. The same
measurements are available from Python (:func:`run_throughput`, :func:`run_latency`)
and from the shell (``zmqbench thr|lat``). Importing the package does not import
IPython, ipywidgets or altair.
"""

from __future__ import annotations

from typing import Any

from .measure import run_latency, run_throughput
from .params import LatencyParams, ThroughputParams
from .results import ResultSet, load

__all__ = [
    "LatencyParams",
    "ResultSet",
    "ThroughputParams",
    "load",
    "load_ipython_extension",
    "run_latency",
    "run_throughput",
]


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (``%load_ext zmqbench_magic``)."""
    from .magics import ZmqBenchMagics

    ipython.register_magics(ZmqBenchMagics)
