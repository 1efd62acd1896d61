"""Results in words: one %timeit-style line per point of a summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..params import COPY
from ..params.units import format_duration, format_size


def _flood_line(point: Mapping[str, Any], samples: str) -> str:
    def has(key: str) -> bool:  # the column exists and this test filled it
        return not pd.isna(point.get(key, float("nan")))

    where = (
        f"{point['tasks']:>6} tasks {point['engines']:>2} engines {point['view']}/{point['scheme']}"
    )
    if has("size"):
        where += f" {format_size(int(point['size']))} B"
    if has("duration"):
        where += f" {format_duration(point['duration'])}"
    extra = ""
    if has("mbit_per_s"):
        extra = f", {point['mbit_per_s']:,.0f} Mbit/s"
    if has("efficiency"):
        extra = f", efficiency {point['efficiency']:.0%}"
    if has("task_s"):
        extra = (
            f", task {point['task_s'] * 1e3:,.2f} ms, overhead "
            f"{point['overhead_fraction']:.0%} of the round trip"
        )
    return (
        f"{where}: sent {point['sent_s'] * 1e3:,.1f} ms, round trip "
        f"{point['roundtrip_s'] * 1e3:,.1f} ms, {point['tasks_per_s']:,.0f} tasks/s"
        f"{extra} ({samples})"
    )


def summary_line(benchmark: str, point: Mapping[str, Any]) -> str:
    """One %timeit-style line for one point of a summary."""
    samples = f"median of {point['samples']}"
    if benchmark == "flood":
        return _flood_line(point, samples)
    where = (
        f"{point['transport']:<6} {format_size(int(point['size'])):>5} B "
        f"{COPY.label(point['copy']):<9}"
    )
    if benchmark == "thr":
        rate = point["msgs_per_s"]
        gbit = point["mbit_per_s"] / 1000
        return (
            f"{where}: {rate:>12,.0f} msgs/s delivered, {point['send_msgs_per_s']:>12,.0f} "
            f"sent, {gbit:8.3f} Gbit/s ({samples}, spread {point['spread']:.0%})"
        )
    return (
        f"{where}: round trip {point['rtt_us']:9.1f} µs mean, p50 {point['p50_us']:.1f}, "
        f"p99 {point['p99_us']:.1f}, max {point['max_us']:.1f} µs ({samples})"
    )
