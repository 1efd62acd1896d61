"""The distribution of every round trip of a latency run, from its histograms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd

from ..params import COPY
from ..params.units import format_size
from ..results.histogram import LogHistogram
from .layout import HEIGHT, WIDTH, color, picked, selector, titled, x_axis


def latency_cdf_chart(distributions: Sequence[Mapping[str, Any]]) -> alt.TopLevelMixin:
    """The distribution of every round trip: the fraction of round trips at or below
    each time (log), one line per point (transport, size and copy mode)."""
    rows = []
    several_runs = len({d.get("run") for d in distributions}) > 1
    # One line per point (and run): the samples' histograms merged.
    merged: dict[tuple[Any, ...], LogHistogram] = {}
    for entry in distributions:
        key = (str(entry.get("run")), entry["transport"], int(entry["size"]), not entry["copy"])
        merged[key] = merged.get(key, LogHistogram()) + LogHistogram.from_json(entry["rtt_hist"])
    for (run, transport, size, zero_copy), histogram in sorted(merged.items()):
        series = _point_label({"transport": transport, "size": size, "copy": not zero_copy})
        if several_runs:
            series = f"{run}: {series}"
        rows += [{"series": series, "rtt_us": v, "fraction": f} for v, f in histogram.cdf()]
    frame = pd.DataFrame(rows)
    pick = selector("series", "pick_cdf")
    entries = frame["series"].nunique()
    chart = (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(interpolate="step-after")
        .encode(
            x=x_axis(frame, "rtt_us", "round trip (µs)", ticks_at_values=False),
            y=alt.Y(
                "fraction:Q",
                title="fraction of round trips at or below",
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=color(frame, "series", "point"),
            opacity=picked(pick),
            tooltip=[
                alt.Tooltip("series:N", title="point"),
                alt.Tooltip("rtt_us:Q", title="round trip (µs)", format=",.1f"),
                alt.Tooltip("fraction:Q", title="fraction at or below", format=".4f"),
            ],
        )
        .add_params(pick)
    )
    note = frame["series"].iloc[0] if entries == 1 else ""
    return titled(chart, "Every round trip: the distribution (CDF)", note)


def _point_label(entry: Mapping[str, Any]) -> str:
    """``tcp 1k B copy``: a latency point in words, for a legend."""
    size = format_size(int(entry["size"]))
    return f"{entry['transport']} {size} B {COPY.label(entry['copy'])}"
