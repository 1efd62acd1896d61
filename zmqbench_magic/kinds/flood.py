"""``%taskflood``: tiny tasks on an ipyparallel cluster (or Dask, Ray, a process
pool), what each layer does for it."""

from __future__ import annotations

from typing import Any

from ..params.columns import Row
from ..params.declare import RunSettings
from ..params.taskflood import FLOOD as KIND

__all__ = ["KIND", "advice", "cell", "chart", "figures", "panel", "run", "stop", "where"]


def run(params: Any, progress: Any = None, **kwargs: Any) -> Any:
    from ..parallel.flood import run_taskflood

    return run_taskflood(params, progress=progress, **kwargs)


def where(row: Row) -> list[str]:
    from ..results.words.text import flood_where

    return flood_where(row)


def figures(row: Row) -> str:
    from ..results.words.text import flood_figures

    return flood_figures(row)


def chart(df: Any, distributions: Any = ()) -> Any:
    from ..charts.flood_charts import flood_default

    return flood_default(df, distributions)


def advice(result: Any) -> list[str]:
    """One sentence per cluster (or pool) the flood measured."""
    from ..results.words.advice import advice as flood_advice

    return flood_advice(result)


def cell(shell: Any, source: str, given: RunSettings) -> RunSettings:
    """The cell is the task."""
    from ..parallel.celltask import cell_task

    return cell_task(shell, source, given)


def stop() -> str:
    """Stop the cluster this extension started (``%taskflood --stop``)."""
    from ..parallel.clusters.own import stop as stop_cluster

    return stop_cluster()


def panel() -> type:
    from ..widgets import TaskFloodPanel

    return TaskFloodPanel
