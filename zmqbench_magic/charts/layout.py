"""What every chart shares: its size, its axes, its legends, its titles and tooltips.

One place decides how a figure fits a notebook's output area (900 px, JupyterLab's
is about 970 px in a 1,400 px window with the file browser open), so the figures
only say what they plot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES
from ..params.units import GiB, KiB, MiB, plural

__all__ = ["plural"]  # re-exported: the charts' titles count with it

# One chart's plotting area; two sit side by side, each with its axes and legend
# below it, inside MAX_WIDTH.
WIDTH, HEIGHT = 300, 220
MAX_WIDTH = 900
# Facets of one chart (one per transport) share the width of one row.
ROW_WIDTH = 660
# Legend labels are never cut: vega's default limit (160 px) clipped
# "delivered (msgs/s" and "median round trip (µ".
# About what a subtitle line holds across a chart of WIDTH px at the default font.
_SUBTITLE_CHARS = 64
_NO_LIMIT = 0

# Byte counts on an axis spelled as the options take them (1k = 1024 B, 1000 B is
# 1000): params.units.format_size in vega's expression language, kept in step by a test.
SIZE_LABEL_EXPR = (
    f"datum.value >= {GiB} && datum.value % {GiB} == 0 ? datum.value / {GiB} + 'G' : "
    f"datum.value >= {MiB} && datum.value % {MiB} == 0 ? datum.value / {MiB} + 'M' : "
    f"datum.value >= {KiB} && datum.value % {KiB} == 0 ? datum.value / {KiB} + 'k' : "
    "'' + datum.value"
)


# How near an end of a continuous axis (in pixels) a tick's label is aligned to end at
# it rather than centred: half the widest label a time or rate axis prints, with room.
_FLUSH_PX = 30


def x_axis(
    frame: pd.DataFrame,
    column: str,
    title: str | None = None,
    *,
    sizes: bool = False,
    scale: Any = "log",
    ticks_at_values: bool = True,
    label_format: str = ",~r",
) -> alt.X:
    """An x axis that spans the data: a point axis for a single value (a linear axis
    of one value crowds its tick labels), otherwise ``scale`` over exactly the
    measured range, with a tick at each measured value (up to 8) so each point can be
    read off. ``label_format`` is a d3 format (``~s``: 10k, 1M)."""
    title = title or COLUMN_TITLES[column]
    values = sorted(frame[column].dropna().unique().tolist())
    # Axis options, passed on as altair's keyword arguments.
    label: dict[str, Any] = {"labelExpr": SIZE_LABEL_EXPR} if sizes else {"format": label_format}
    if len(values) <= 1:
        return alt.X(f"{column}:O", title=title, axis=alt.Axis(labelAngle=0, **label))
    low, high = values[0], values[-1]
    if scale == "log" and low <= 0:
        scale = "symlog"
    if len(values) <= 8 and ticks_at_values:
        label["values"] = values
    return alt.X(
        f"{column}:Q",
        title=title,
        scale=alt.Scale(type=scale, domain=[low, high], nice=False, zero=False, padding=12),
        # A label centred on a tick near an end of the axis would reach past the canvas
        # ("200,000" is about 40 px): within this many pixels of an end it is aligned
        # to end at its tick instead, inside the chart.
        axis=alt.Axis(labelOverlap="greedy", labelFlush=_FLUSH_PX, **label),
    )


def log_y(column: str, title: str, domain: Sequence[float] | None = None) -> alt.Y:
    """A log y axis that starts and ends near the data (no decade of empty space)."""
    scale = alt.Scale(type="log", nice=False, zero=False, padding=12)
    if domain is not None:
        scale = alt.Scale(type="log", domain=list(domain), nice=False, zero=False, padding=12)
    return alt.Y(f"{column}:Q", title=title, scale=scale)


# At most this many ticks on a log axis: more would crowd 220 px and lose labels.
_MAX_LOG_TICKS = 8


def log_ticks(low: float, high: float) -> list[float]:
    """Where a log axis from ``low`` to ``high`` puts its ticks, every one labelled
    (vega's own log ticks leave the minor ones blank: unlabelled marks between 0.07
    and 0.1): 1 to 9 per decade where that is few, else 1, 2 and 5, else 1; none (vega
    chooses) for a span too narrow to hold two."""
    if not 0 < low <= high:
        return []
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    for steps in ((1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 5), (1,)):
        ticks = [float(f"{m * 10.0**d:.12g}") for d in decades for m in steps]
        ticks = [t for t in ticks if low <= t <= high]
        if len(ticks) <= _MAX_LOG_TICKS:
            return ticks if len(ticks) >= 2 else []
    return []


def legend(title: str, entries: int) -> alt.Legend:
    """A legend below its chart, in columns that fit the chart's width, never cut."""
    return alt.Legend(
        title=title,
        orient="bottom",
        direction="vertical" if entries > 4 else "horizontal",
        columns=2 if entries > 4 else entries,
        labelLimit=_NO_LIMIT,
        titleLimit=_NO_LIMIT,
        symbolType="circle",
    )


def color(frame: pd.DataFrame, field: str, title: str) -> alt.Color:
    """Colour by ``field``, with a legend only when it has several values (a legend of
    one entry says nothing; :func:`subtitle` names that value instead)."""
    order = list(dict.fromkeys(frame[field]))  # as measured (sizes and counts ascending)
    palette = alt.Scale(scheme="category10" if len(order) <= 10 else "category20")
    if len(order) <= 1:
        return alt.Color(f"{field}:N", legend=None, sort=order, scale=palette)
    return alt.Color(f"{field}:N", legend=legend(title, len(order)), sort=order, scale=palette)


def subtitle(
    frame: pd.DataFrame, fields: Iterable[str], words: dict[str, str] | None = None
) -> str:
    """The settings that were the same at every point, in words: ``tcp, copy``; then
    the level of the interval bars, and how many runs each point pools, when more
    than one (``bars: 98% intervals; 2 runs pooled``)."""
    words = words or {}
    parts = []
    for field in fields:
        if field in frame.columns and frame[field].nunique() == 1:
            value = frame[field].iloc[0]
            parts.append(words.get(field, "{}").format(value))
    return "; ".join(p for p in (", ".join(parts), interval_note(frame)) if p)


def interval_note(frame: pd.DataFrame) -> str:
    """``bars: 95-98% intervals``: the levels the bars reach, as the data say."""
    notes = []
    if "ci_level" in frame.columns and frame["ci_level"].notna().any():
        low, high = frame["ci_level"].min(), frame["ci_level"].max()
        levels = f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%}-{high:.0%}"
        notes.append(f"bars: {levels} intervals")
    if "runs" in frame.columns and frame["runs"].max() > 1:
        # A panel's runs need not all measure every point: "up to", not "each".
        notes.append(f"points pool the samples of up to {frame['runs'].max()} runs")
    return "; ".join(notes)


def selector(field: str, name: str) -> alt.Parameter:
    """Click a legend entry to pick out its series (shift-click adds more). ``name``
    keeps two charts' selections apart when they sit side by side."""
    return alt.selection_point(fields=[field], bind="legend", name=name)


def picked(param: alt.Parameter) -> Any:
    return alt.condition(param, alt.value(1.0), alt.value(0.12))


def tooltip(
    frame: pd.DataFrame, fields: Sequence[str], value: str, value_title: str, fmt: str
) -> list[alt.Tooltip]:
    """The exact figures on hover: the median, its interval and the level that
    interval reaches (from the data: 98% with 10 samples, never a typed-in 95%), how
    many samples, then every setting of the point."""
    tips = [
        alt.Tooltip(f"{value}:Q", title=value_title, format=fmt),
        alt.Tooltip("ci_low:Q", title="interval from", format=fmt),
        alt.Tooltip("ci_high:Q", title="interval to", format=fmt),
    ]
    if "ci_level" in frame.columns:
        tips.append(alt.Tooltip("ci_level:Q", title="interval level", format=".0%"))
    if "samples" in frame.columns:
        tips.append(alt.Tooltip("samples:Q", title="samples"))
    said = set()
    for field in dict.fromkeys(fields):
        # Each fact once, spelled as the axes spell it: the copy mode is in "mode"
        # when a chart has one; sizes and durations by their labels.
        if (field == "copy" and "mode" in frame.columns) or field not in frame.columns:
            continue
        shown = f"{field}_label" if f"{field}_label" in frame.columns else field
        title = COLUMN_TITLES.get(field, field)
        if title not in said:
            said.add(title)
            tips.append(alt.Tooltip(f"{shown}:N", title=title))
    return tips


def titled(chart: alt.TopLevelMixin, title: str, note: str = "") -> alt.TopLevelMixin:
    """A title, and a subtitle naming what was the same everywhere; never cut."""
    params: dict[str, Any] = {"text": title, "anchor": "start", "limit": _NO_LIMIT}
    if note:
        lines = _lines(note)
        params |= {"subtitle": lines[0] if len(lines) == 1 else lines, "subtitleColor": "#555"}
    return chart.properties(title=alt.TitleParams(**params))


def _lines(note: str, width: int = _SUBTITLE_CHARS) -> list[str]:
    """A subtitle's clauses (``a; b; c``) on as few lines as fit the chart's width."""
    lines: list[str] = []
    for clause in note.split("; "):
        if lines and len(lines[-1]) + 2 + len(clause) <= width:
            lines[-1] += f"; {clause}"
        else:
            lines.append(clause)
    return lines


def in_a_row(*charts: Any) -> alt.HConcatChart:
    """Charts in a row, each keeping its own scales and its legends below it (shared
    legends would gather at the far right, beside the wrong chart)."""
    apart: Any = dict.fromkeys(("color", "shape", "opacity", "strokeDash"), "independent")
    return alt.hconcat(*charts, spacing=24).resolve_scale(**apart).resolve_legend(**apart)
