"""Pure functions from a tidy result DataFrame to an altair chart.

Each chart plots the median of the samples of each point (latency: each percentile
over every round trip of the point), with its interval as a bar, and says the
figure, the interval and its level, the number of samples and the point's settings
on hover; clicking a legend entry picks out its series. Axis titles come
from the parameter and metric declarations in :mod:`zmqbench_magic.params`; sizes,
axes and legends from :mod:`.layout`.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..params import CLIENTS, COLUMN_TITLES, COPY, IO_THREADS, KINDS, METRICS, RTT
from ..params.columns import Distribution
from ..results.statistics.analysis import python_tax, zero_copy_speedup
from .layout import (
    ROW_WIDTH,
    WIDTH,
    in_a_row,
    interval_note,
    log_y,
    plural,
    subtitle,
    titled,
    x_axis,
)
from .series import (
    POINT_COLUMNS,
    median_lines,
    mode_title,
    point_medians,
    point_percentiles,
    varying_label,
)

# Axes that draw two metrics of one unit.
_RATES_TITLE = f"messages per second ({METRICS['msgs_per_s'].unit})"
_ZMQ_WORDS = {"transport": "{}", "mode": "{} sends", "loop": "{} loop", "peer": "far end: {}"}


def _facet_width(frame: pd.DataFrame) -> int:
    return min(WIDTH, ROW_WIDTH // max(1, frame["transport"].nunique()))


def _by_transport(chart: alt.LayerChart, frame: pd.DataFrame) -> alt.TopLevelMixin:
    """Side-by-side panels when several transports were measured."""
    if frame["transport"].nunique() > 1:
        return chart.facet(column=alt.Column("transport:N", title=COLUMN_TITLES["transport"]))
    return chart


def throughput_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """The crossover chart: delivered and send-only msgs/s vs size, log-log, coloured by
    copy mode (pyzmq's "performance crossover" figure)."""
    frame = point_medians(df, ["msgs_per_s", "send_msgs_per_s"], POINT_COLUMNS)
    x = x_axis(frame, "size", sizes=True)
    # Send-only is NaN in a result whose samples did not time it: then the axis names
    # the one rate drawn.
    rates = frame["metric"].unique()
    y = log_y("value", rates[0] if len(rates) == 1 else _RATES_TITLE)
    lines = median_lines(
        frame,
        x,
        y,
        "mode",
        mode_title(frame),
        POINT_COLUMNS,
        ",.0f",
        _facet_width(frame),
        name="throughput",
    )
    sizes = plural(frame["size"].nunique(), "size")
    return titled(
        _by_transport(lines, frame),
        f"ZeroMQ PUSH/PULL throughput, {sizes} (median of samples)",
        subtitle(frame, ["transport", "mode", "loop", "peer"], _ZMQ_WORDS),
    )


def bandwidth_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Delivered bandwidth (Mbit/s) vs message size, coloured by copy mode."""
    frame = point_medians(df, ["mbit_per_s"], POINT_COLUMNS)
    y = log_y("value", METRICS["mbit_per_s"].axis_title)
    lines = median_lines(
        frame,
        x_axis(frame, "size", sizes=True),
        y,
        "mode",
        mode_title(frame),
        POINT_COLUMNS,
        ",.1f",
        _facet_width(frame),
        name="bandwidth",
    )
    return titled(
        _by_transport(lines, frame),
        "ZeroMQ delivered bandwidth",
        subtitle(frame, ["transport", "mode", "loop", "peer"], _ZMQ_WORDS),
    )


def cpu_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """CPU time per message (per round trip for latency) of each end vs size, coloured
    by copy mode: what moving a message costs the machine, not only how fast it goes."""
    frame = point_medians(df, ["send_cpu_us_per_msg", "recv_cpu_us_per_msg"], POINT_COLUMNS)
    y = log_y("value", f"CPU per message ({METRICS['send_cpu_us_per_msg'].unit})")
    lines = median_lines(
        frame,
        x_axis(frame, "size", sizes=True),
        y,
        "mode",
        mode_title(frame),
        POINT_COLUMNS,
        ",.2f",
        _facet_width(frame),
        name="cpu",
    )
    clocks = ", ".join(sorted(df["cpu_clock"].unique())) if "cpu_clock" in df else ""
    note = subtitle(frame, ["transport", "mode", "loop", "peer"], _ZMQ_WORDS)
    return titled(
        _by_transport(lines, frame),
        "CPU per message, each end",
        f"{note}; clock: {clocks}" if note else f"clock: {clocks}",
    )


def tax_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """The Python tax: how many times the Python loop costs the native one per size
    (throughput: native / Python msgs/s; latency: Python / native mean round trip of a
    sample, the statistic the summary and its verdicts use),
    coloured by copy mode, with the even line at 1 and each ratio's interval, from the
    per-round ratios where both loops ran in one run; the tooltip gives the verdict."""
    metric = KINDS[df["benchmark"].iloc[0]].tax_metric
    frame = python_tax(df, metric).rename(columns={"tax": "value"})
    frame = frame.sort_values("copy", ascending=False, kind="stable", ignore_index=True)
    frame = frame.assign(
        metric=f"Python tax, {COLUMN_TITLES[metric]}", mode=frame["copy"].map(COPY.label)
    )
    what = (
        "native / Python msgs/s" if metric == "msgs_per_s" else "Python / native, mean round trip"
    )
    y = log_y("value", f"Python tax ({what}, ratio)")
    lines = median_lines(
        frame,
        x_axis(frame, "size", sizes=True),
        y,
        "mode",
        mode_title(frame),
        ["size", "transport", "verdict", "n"],
        ".2f",
        _facet_width(frame),
        name="tax",
    )
    # On the same data as the lines, so the layer can be faceted by transport.
    even = alt.Chart(frame).mark_rule(strokeDash=[4, 4]).encode(y=alt.datum(1.0))
    chart = alt.LayerChart(layer=[lines, even])
    test = "throughput" if metric == "msgs_per_s" else "round trip"
    return titled(
        _by_transport(chart, frame),
        f"The Python tax on {test}",
        "; ".join(
            [
                "above the dashed line, the Python loop is slower than the native one",
                _paired_note(frame),
            ]
        ),
    )


def _paired_note(frame: pd.DataFrame) -> str:
    """``bars: 95-98% intervals of the per-round ratios (paired)``, or of the ratios
    between the two arms' samples where they ran in separate runs (a panel's presses
    of Run): the statistic the bars show is the one the verdicts used."""
    note = interval_note(frame.drop(columns="runs", errors="ignore"))
    if not note:
        return ""
    paired = frame["paired"] if "paired" in frame.columns else pd.Series([True])
    if paired.all():
        return f"{note} of the per-round ratios (paired)"
    if not paired.any():
        return f"{note} of the ratios between the arms' samples (unpaired: separate runs)"
    return f"{note}, paired by round where both arms ran in one run, else unpaired"


def speedup_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Zero-copy speed-up (zero-copy / copy delivered rate) vs size, with the break-even
    line at 1: where the line crosses it is the crossover size."""
    frame = zero_copy_speedup(df).assign(metric="zero-copy / copy")
    frame = frame.rename(columns={"speedup": "value"})
    frame["series"], title = varying_label(frame, ["transport", "loop"])
    x = x_axis(frame, "size", sizes=True)
    y = log_y("value", "zero-copy / copy, delivered (ratio)")
    chart = median_lines(
        frame, x, y, "series", title, ["size", "verdict", "n"], ".2f", name="speedup"
    )
    even = alt.Chart(pd.DataFrame({"value": [1.0]})).mark_rule(strokeDash=[4, 4])
    even = even.encode(y="value:Q")
    return titled(
        alt.layer(chart, even),
        "Relative speed of zero-copy sends",
        "; ".join(["above the dashed line, zero-copy is faster", _paired_note(frame)]),
    )


def latency_chart(
    df: pd.DataFrame, distributions: Sequence[Distribution] = ()
) -> alt.TopLevelMixin:
    """Round-trip latency percentiles (p50, p99) over every round trip of each point
    vs size, one colour per transport and copy mode (and number of clients); the bars
    resample the point's samples (:func:`..results.statistics.pooled.pooled_interval`)."""
    frame = point_percentiles(df, distributions, ["p50_us", "p99_us"], POINT_COLUMNS)
    same = ["transport", "mode", "loop", "peer", "offered"]
    if "clients" in frame.columns:
        same += [] if set(frame["clients"]) == {1} else ["clients"]  # one pair: as ever
        frame["clients"] = frame["clients"].map(CLIENTS.words)
    frame["series"], series_title = varying_label(
        frame, ["transport", "mode", "offered", "clients"]
    )
    y = log_y("value", RTT.axis_title)
    chart = median_lines(
        frame,
        x_axis(frame, "size", sizes=True),
        y,
        "series",
        series_title,
        POINT_COLUMNS,
        ",.1f",
        name="latency",
    )
    sizes = plural(frame["size"].nunique(), "size")
    return titled(
        chart,
        f"ZeroMQ {_round_trip_kind(frame)} round trip, {sizes}",
        subtitle(frame, same, _ZMQ_WORDS),
    )


def clients_chart(
    df: pd.DataFrame, distributions: Sequence[Distribution] = ()
) -> alt.TopLevelMixin:
    """Pooled percentiles, p50 to p99.9, against the number of clients on one server:
    how a round trip grows as the clients share it (libzmq #3830's question); a
    colour per percentile (per transport, size and copy mode too where those vary)."""
    frame = point_percentiles(
        df, distributions, ["p50_us", "p90_us", "p99_us", "p999_us"], POINT_COLUMNS
    )
    frame["series"], series_title = varying_label(frame, ["transport", "size_label", "mode"])
    chart = median_lines(
        frame,
        x_axis(frame, "clients", scale="log"),
        log_y("value", RTT.axis_title),
        "series",
        series_title,
        POINT_COLUMNS,
        ",.1f",
        name="clients",
    )
    return titled(
        chart,
        "ZeroMQ REQ clients on one ROUTER server: round trip, p50 to p99.9, vs clients",
        subtitle(frame, ["transport", "mode", "loop", "peer"], _ZMQ_WORDS),
    )


def _round_trip_kind(frame: pd.DataFrame) -> str:
    """REQ/REP for a closed loop; DEALER/ROUTER when a rate was offered."""
    rates = set(frame["rate"]) if "rate" in frame.columns else {0}
    return (
        "REQ/REP"
        if rates == {0}
        else "REQ/REP and DEALER/ROUTER"
        if 0 in rates
        else "DEALER/ROUTER"
    )


def pattern_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Patterns side by side: the aggregate delivered rate and the slowest peer's own
    rate against the number of peers (against the size where one N was run), one
    colour per pattern (and size or copy mode where those vary too)."""
    frame = point_medians(df, ["msgs_per_s", "slowest_peer_msgs_per_s"], POINT_COLUMNS)
    by_peers = frame["peers"].nunique() > 1
    x = x_axis(frame, "peers", scale="log") if by_peers else x_axis(frame, "size", sizes=True)
    frame["shape"] = frame["pattern"].astype(str)
    if by_peers and frame["size"].nunique() > 1:
        frame["shape"] += " " + frame["size_label"]
    if frame["mode"].nunique() > 1:
        frame["shape"] += " " + frame["mode"]
    if "io_threads" in frame.columns and frame["io_threads"].nunique() > 1:
        frame["shape"] += frame["io_threads"].map(lambda n: ", " + IO_THREADS.words(n))
    lines = median_lines(
        frame,
        x,
        log_y("value", _RATES_TITLE),
        "shape",
        COLUMN_TITLES["pattern"],
        POINT_COLUMNS,
        ",.0f",
        _facet_width(frame),
        name="patterns",
    )
    against = "peers" if by_peers else "message size"
    return titled(
        _by_transport(lines, frame),
        f"ZeroMQ patterns: delivered msgs/s, all peers and the slowest one, vs {against}",
        subtitle(frame, ["transport", "mode", "loop", "peer"], _ZMQ_WORDS),
    )


def throughput_default(
    df: pd.DataFrame, distributions: Sequence[Distribution] = ()
) -> alt.TopLevelMixin:
    """Throughput, with the speed-up beside it when both copy modes were measured;
    patterns and peers against each other when several were run; where drops begin
    when several offered rates, receivers' works or high-water marks were."""
    if any(c in df.columns and df[c].nunique() > 1 for c in ("rate", "work", "hwm")):
        from .pressure_chart import pressure_chart

        return pressure_chart(df)
    if any(c in df.columns and df[c].nunique() > 1 for c in ("pattern", "peers")):
        return pattern_chart(df)
    chart = throughput_chart(df)
    if df["copy"].nunique() == 2 and df["transport"].nunique() == 1:
        return in_a_row(chart, speedup_chart(df))
    return chart


def latency_default(
    df: pd.DataFrame, distributions: Sequence[Distribution] = ()
) -> alt.TopLevelMixin:
    """Latency percentiles, with the distribution of every round trip beside them (given
    the result's ``distributions``); against the offered rate when several were, and
    against the clients when several numbers of them were."""
    if "rate" in df.columns and df.loc[df["rate"] > 0, "rate"].nunique() > 1:
        from .offered_rate import load_chart

        return load_chart(df, distributions)
    if "clients" in df.columns and df["clients"].nunique() > 1:
        return clients_chart(df, distributions)
    if distributions:
        from .distribution import latency_cdf_chart

        return in_a_row(latency_chart(df, distributions), latency_cdf_chart(distributions))
    return latency_chart(df)
