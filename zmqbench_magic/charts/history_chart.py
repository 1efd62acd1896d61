"""A history of runs (``ResultSet.history()``, ``zmqbench history``) as a chart."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES
from ..results.statistics.history import HISTORY_COLUMNS
from .layout import HEIGHT, WIDTH, color, picked, selector, titled
from .series import varying_label


def history_chart(series: pd.DataFrame, steps: pd.DataFrame) -> alt.TopLevelMixin:
    """Each point's median run after run with its interval; the level between steps
    with the tolerance as a shaded band around it (what a run must leave to count as a
    step); a dashed rule before each run where a step was found."""
    keys = [c for c in series.columns if c not in (*HISTORY_COLUMNS, "level", "band")]
    frame = series.assign(
        low=series["level"] * (1 - series["band"]),
        high=series["level"] * (1 + series["band"]),
        place=series["order"] + 1,
    )
    label, title = varying_label(frame, keys) if keys else (pd.Series("all", frame.index), "")
    frame = frame.assign(point=label.values)
    metric = series.attrs.get("metric", "median")
    y_title = COLUMN_TITLES.get(metric, metric)
    by = series.attrs.get("by", "date")
    x = alt.X(
        "place:Q",
        title=f"run, in {'date' if by == 'date' else by + ' version'} order",
        axis=alt.Axis(tickMinStep=1, format="d"),
        scale=alt.Scale(domain=[0.5, frame["place"].max() + 0.5], nice=False),
    )
    y = alt.Y("median:Q", title=y_title, scale=alt.Scale(zero=False))
    pick = selector("point", "pick_history_point")
    hue = color(frame, "point", title or "point")
    base = alt.Chart(frame, width=WIDTH * 2, height=HEIGHT)
    band = base.mark_area(opacity=0.12, interpolate="step-after").encode(
        x=x, y="low:Q", y2="high:Q", color=hue, opacity=alt.value(0.12), detail="point:N"
    )
    level = base.mark_line(interpolate="step-after", strokeWidth=1).encode(
        x=x, y="level:Q", color=hue, opacity=picked(pick)
    )
    bars = base.mark_rule().encode(x=x, y="ci_low:Q", y2="ci_high:Q", color=hue)
    points = (
        base.mark_point(filled=True, size=50)
        .encode(
            x=x,
            y=y,
            color=hue,
            opacity=picked(pick),
            tooltip=[
                "point",
                "run",
                alt.Tooltip("date:N", title="date"),
                alt.Tooltip("version:N", title=by),
                alt.Tooltip("median:Q", title="median", format=",.4~r"),
                alt.Tooltip("ci_low:Q", title="interval from", format=",.4~r"),
                alt.Tooltip("ci_high:Q", title="interval to", format=",.4~r"),
                alt.Tooltip("n:Q", title="samples"),
            ],
        )
        .add_params(pick)
    )
    layers = [band, level, bars, points]
    called = steps[steps["called"]] if "called" in steps.columns else steps
    if not called.empty:
        places = called.assign(place=called["at"] + 0.5)
        layers.append(
            alt.Chart(places)
            .mark_rule(strokeDash=[4, 4], color="#d62728")
            .encode(
                x=alt.X("place:Q"),
                tooltip=[
                    "run",
                    alt.Tooltip("ratio:Q", format=".3f"),
                    alt.Tooltip("p_adjusted:Q", title="p (Holm-adjusted)", format=".3g"),
                ],
            )
        )
    note = (
        f"shaded: the level between steps ± the tolerance "
        f"(±{series['band'].min():.1%}{'' if series['band'].nunique() == 1 else ' or more'}); "
        f"dashed: a step (permutation test, Holm-adjusted); bars: each run's interval"
    )
    chart = alt.layer(*layers)
    return titled(chart, f"History of {y_title}, {frame['place'].max()} runs", note)
