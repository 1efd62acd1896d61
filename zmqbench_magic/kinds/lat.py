"""``%zmqlat``: REQ/REP round-trip latency, what each layer does for it."""

from __future__ import annotations

from typing import Any

from ..params.columns import Row
from ..params.sockets import LATENCY as KIND

# A ZeroMQ point is named, and a cell gives its message, as for throughput.
from .thr import cell, where

__all__ = ["KIND", "cell", "chart", "figures", "panel", "run", "where"]


def run(params: Any, progress: Any = None, **kwargs: Any) -> Any:
    from ..sockets.kernel.measure import run_latency

    return run_latency(params, progress=progress, **kwargs)


def figures(row: Row) -> str:
    from ..results.words.text import latency_figures

    return latency_figures(row)


def chart(df: Any, distributions: Any = ()) -> Any:
    from ..charts.figures import latency_default

    return latency_default(df, distributions)


def panel() -> type:
    from ..widgets import LatencyPanel

    return LatencyPanel


# No advice, and nothing kept between runs to stop.
advice = stop = None
