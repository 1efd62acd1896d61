"""What the charts of medians share: one row per point and metric with its interval
and that interval's level, and the median lines drawn from it."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES, COPY, PARAMS, RATE, LatencyParams, ThroughputParams
from ..params.columns import Distribution
from ..results.statistics.analysis import medians_with_intervals
from ..results.statistics.pooled import pooled_points
from .layout import HEIGHT, WIDTH, color, legend, log_ticks, picked, selector, tooltip
from .render import VegaSpec

# What identifies one point of a sweep: its swept parameters (and a flood's test).
POINT_COLUMNS = list(
    dict.fromkeys(p.name for s in (ThroughputParams, LatencyParams) for p in s.sweep_fields())
)


def point_medians(df: pd.DataFrame, metrics: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """One row per point and metric: the median of its samples (``value``), its
    interval and level, and its number of samples; ``metric`` names the metric in words."""
    by = [c for c in columns if c in df.columns]
    frames = [
        medians_with_intervals(df, m, by).rename(columns={m: "value"}).assign(metric=m)
        for m in metrics
    ]
    return _decorated(pd.concat(frames, ignore_index=True), df)


def point_percentiles(
    df: pd.DataFrame,
    distributions: Sequence[Distribution],
    metrics: Sequence[str],
    columns: Sequence[str],
) -> pd.DataFrame:
    """As :func:`point_medians`, for latency percentiles (``p50_us``, ``p99_us``) over
    every round trip of each point, their intervals from resampling its samples.
    Without distributions (a DataFrame alone), the medians of the samples' own
    percentiles (``sample_p50_us``), named as such."""
    by = [c for c in columns if c in df.columns]
    if distributions:
        return _decorated(pooled_points(df, distributions, metrics, by), df)
    return point_medians(df, [f"sample_{m}" for m in metrics], columns)


def _decorated(frame: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """Words for the metric, the offered rate and the copy mode; ``runs``: how many
    runs' samples each point pools (a panel's presses of Run)."""
    frame = frame.dropna(subset=["value"])
    frame["metric"] = frame["metric"].map(COLUMN_TITLES)
    frame["runs"] = df["run"].nunique() if "run" in df.columns else 1
    if "rate" in frame.columns:
        frame["offered"] = frame["rate"].map(offered_label)
    # Settings in a tooltip read as the axes and the options spell them (64k B, 5 ms);
    # blank at a point that does not name one (a kernel's execute has no size).
    for column in [c for c in frame.columns if c in PARAMS]:
        param = PARAMS[column]
        if param.kind in ("size", "duration", "rate"):
            unit = " B" if param.kind == "size" else ""
            frame[f"{column}_label"] = frame[column].map(
                lambda v, p=param, u=unit: "" if pd.isna(v) else p.label(v) + u
            )
    if "copy" in frame.columns:
        frame["mode"] = frame["copy"].map(COPY.label)
        # Colours in the declared order (copy, then zero-copy), whatever was run first.
        order = ["copy"]
        if "loop" in frame.columns and frame["loop"].nunique() > 1:
            frame["mode"] = frame["loop"] + " " + frame["mode"]
            order = ["loop", "copy"]
        if _varies(frame, "python"):  # environments side by side: one colour each
            frame["mode"] = frame["python"].astype(str) + " " + frame["mode"]
        frame = frame.sort_values(order, ascending=False, kind="stable", ignore_index=True)
    return frame


def median_lines(
    frame: pd.DataFrame,
    x: alt.X,
    y: alt.Y,
    series: str,
    series_title: str,
    fields: Sequence[str],
    fmt: str,
    width: int = WIDTH,
    *,
    name: str,
) -> alt.LayerChart:
    """Median lines with points, one colour per ``series``, one point shape per metric
    when there are several, and the interval bars.

    Several metrics of one series (median and p99 of one mode) are told apart by colour
    and shape both. Series that share an x value on a log axis are set a little apart
    (the tooltip gives the measured x), so their bars do not hide each other. Two x
    values or fewer are drawn as points: a line between two would read as measured
    in between."""
    metrics = frame["metric"].nunique()
    if metrics > 1 and frame[series].nunique() == 1:
        series, series_title = "metric", "metric"
    pick = selector(series, f"pick_{name}")
    shape = alt.Undefined
    if metrics > 1 and series == "metric":  # the colour legend names them
        shape = alt.Shape("metric:N", legend=None, sort=list(dict.fromkeys(frame["metric"])))
    elif metrics > 1:
        shape = alt.Shape("metric:N", legend=legend("metric", metrics))
    joined = frame[_field(x)].nunique() > 2
    x = _dodged(frame, x, series)
    y = _labelled(frame, y)
    base = alt.Chart(frame, width=width, height=HEIGHT)
    mark = (
        base.mark_line(point=alt.OverlayMarkDef(size=50, filled=True))
        if joined
        else base.mark_point(size=50, filled=True, opacity=1)
    )
    lines = mark.encode(
        x=x,
        y=y,
        color=color(frame, series, series_title),
        shape=shape,
        detail="metric:N",
        opacity=picked(pick),
        tooltip=tooltip(frame, [series, "metric", *fields], "value", "median", fmt),
    ).add_params(pick)
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x,
        y="ci_low:Q",
        y2="ci_high:Q",
        color=color(frame, series, series_title),
        opacity=alt.condition(pick, alt.value(0.55), alt.value(0.08)),
        detail="metric:N",
    )
    # The bars first: drawn over the points, they would take the pointer off them.
    return alt.LayerChart(layer=[bars, lines])


# How far apart series sharing an x value are set on a log axis: 4% a step, a few
# pixels across the decades a sweep spans, inside the axis' 12 px of padding.
_DODGE = 1.04


def _spec(x: alt.X | alt.Y) -> VegaSpec:
    spec: VegaSpec = x.to_dict()  # type: ignore[assignment]  # one channel: a dict
    return spec


def _field(x: alt.X) -> str:
    return str(_spec(x)["field"])


def _dodged(frame: pd.DataFrame, x: alt.X, series: str) -> alt.X:
    """``x`` drawing an ``x_drawn`` column added to ``frame`` (in place: a layer a
    caller adds on the same frame keeps one data set, which faceting needs), where
    several series have points at one x on a log axis; otherwise ``x`` unchanged."""
    column = _field(x)
    series_count = frame[series].nunique()
    if _spec(x).get("scale", {}).get("type") != "log" or series_count < 2:
        return x
    if not frame.groupby(column)[series].nunique().gt(1).any():
        return x
    order = {s: i for i, s in enumerate(dict.fromkeys(frame[series]))}
    steps = frame[series].map(order) - (series_count - 1) / 2
    frame["x_drawn"] = frame[column] * _DODGE**steps
    return alt.X.from_dict({**_spec(x), "field": "x_drawn"})


def _labelled(frame: pd.DataFrame, y: alt.Y) -> alt.Y:
    """A log ``y`` with a labelled tick at each of :func:`.layout.log_ticks` over the
    medians and their intervals; any other ``y`` unchanged."""
    spec = _spec(y)
    if spec.get("scale", {}).get("type") != "log" or "values" in spec.get("axis", {}):
        return y
    drawn = pd.concat([frame[c] for c in ("value", "ci_low", "ci_high") if c in frame.columns])
    drawn = drawn[drawn > 0]
    ticks = log_ticks(drawn.min(), drawn.max()) if len(drawn) else []
    if not ticks:
        return y
    return alt.Y.from_dict({**spec, "axis": {**spec.get("axis", {}), "values": ticks}})


def varying_label(frame: pd.DataFrame, columns: list[str]) -> tuple[pd.Series, str]:
    """A series label from those of ``columns`` that vary (the first if none does),
    and its legend title: the names of those columns."""
    present = [c for c in columns if c in frame.columns]
    varying = [c for c in present if frame[c].nunique() > 1] or present[:1]
    return frame[varying].astype(str).agg(" ".join, axis=1), ", ".join(varying)


def offered_label(rate: float) -> str:
    """``10k msgs/s`` for an offered rate, ``closed loop`` for none."""
    return f"{RATE.label(rate)} msgs/s" if rate else "closed loop"


def mode_title(frame: pd.DataFrame) -> str:
    """The legend title of ``mode``: copy mode, and the loop when both were run, and
    the environment when several were."""
    title = "loop, copy" if _varies(frame, "loop") else COLUMN_TITLES["copy"]
    return f"Python, {title}" if _varies(frame, "python") else title


def _varies(frame: pd.DataFrame, column: str) -> bool:
    return column in frame.columns and frame[column].nunique() > 1
