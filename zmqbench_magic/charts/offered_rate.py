"""Latency under load (``%zmqlat --rate``): round-trip percentiles vs offered rate,
each series' knee marked (:func:`..results.statistics.knee.load_knees`)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..params import RATE, RTT
from ..params.columns import Distribution
from ..results.statistics.knee import load_knees
from .layout import log_y, subtitle, titled, x_axis
from .series import POINT_COLUMNS, median_lines, point_percentiles, varying_label

_PERCENTILES = ["p50_us", "p90_us", "p99_us", "p999_us"]
_WORDS = {"transport": "{}", "mode": "{} sends", "loop": "{} loop", "peer": "far end: {}"}
# What tells two series apart: settings in the data, and their words on the chart
# (``mode``: copy mode, with the loop when both were run).
_SERIES_SETTINGS = ["transport", "size", "copy", "loop", "peer", "copy_threshold"]
_SERIES = ["transport", "size", "mode", "peer", "copy_threshold"]


def load_chart(df: pd.DataFrame, distributions: Sequence[Distribution] = ()) -> alt.TopLevelMixin:
    """Round trip percentiles vs offered rate (log-log), timed from each message's
    intended send time: p50 to p99.9 for one series, p50 and p99 for several. Each
    series' knee is a dashed rule, named in the subtitle; its tooltip says why. The
    percentiles are over every round trip of a point, given ``distributions``."""
    open_loop = df[df["rate"] > 0]
    several = any(open_loop[c].nunique() > 1 for c in _SERIES_SETTINGS if c in open_loop.columns)
    metrics = ["p50_us", "p99_us"] if several else _PERCENTILES
    frame = point_percentiles(open_loop, distributions, metrics, POINT_COLUMNS)
    x = x_axis(frame, "rate", label_format="~s")
    y = log_y("value", f"{RTT.title} from intended send ({RTT.unit})")
    if several:
        frame["series"], title = varying_label(frame, _SERIES)
        lines = median_lines(frame, x, y, "series", title, POINT_COLUMNS, ",.1f", name="load")
    else:
        # One series: its percentiles are the lines (colour and shape share one legend).
        lines = median_lines(frame, x, y, "metric", "metric", POINT_COLUMNS, ",.1f", name="load")
    knees = _knees(open_loop, frame, several)
    notes = [subtitle(frame, ["transport", "mode", "loop", "peer"], _WORDS)]
    if knees.empty:
        notes.append("no knee up to the highest rate offered")
    else:
        notes.append("knee at " + ", ".join(knees["label"]))
        lines = alt.LayerChart(layer=[lines, _rules(knees)])
    return titled(
        lines,
        "ZeroMQ latency under load (open loop, DEALER/ROUTER)",
        "; ".join(n for n in notes if n),
    )


def _knees(df: pd.DataFrame, frame: pd.DataFrame, several: bool) -> pd.DataFrame:
    """The knees found, each with a ``label``: its rate and its series' legend words."""
    knees = load_knees(df).dropna(subset=["knee_per_s"])
    if knees.empty:
        return knees.assign(label=pd.Series(dtype=str))
    rates = knees["knee_per_s"].map(RATE.label) + " msgs/s"
    if not several:
        return knees.assign(label=rates)
    by = [c for c in knees.columns if c in frame.columns and c != "series"]
    knees = knees.merge(frame[[*by, "series"]].drop_duplicates(), on=by, how="left")
    return knees.assign(label=rates.to_numpy() + " (" + knees["series"] + ")")


def _rules(knees: pd.DataFrame) -> alt.Chart:
    tips = [alt.Tooltip("label:N", title="knee"), alt.Tooltip("knee_reason:N", title="why")]
    rule = alt.Chart(knees).mark_rule(strokeDash=[6, 3], color="#444")
    return rule.encode(x="knee_per_s:Q", tooltip=tips)
