"""Pure functions from a tidy result DataFrame to an altair chart.

Each chart plots the median of the samples of each point. Axis titles come from the
parameter and metric declarations in :mod:`zmqbench_magic.params`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES, COPY, FloodParams, ZmqParams
from ..results.analysis import medians, medians_with_intervals, zero_copy_speedup

WIDTH, HEIGHT = 360, 260
# What identifies one point of a sweep: its swept parameters (and a flood's test).
_POINT_COLUMNS = [p.name for p in ZmqParams.sweep_fields()]
_FLOOD_COLUMNS = ["test", *(p.name for p in FloodParams.sweep_fields())]


def _size_axis() -> alt.X:
    return alt.X("size:Q", scale=alt.Scale(type="log"), title=COLUMN_TITLES["size"])


def _log_y(column: str, title: str | None = None) -> alt.Y:
    return alt.Y(f"{column}:Q", scale=alt.Scale(type="log"), title=title or COLUMN_TITLES[column])


def _copy_color() -> alt.Color:
    return alt.Color("mode:N", title=COLUMN_TITLES["copy"])


def _transport_color() -> alt.Color:
    return alt.Color("transport:N", title=COLUMN_TITLES["transport"])


def _copy_mode(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(mode=frame["copy"].map(COPY.label))


def _folded(
    df: pd.DataFrame, metrics: list[str], label: str, columns: list[str] = _POINT_COLUMNS
) -> pd.DataFrame:
    """Median of each metric per point, one row per (point, metric)."""
    by = [c for c in columns if c in df.columns]
    frames = [medians(df, m, by).rename(columns={m: "value"}).assign(**{label: m}) for m in metrics]
    folded = pd.concat(frames, ignore_index=True)
    folded[label] = folded[label].map(COLUMN_TITLES)
    return folded


def _by_transport(chart: alt.Chart, frame: pd.DataFrame) -> alt.Chart:
    """Side-by-side panels when several transports were measured."""
    if frame["transport"].nunique() > 1:
        return chart.facet(column=alt.Column("transport:N", title=COLUMN_TITLES["transport"]))
    return chart


def _metric_lines(
    frame: pd.DataFrame, label: str, y_title: str, color: alt.Color, value_format: str,
    x: alt.X | None = None, fields: tuple[str, ...] = ("transport", "size", "mode"),
    **extra: Any,
) -> alt.Chart:  # fmt: skip
    """Lines of folded metrics vs size: one dash and point shape per metric (``label``).

    vl-convert draws no symbols in a strokeDash legend, so the dashes go unlabelled
    and the point shapes of the same field carry the legend."""
    return (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(point=True)
        .encode(
            x=x or _size_axis(),
            y=_log_y("value", y_title),
            color=color,
            strokeDash=alt.StrokeDash(f"{label}:N", legend=None),
            shape=alt.Shape(f"{label}:N", title=label),
            tooltip=[*fields, label, alt.Tooltip("value:Q", format=value_format)],
            **extra,
        )
    )


def _with_intervals(
    frame: pd.DataFrame, df: pd.DataFrame, metric: str, label: str, columns: list[str]
) -> pd.DataFrame:
    """``frame`` (folded medians) with the 95% interval of ``metric``'s median on its
    rows (``ci_low``, ``ci_high``; empty on the other metrics' rows)."""
    by = [c for c in columns if c in df.columns]
    intervals = medians_with_intervals(df, metric, by).drop(columns=[metric])
    intervals[label] = COLUMN_TITLES[metric]
    return frame.merge(intervals, on=[*by, label], how="left")


def _interval_bars(chart: alt.Chart, x: alt.X, color: alt.Color) -> alt.Chart:
    """Error bars from ``ci_low`` to ``ci_high`` (the median's 95% interval)."""
    return chart.mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=x, y=alt.Y("ci_low:Q"), y2=alt.Y2("ci_high:Q"), color=color
    )


def throughput_chart(df: pd.DataFrame) -> alt.Chart:
    """The crossover chart: delivered and send-only msgs/s vs size, log-log, coloured by
    copy mode (pyzmq's "performance crossover" figure); the bars on the delivered rate
    are its median's 95% interval."""
    frame = _folded(df, ["msgs_per_s", "send_msgs_per_s"], "rate")
    frame = _copy_mode(_with_intervals(frame, df, "msgs_per_s", "rate", _POINT_COLUMNS))
    lines = _metric_lines(frame, "rate", "messages per second", _copy_color(), ",.0f")
    bars = _interval_bars(alt.Chart(frame), _size_axis(), _copy_color())
    chart = alt.layer(lines, bars)
    return _by_transport(chart, frame).properties(
        title=f"ZeroMQ PUSH/PULL throughput, {frame['size'].nunique()} sizes (median of samples)"
    )


def bandwidth_chart(df: pd.DataFrame) -> alt.Chart:
    """Delivered bandwidth (Mbit/s) vs message size, coloured by copy mode."""
    frame = _copy_mode(medians(df, "mbit_per_s", [c for c in _POINT_COLUMNS if c in df]))
    chart = (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(point=True)
        .encode(x=_size_axis(), y=_log_y("mbit_per_s"), color=_copy_color())
    )
    return _by_transport(chart, frame).properties(title="ZeroMQ delivered bandwidth")


def speedup_chart(df: pd.DataFrame) -> alt.Chart:
    """Zero-copy speed-up (zero-copy / copy delivered rate) vs size, with the break-even
    line at 1: where the line crosses it is the crossover size."""
    frame = zero_copy_speedup(df)
    base = alt.Chart(frame, width=WIDTH, height=HEIGHT)
    ratio_axis = alt.Y(
        "speedup:Q", scale=alt.Scale(type="log"), title="zero-copy / copy (delivered)"
    )
    line = base.mark_line(point=True).encode(
        x=_size_axis(),
        y=ratio_axis,
        color=_transport_color(),
        tooltip=["transport", "size", alt.Tooltip("speedup:Q", format=".2f")],
    ) + _interval_bars(base, _size_axis(), _transport_color())
    even = (
        alt.Chart(pd.DataFrame({"speedup": [1.0]}))
        .mark_rule(strokeDash=[4, 4])
        .encode(y="speedup:Q")
    )
    return (line + even).properties(title="Relative speed of zero-copy sends")


def latency_chart(df: pd.DataFrame) -> alt.Chart:
    """Round-trip latency percentiles (p50, p99) vs size, coloured by transport; the bars
    on p50 are its median's 95% interval over the samples."""
    frame = _folded(df, ["p50_us", "p99_us"], "percentile")
    frame = _copy_mode(_with_intervals(frame, df, "p50_us", "percentile", _POINT_COLUMNS))
    copy_opacity = alt.Opacity(
        "mode:N", title=COLUMN_TITLES["copy"], scale=alt.Scale(range=[1, 0.5])
    )
    lines = _metric_lines(
        frame, "percentile", "round trip (µs)", _transport_color(), ".1f", opacity=copy_opacity
    )
    chart = alt.layer(lines, _interval_bars(alt.Chart(frame), _size_axis(), _transport_color()))
    return chart.properties(title=f"ZeroMQ REQ/REP round trip, {frame['size'].nunique()} sizes")


def _series(frame: pd.DataFrame) -> pd.DataFrame:
    """A line label from whichever of engines, view and scheme vary."""
    varying = [c for c in ("engines", "view", "scheme") if frame[c].nunique() > 1]
    names = {"engines": "{} engines", "view": "{}", "scheme": "{}"}
    labels = frame[varying].astype(str).apply(
        lambda row: " ".join(names[c].format(row[c]) for c in varying), axis=1
    ) if varying else f"{frame['engines'].iloc[0]} engines"  # fmt: skip
    return frame.assign(series=labels)


def flood_chart(df: pd.DataFrame) -> alt.Chart:
    """Sent and round-trip time vs number of tasks, log-log, one line per engine
    count / view / scheme (the classic IPython-parallel flood figure); the bars on the
    round trip are its median's 95% interval."""
    frame = _folded(df, ["sent_s", "roundtrip_s"], "time", _FLOOD_COLUMNS)
    frame = _series(_with_intervals(frame, df, "roundtrip_s", "time", _FLOOD_COLUMNS))
    tasks_axis = alt.X("tasks:Q", scale=alt.Scale(type="log"), title=COLUMN_TITLES["tasks"])
    series = alt.Color("series:N", title="cluster")
    lines = _metric_lines(frame, "time", "seconds", series, ".4f", x=tasks_axis,
                          fields=("series", "tasks"))  # fmt: skip
    chart = alt.layer(lines, _interval_bars(alt.Chart(frame), tasks_axis, series))
    return chart.properties(title=f"ipyparallel task flood, up to {frame['tasks'].max():,} tasks")


def engines_chart(df: pd.DataFrame) -> alt.Chart:
    """Tasks per second vs number of engines, one line per number of tasks."""
    frame = medians(df, "tasks_per_s", [c for c in _FLOOD_COLUMNS if c in df.columns])
    return (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(point=True)
        .encode(
            x=alt.X("engines:O", title=COLUMN_TITLES["engines"]),
            y=alt.Y("tasks_per_s:Q", title=COLUMN_TITLES["tasks_per_s"]),
            color=alt.Color("tasks:O", title=COLUMN_TITLES["tasks"]),
        )
        .properties(title="Throughput of tiny tasks by number of engines")
    )


def echo_chart(df: pd.DataFrame) -> alt.Chart:
    """Array echo bandwidth (both directions) vs array size."""
    frame = _series(medians(df, "mbit_per_s", [c for c in _FLOOD_COLUMNS if c in df.columns]))
    return (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(point=True)
        .encode(
            x=_size_axis(), y=_log_y("mbit_per_s"), color=alt.Color("series:N", title="cluster")
        )
        .properties(title="ipyparallel array echo bandwidth")
    )


def map_chart(df: pd.DataFrame) -> alt.Chart:
    """map efficiency (ideal parallel time / actual) vs task duration."""
    frame = _series(medians(df, "efficiency", [c for c in _FLOOD_COLUMNS if c in df.columns]))
    frame = frame.assign(duration_ms=frame["duration"] * 1e3)
    return (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(point=True)
        .encode(
            # symlog: a 0 ms duration (pure overhead) stays on the axis.
            x=alt.X("duration_ms:Q", scale=alt.Scale(type="symlog"), title="task duration (ms)"),
            y=alt.Y(
                "efficiency:Q", title=COLUMN_TITLES["efficiency"], scale=alt.Scale(domain=[0, 1])
            ),
            color=alt.Color("series:N", title="cluster"),
        )
        .properties(title="map_async(time.sleep) efficiency")
    )


def default_chart(
    benchmark: str, df: pd.DataFrame, distributions: Sequence[Mapping[str, Any]] = ()
) -> alt.Chart:
    """What a magic shows: throughput with the speed-up beside it when both copy modes
    were measured; latency percentiles with the distribution of every round trip beside
    them (given the result's ``distributions``); for a task flood, its test's chart."""
    if benchmark == "lat":
        if distributions:
            from .distribution import latency_cdf_chart

            return alt.hconcat(latency_chart(df), latency_cdf_chart(distributions)).resolve_scale(
                color="independent"
            )
        return latency_chart(df)
    if benchmark == "flood":
        return _flood_default(df)
    chart = throughput_chart(df)
    if df["copy"].nunique() == 2 and df["transport"].nunique() == 1:
        return alt.hconcat(chart, speedup_chart(df)).resolve_scale(color="independent")
    return chart


def _flood_default(df: pd.DataFrame) -> alt.Chart:
    test = df["test"].iloc[0]
    if test == "echo":
        return echo_chart(df)
    if test == "map":
        return map_chart(df)
    if df["engines"].nunique() > 1:
        return alt.hconcat(flood_chart(df), engines_chart(df)).resolve_scale(color="independent")
    return flood_chart(df)
