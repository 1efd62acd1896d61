"""A comparison (``a.compare(b)``, ``r.versus(...)``) as a chart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES, PARAMS
from ..results.statistics.compare import point_columns
from .layout import HEIGHT, WIDTH, legend, picked, selector, titled


def comparison_chart(table: pd.DataFrame) -> alt.TopLevelMixin:
    """A comparison (``a.compare(b)``, ``r.versus(...)``): the ratio candidate /
    baseline per point with its interval, the tolerance band around 1, and the line at
    1 (no difference); colour gives the verdict, the tooltip why a point is
    inconclusive."""
    keys = point_columns(table)
    named = [table[key].map(_words_of(key)) for key in keys]
    frame = table.assign(point=pd.concat(named, axis=1).agg(" ".join, axis=1) if keys else "all")
    base = alt.Chart(frame, width=WIDTH, height=max(HEIGHT // 2, 22 * len(frame)))
    verdict = alt.Color(
        "verdict:N",
        legend=legend("verdict", 4),
        scale=alt.Scale(
            domain=["faster", "same", "slower", "inconclusive"],
            range=["#2ca02c", "#1f77b4", "#d62728", "#bdbdbd"],
        ),
    )
    pick = selector("verdict", "pick_verdict")
    ratio = alt.X("ratio:Q", scale=alt.Scale(type="log"), title="candidate / baseline (ratio)")
    points = (
        base.mark_point(filled=True, size=60)
        .encode(
            x=ratio,
            y=alt.Y("point:N", title=None, sort=None),
            color=verdict,
            opacity=picked(pick),
            tooltip=[
                "point",
                alt.Tooltip("ratio:Q", format=".3f"),
                alt.Tooltip("ci_low:Q", title="interval from", format=".3f"),
                alt.Tooltip("ci_high:Q", title="interval to", format=".3f"),
                alt.Tooltip("ci_level:Q", title="interval level", format=".0%"),
                alt.Tooltip("n:Q", title="samples (pairs)"),
                alt.Tooltip("p_adjusted:Q", title="p (Holm-adjusted)", format=".3g"),
                "verdict",
                "reason",
            ],
        )
        .add_params(pick)
    )
    bars = base.mark_rule().encode(
        x="ci_low:Q",
        x2="ci_high:Q",
        y=alt.Y("point:N", sort=None),
        color=verdict,
        opacity=picked(pick),
    )
    even = (
        alt.Chart(pd.DataFrame({"ratio": [1.0]})).mark_rule(strokeDash=[4, 4]).encode(x="ratio:Q")
    )
    tolerance = table.attrs.get("tolerance", 0.0)
    band = alt.Chart(pd.DataFrame({"low": [1 - tolerance], "high": [1 + tolerance]}))
    band = band.mark_rect(opacity=0.15, color="#1f77b4").encode(x="low:Q", x2="high:Q")
    metric = table["metric"].iloc[0] if not table.empty else ""
    how = "paired by round" if table.get("paired", pd.Series([False])).all() else "unpaired"
    note = f"shaded: the ±{tolerance:.1%} tolerance; {how}, Holm-adjusted across the points"
    if table.attrs.get("shift"):
        note += f"; {table.attrs['shift']}"
    return titled(
        band + bars + points + even, f"Comparison of {COLUMN_TITLES.get(metric, metric)}", note
    )


def _words_of(column: str) -> Callable[[Any], str]:
    """How a point's value of ``column`` reads on the chart's rows: its parameter's
    words (``1k B``, ``zero-copy``, ``pipeline``), a value of anything else as it is."""
    param = PARAMS.get(column)
    if param is None:
        return str

    def words(value: Any) -> str:
        try:
            return param.words(value)
        except (TypeError, ValueError, IndexError):  # a value the parameter never takes
            return str(value)

    return words
