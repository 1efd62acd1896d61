"""``%kernelmsg``: Jupyter's own messages on a fresh kernel, what each layer does for it."""

from __future__ import annotations

from typing import Any

from ..params.columns import Row
from ..params.declare import RunSettings
from ..params.kernel_messages import KERNEL_MESSAGES as KIND

__all__ = ["KIND", "cell", "chart", "figures", "panel", "run", "where"]


def run(params: Any, progress: Any = None, **kwargs: Any) -> Any:
    from ..kernel_messages.sweep import run_kernel_messages

    return run_kernel_messages(params, progress=progress, **kwargs)


def where(row: Row) -> list[str]:
    from ..results.words.kernel_words import kernel_where

    return kernel_where(row)


def figures(row: Row) -> str:
    from ..results.words.kernel_words import kernel_figures

    return kernel_figures(row)


def chart(df: Any, distributions: Any = ()) -> Any:
    from ..charts.kernel_charts import kernel_stages_chart

    return kernel_stages_chart(df)


def cell(shell: Any, source: str, given: RunSettings) -> RunSettings:
    """The cell is the execute test's code, run on the kernel under test as it is."""
    return {"code": source}


def panel() -> type:
    from ..widgets import KernelMessagesPanel

    return KernelMessagesPanel


# No advice, and nothing kept between runs to stop (each round's kernel is shut down).
advice = stop = None
