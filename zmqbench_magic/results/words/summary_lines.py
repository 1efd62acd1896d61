"""A result's summary: one %timeit-style line per point, in its kind's words.

Each kind's module says how a point is named and what it measured (``where`` and
``figures``, :class:`..params.kinds.KindModule`); this module only lays the lines out.
It is the one place the words layer asks a kind's module, which answers from the
modules below it (``text.py``'s ZeroMQ and flood words), never from this one.
"""

from __future__ import annotations

from ...params import KINDS
from ...params.columns import Row


def summary_lines(benchmark: str, points: list[Row]) -> list[str]:
    """One %timeit-style line per point of a summary, their names aligned in columns
    as wide as this summary needs (prefixed by its run when a result joins several),
    named by its kind's module."""
    kind = KINDS[benchmark]
    where, figures = kind.module.where, kind.module.figures
    names = [[f"[{p['run']}]" if "run" in p else "", *where(p)] for p in points]
    widths = [max(len(words[i]) for words in names) for i in range(len(names[0]))] if names else []
    # Counts read right-aligned (tasks, sizes), words left-aligned.
    right = {1 + i for i in kind.counts_at}
    lines = []
    for point, words in zip(points, names, strict=True):
        cells = [
            w.rjust(widths[i]) if i in right else w.ljust(widths[i])
            for i, w in enumerate(words)
            if widths[i]
        ]
        lines.append(f"{' '.join(cells)}: {figures(point)}")
    return lines


def summary_line(benchmark: str, row: Row) -> str:
    """One %timeit-style line for one row of a summary (one point)."""
    return summary_lines(benchmark, [row])[0]


__all__ = ["summary_line", "summary_lines"]
