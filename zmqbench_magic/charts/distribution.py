"""The distribution of every round trip of a latency run, from its histograms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd

from ..params import COPY
from ..params.units import format_size
from ..results.histogram import LogHistogram
from .figures import HEIGHT, WIDTH


def latency_cdf_chart(distributions: Sequence[Mapping[str, Any]]) -> alt.Chart:
    """The distribution of every round trip: the fraction of round trips at or below
    each time (log), one line per point (transport, size and copy mode)."""
    rows = []
    several_runs = len({d.get("run") for d in distributions}) > 1
    for entry in distributions:
        series = _point_label(entry)
        if several_runs:
            series = f"{entry.get('run')}: {series}"
        histogram = LogHistogram.from_json(entry["rtt_hist"])
        rows += [{"series": series, "rtt_us": v, "fraction": f} for v, f in histogram.cdf()]
    frame = pd.DataFrame(rows)
    return (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(interpolate="step-before")
        .encode(
            x=alt.X("rtt_us:Q", scale=alt.Scale(type="log"), title="round trip (µs)"),
            y=alt.Y(
                "fraction:Q",
                title="fraction of round trips at or below",
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=alt.Color("series:N", title="point"),
        )
        .properties(title="Every round trip: the distribution (CDF)")
    )


def _point_label(entry: Mapping[str, Any]) -> str:
    """``tcp 1k B copy``: a latency point in words, for a legend."""
    size = format_size(int(entry["size"]))
    return f"{entry['transport']} {size} B {COPY.label(entry['copy'])}"
