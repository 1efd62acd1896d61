"""``%zmqthr``: PUSH/PULL throughput, what each layer does for it."""

from __future__ import annotations

from typing import Any

from ..params.columns import Row
from ..params.declare import RunSettings
from ..params.sockets import THROUGHPUT as KIND

__all__ = ["KIND", "cell", "chart", "figures", "panel", "run", "where"]


def run(params: Any, progress: Any = None, **kwargs: Any) -> Any:
    from ..sockets.kernel.measure import run_throughput

    return run_throughput(params, progress=progress, **kwargs)


def where(row: Row) -> list[str]:
    from ..results.words.text import socket_where

    return socket_where(row)


def figures(row: Row) -> str:
    from ..results.words.text import throughput_figures

    return throughput_figures(row)


def chart(df: Any, distributions: Any = ()) -> Any:
    from ..charts.figures import throughput_default

    return throughput_default(df, distributions)


def cell(shell: Any, source: str, given: RunSettings) -> RunSettings:
    """The cell's last expression is the message."""
    from ..sockets.payload import cell_payload

    return cell_payload(shell, source, given)


def panel() -> type:
    from ..widgets import ThroughputPanel

    return ThroughputPanel


# No advice, and nothing kept between runs to stop.
advice = stop = None
