"""zmqbench_magic: ZeroMQ benchmarks for Jupyter.

``%load_ext zmqbench_magic`` registers ``%zmqthr`` and ``%zmqlat``. The same
measurements are available from Python (:func:`run_throughput`, :func:`run_latency`)
and from the shell (``zmqbench thr|lat``). Importing the package does not import
IPython, ipywidgets or altair.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use (PEP 562): the far end runs as ``python -m
# zmqbench_magic.peer``, which imports this package first and needs only pyzmq, not
# the pandas and numpy that results and measurement bring (~0.3 s per peer start).
_LAZY = {
    "run_throughput": "measure",
    "run_latency": "measure",
    "ThroughputParams": "params",
    "LatencyParams": "params",
    "ResultSet": "results",
    "load": "results",
}

__all__ = [*sorted(_LAZY), "load_ipython_extension"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (``%load_ext zmqbench_magic``)."""
    from .magics import ZmqBenchMagics

    ipython.register_magics(ZmqBenchMagics)
