"""The distribution of every round trip of a latency run, from its histograms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from ..params import RTT, LatencyParams
from ..params.columns import Distribution
from ..results.statistics.histogram import LogHistogram
from .layout import HEIGHT, WIDTH, color, picked, selector, titled, x_axis

# The settings a latency point can differ by, in the order a legend names them.
_POINT_FIELDS = tuple(p.name for p in LatencyParams.sweep_fields())
_TITLES = {p.name: p.name.replace("_", " ") for p in LatencyParams.sweep_fields()}
# Which setting keeps its name in a legend when one decides another: the far end last.
_DECIDED_LAST = sorted(_POINT_FIELDS, key=lambda name: name == "peer")


def latency_cdf_chart(distributions: Sequence[Distribution]) -> alt.TopLevelMixin:
    """The distribution of every round trip: the fraction of round trips at or below
    each time (log), one line per point. The lines are told apart by the settings that
    vary between points, named by their values; what every point shares goes in the
    subtitle. The samples of a point are merged, across runs too (as the other charts
    pool a point's runs), so a panel's presses of Run never multiply the lines."""
    settings = [name for name in _POINT_FIELDS if any(name in entry for entry in distributions)]
    varying = _independent(
        [n for n in settings if len({str(e.get(n)) for e in distributions}) > 1], distributions
    )
    merged: dict[tuple[Any, ...], LogHistogram] = {}
    points: dict[tuple[Any, ...], dict[str, Any]] = {}
    for entry in distributions:
        key = tuple(entry.get(name) for name in settings)
        histogram = LogHistogram.from_json(entry["rtt_hist"])
        merged[key] = merged.get(key, LogHistogram()) + histogram
        points[key] = {name: entry.get(name) for name in settings}
    rows = []
    for key, histogram in merged.items():  # as measured: sweep order
        series = LatencyParams.words(points[key], varying) or "every point"
        rows += [{"series": series, "rtt_us": v, "fraction": f} for v, f in histogram.cdf()]
    frame = pd.DataFrame(rows)
    pick = selector("series", "pick_cdf")
    legend_title = ", ".join(_TITLES[name] for name in varying) or "point"
    chart = (
        alt.Chart(frame, width=WIDTH, height=HEIGHT)
        .mark_line(interpolate="step-after")
        .encode(
            x=x_axis(frame, "rtt_us", RTT.axis_title, ticks_at_values=False),
            y=alt.Y(
                "fraction:Q",
                title="fraction of round trips at or below",
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=color(frame, "series", legend_title),
            opacity=picked(pick),
            tooltip=[
                alt.Tooltip("series:N", title=legend_title),
                alt.Tooltip("rtt_us:Q", title=RTT.axis_title, format=",.1f"),
                alt.Tooltip("fraction:Q", title="fraction at or below", format=".4f"),
            ],
        )
        .add_params(pick)
    )
    shared = [n for n in settings if n not in varying and n in ("transport", "size", "copy")]
    note = LatencyParams.words(next(iter(points.values())), shared) if points else ""
    return titled(chart, "Every round trip: the distribution (CDF)", note)


def _independent(varying: list[str], entries: Sequence[Distribution]) -> list[str]:
    """The varying settings less those another one decides (the far end follows the
    transport when it is ``auto``), so a legend names what was chosen, once."""

    def decides(a: str, b: str) -> bool:
        seen: dict[str, str] = {}
        return all(seen.setdefault(str(e.get(a)), str(e.get(b))) == str(e.get(b)) for e in entries)

    kept: list[str] = []
    for name in sorted(varying, key=_DECIDED_LAST.index):
        if not any(decides(other, name) for other in kept):
            kept.append(name)
    return [name for name in varying if name in kept]
