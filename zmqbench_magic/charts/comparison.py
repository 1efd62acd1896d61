"""A comparison of two runs (``a.compare(b)``) as a chart."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES
from ..results.compare import point_columns
from .layout import HEIGHT, WIDTH, legend, picked, selector, titled


def comparison_chart(table: pd.DataFrame) -> alt.TopLevelMixin:
    """A comparison (``a.compare(b)``): the ratio candidate / baseline per point with
    its 95% interval, and the line at 1 (no difference); colour gives the verdict."""
    keys = point_columns(table)
    frame = table.assign(point=table[keys].astype(str).agg(" ".join, axis=1) if keys else "all")
    base = alt.Chart(frame, width=WIDTH, height=max(HEIGHT // 2, 22 * len(frame)))
    verdict = alt.Color(
        "verdict:N", legend=legend("verdict", 3),
        scale=alt.Scale(domain=["faster", "same", "slower"],
                        range=["#2ca02c", "#7f7f7f", "#d62728"]),
    )  # fmt: skip
    pick = selector("verdict", "pick_verdict")
    ratio = alt.X("ratio:Q", scale=alt.Scale(type="log"), title="candidate / baseline (ratio)")
    points = base.mark_point(filled=True, size=60).encode(
        x=ratio, y=alt.Y("point:N", title=None, sort=None), color=verdict, opacity=picked(pick),
        tooltip=["point", alt.Tooltip("ratio:Q", format=".3f"),
                 alt.Tooltip("ci_low:Q", title="95% interval from", format=".3f"),
                 alt.Tooltip("ci_high:Q", title="95% interval to", format=".3f"),
                 alt.Tooltip("p_value:Q", format=".3g"), "verdict"],
    ).add_params(pick)  # fmt: skip
    bars = base.mark_rule().encode(
        x="ci_low:Q", x2="ci_high:Q", y=alt.Y("point:N", sort=None), color=verdict,
        opacity=picked(pick),
    )  # fmt: skip
    even = (
        alt.Chart(pd.DataFrame({"ratio": [1.0]})).mark_rule(strokeDash=[4, 4]).encode(x="ratio:Q")
    )
    metric = table["metric"].iloc[0] if not table.empty else ""
    return titled(bars + points + even, f"Comparison of {COLUMN_TITLES.get(metric, metric)}")
