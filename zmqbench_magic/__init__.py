"""zmqbench_magic: ZeroMQ and ipyparallel benchmarks for Jupyter.

``%load_ext zmqbench_magic`` registers four magics, each a line and a cell magic:
``%zmqthr`` (PUSH/PULL throughput), ``%zmqlat`` (REQ/REP round-trip latency),
``%taskflood`` (tiny tasks on an ipyparallel cluster) and ``%kernelmsg`` (Jupyter's
own messages on a fresh kernel, stage by stage). The same measurements are available
from Python (:func:`run_throughput`, :func:`run_latency`, :func:`run_taskflood`,
:func:`run_kernel_messages`), as panels (:mod:`zmqbench_magic.widgets`) and from the
shell (``zmqbench thr|lat|flood|kernelmsg``). Importing the package imports none of
IPython, ipywidgets, altair or ipyparallel.

Layout, bottom up (each layer may import the ones before it):

- :mod:`.params`: every parameter and metric declared once, and units;
- :mod:`.results`: result sets, statistics and derived figures (pandas);
- :mod:`.method`: calibration, stop and progress, helper processes;
- :mod:`.sockets`, :mod:`.parallel` and :mod:`.kernel_messages`: the ZeroMQ, the
  ipyparallel and the Jupyter kernel cores;
- :mod:`.charts`: altair charts and their offline SVG rendering;
- :mod:`.ui` and the adapters :mod:`.magics`, :mod:`.widgets`, :mod:`.cli`;
- :mod:`.kinds`: each benchmark kind's module, what every layer does for it.
"""

from __future__ import annotations

import importlib
from typing import Any

# Every kind's declaration and module, registered before any layer asks for one (its
# modules import only the declarations until a kind is used).
from . import kinds as _kinds  # noqa: F401

# Loaded on first use (PEP 562): the far end runs as ``python -m
# zmqbench_magic.sockets.far_ends.peer``, which imports this package first and needs only
# pyzmq, not the pandas and numpy that results and measurement bring (~0.3 s per peer
# start), and ipyparallel costs ~1 s to import.
_LAZY = {
    "run_throughput": "sockets.kernel.measure",
    "run_latency": "sockets.kernel.measure",
    "run_taskflood": "parallel.flood",
    "run_noise": "sockets.kernel.noise",
    "run_kernel_messages": "kernel_messages.sweep",
    "build_environment": "method.environments",
    "ThroughputParams": "params",
    "LatencyParams": "params",
    "FloodParams": "params",
    "KernelMsgParams": "params.kernel_messages",
    "ResultSet": "results",
    "load": "results",
    "stamp": "results.host.environment",
    "ZmqBench": "magics",
}

__all__ = [*sorted(_LAZY), "load_ipython_extension"]


# A public name that differs from its module's own: the module's name for it.
_RENAMED = {"build_environment": "build"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, _RENAMED.get(name, name))
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics ``%zmqthr``, ``%zmqlat`` and ``%taskflood``
    (``%load_ext zmqbench_magic``)."""
    from .magics import ZmqBench

    ipython.register_magics(ZmqBench)
