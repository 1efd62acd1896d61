"""Results as Markdown, for a pull request's comment or a job summary (``--markdown``,
as hyperfine's ``--export-markdown``): a run's points and a comparison's as tables,
with the same words the terminal prints, and what the figures leave unsaid as a list
below. Anything else a command prints goes in a fenced block, as it was printed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd

from ...params import KINDS
from ..statistics.compare import point_columns
from .text import comparison_notes, figure, verdict_lines

if TYPE_CHECKING:
    from ..resultlike import ResultLike


def result_markdown(result: ResultLike) -> str:
    """A run's summary: a heading naming what ran where, one table row per point (its
    names and figures as the summary line words them), then its notes, verdicts,
    advice and warnings as a list."""
    kind = KINDS[result.benchmark]
    where, figures = kind.module.where, kind.module.figures
    meta = result.metadata
    on = ", ".join(str(meta[key]) for key in ("host", "cpu", "date") if meta.get(key))
    # The kernel's versions, unless environments side by side ran the loops (the notes
    # then name each one's).
    versions = " · ".join(
        f"{name} {meta[key]}"
        for name, key in (("Python", "python"), ("pyzmq", "pyzmq"), ("libzmq", "libzmq"))
        if meta.get(key) and len(meta.get("environments") or {}) < 2
    )
    lines = [f"**{kind.title}**" + (f" on {on}" if on else ""), ""]
    if versions:
        lines += [versions, ""]
    points = result.summary().to_dict("records") if result.rows else []
    if points:
        lines += ["| point | figures |", "|---|---|"]
        for point in points:
            names = ([f"[{point['run']}]"] if "run" in point else []) + where(point)
            lines.append(f"| {_cell(' '.join(n for n in names if n))} | {_cell(figures(point))} |")
    else:
        lines.append("no point was measured")
    said = [f"note: {n}" for n in meta.get("notes", [])]
    said += verdict_lines(result)
    said += [f"advice: {a}" for a in result.advice()]
    said += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines + _listed(said))


def comparison_markdown(table: pd.DataFrame) -> str:
    """A comparison (``compare``, ``versus``): one table row per point with both
    medians, the ratio, its interval and the verdict with its reason; then what the
    table as a whole says."""
    if table.empty:
        return "no point is in both results: check --match"
    keys = point_columns(table)
    lines = [
        "| point | metric | baseline | candidate | ratio | interval | n | verdict |",
        "|---|---|--:|--:|--:|---|--:|---|",
    ]
    for row in table.to_dict("records"):
        where = " ".join(f"{k}={row[k]}" for k in keys) or "all"
        verdict = f"**{row['verdict']}**" + (f": {row['reason']}" if row.get("reason") else "")
        cells = [
            where,
            row["metric"],
            figure(row["baseline"]),
            figure(row["candidate"]),
            f"{row['ratio']:.3f}",
            f"{row['ci_level']:.0%} CI {row['ci_low']:.3f} to {row['ci_high']:.3f}",
            str(row["n"]),
            verdict,
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines + _listed(comparison_notes(table)))


def table_markdown(header: list[str], rows: Iterable[Iterable[object]]) -> str:
    """A Markdown table: one row per item, every cell kept in its column."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(str(cell)) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def lines_markdown(lines: Iterable[str]) -> str:
    """Text as a command printed it, in a fenced block: its columns stay aligned."""
    return "\n".join(["```text", *lines, "```"])


def _listed(lines: list[str]) -> list[str]:
    return ["", *(f"- {_inline(line)}" for line in lines)] if lines else []


def _cell(text: str) -> str:
    """Text that stays in its table cell: a pipe would start a new one."""
    return _inline(text).replace("|", "\\|")


def _inline(text: str) -> str:
    return " ".join(str(text).split())
