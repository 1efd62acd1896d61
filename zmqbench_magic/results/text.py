"""Results in words: one %timeit-style line per point of a summary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..params import BENCHMARKS, COPY
from ..params.flood import STAGE_COLUMNS, STAGES
from ..params.units import format_duration, format_rate, format_size
from .compare import point_columns

if TYPE_CHECKING:
    from .resultset import ResultSet


def _flood_line(point: Mapping[str, Any], samples: str) -> str:
    def has(key: str) -> bool:  # the column exists and this test filled it
        return not pd.isna(point.get(key, float("nan")))

    where = (
        f"{point['tasks']:>6} tasks {point['engines']:>2} engines {point['view']}/{point['scheme']}"
    )
    if point.get("backend") not in (None, "ipyparallel"):
        where = f"{point['tasks']:>6} tasks {point['engines']:>2} workers {point['backend']}"
    if has("chunksize") and point["chunksize"] != 1:
        where += f" chunks of {int(point['chunksize'])}"
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
    if has("queue_s"):
        stages = " / ".join(f"{point[column] * 1e3:,.3g}" for column in STAGE_COLUMNS)
        extra += f"; per task {stages} ms ({'/'.join(STAGES)})"
    return (
        f"{where}: sent {point['sent_s'] * 1e3:,.1f} ms, round trip "
        f"{point['roundtrip_s'] * 1e3:,.1f} ms, {point['tasks_per_s']:,.0f} tasks/s"
        f"{extra} ({samples})"
    )


def figure(value: float) -> str:
    """A measured figure with the digits it has: ``1,234,567``, ``45.6``, ``0.312``;
    ``n/a`` where it was not measured."""
    if pd.isna(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.1f}".rstrip("0").rstrip(".")


def _samples(point: Mapping[str, Any], scale: float = 1.0) -> str:
    """``median of 10, 98% CI 1.21M to 1.25M``: how many samples and how sure, at the
    level the interval really reaches."""
    level = point.get("ci_level", 0)
    if pd.isna(point.get("ci_low", float("nan"))) or point["n"] < 2:
        return f"median of {point['n']}"
    low, high = figure(point["ci_low"] * scale), figure(point["ci_high"] * scale)
    return f"median of {point['n']}, {level:.0%} CI {low} to {high}"


def _pooled(point: Mapping[str, Any]) -> str:
    """``every round trip of 10 samples; a sample's mean: 98% CI 80 to 85``."""
    samples = f"every round trip of {point['n']} sample{'s' if point['n'] != 1 else ''}"
    if pd.isna(point.get("ci_low", float("nan"))) or point["n"] < 2:
        return samples
    low, high = figure(point["ci_low"]), figure(point["ci_high"])
    return f"{samples}; a sample's mean: {point['ci_level']:.0%} CI {low} to {high}"


def summary_line(benchmark: str, point: Mapping[str, Any]) -> str:
    """One %timeit-style line for one point of a summary (prefixed by its run when a
    result joins several)."""
    run = f"[{point['run']}] " if "run" in point else ""
    if benchmark == "flood":
        return run + _flood_line(point, _samples(point))
    where = (
        f"{point['transport']:<6} {format_size(int(point['size'])):>5} B "
        f"{COPY.label(point['copy']):<9}"
    )
    if point.get("loop", "python") != "python":
        where += f" {point['loop']} loop"
    if point.get("python", "kernel") != "kernel":
        where += f" python {point['python']}"
    if benchmark == "thr":
        return (
            f"{run}{where}: {figure(point['msgs_per_s']):>10} msgs/s delivered, "
            f"{figure(point['send_msgs_per_s']):>10} sent, "
            f"{figure(point['mbit_per_s'] / 1000)} Gbit/s ({_samples(point)})"
        )
    rate = point.get("rate", 0)
    if rate:
        where += f" at {format_rate(rate)} msgs/s"
    return (
        f"{run}{where}: round trip {figure(point.get('mean_us', math.nan)):>7} µs mean, "
        f"p50 {figure(point['p50_us'])}, p99 {figure(point['p99_us'])}, "
        f"p99.9 {figure(point['p999_us'])}, max {figure(point['max_us'])} µs"
        f"{_achieved(point) if rate else ''} ({_pooled(point)})"
    )


def _achieved(point: Mapping[str, Any]) -> str:
    """``, achieved 9,998 msgs/s``, and says so when the offered rate was not held."""
    held = "" if point.get("held", True) else " (rate NOT held)"
    return f", achieved {figure(point['achieved_per_s'])} msgs/s{held}"


def comparison_lines(table: pd.DataFrame) -> list[str]:
    """One line per compared point, then what the table as a whole says::

    size=1024: msgs_per_s 1,000 -> 1,120, ratio 1.12 (95% CI 1.05 to 1.20, n=10):
      faster
    size=64: ... ratio 1.03 (75% CI 0.97 to 1.09, n=3): inconclusive: need at least
      6 pairs of samples (rounds): ...
    """
    if table.empty:
        return ["no point is in both results: check --match"]
    keys = point_columns(table)
    lines = []
    for row in table.to_dict("records"):
        where = " ".join(f"{k}={row[k]}" for k in keys) or "all"
        verdict = row["verdict"] + (f": {row['reason']}" if row.get("reason") else "")
        lines.append(
            f"{where}: {row['metric']} {figure(row['baseline'])} -> {figure(row['candidate'])}, "
            f"ratio {row['ratio']:.3f} ({row['ci_level']:.0%} CI {row['ci_low']:.3f} to "
            f"{row['ci_high']:.3f}, n={row['n']}): {verdict}"
        )
    tolerance = table.attrs.get("tolerance")
    if tolerance is not None:
        how = "paired by round" if table["paired"].all() else "unpaired (separate runs)"
        band = f"±{tolerance:.1%}"
        if "tolerance" in table and table["tolerance"].nunique() > 1:
            band = f"each point's tolerance (±{table['tolerance'].min():.1%} to {band})"
        lines.append(
            f"{how}; faster/slower: beyond {band} after Holm's adjustment across "
            f"{len(table)} point(s); same: the whole interval within it"
        )
    if table.attrs.get("noise_floor"):
        lines.append(f"tolerance: {table.attrs['noise_floor']}")
    if table.attrs.get("shift"):
        lines.append(f"note: {table.attrs['shift']}")
    if table.attrs.get("unlike"):
        lines.append(
            f"note: the two runs differ in more than what was compared: "
            f"{'; '.join(table.attrs['unlike'])}; every ratio includes these"
        )
    return lines


# Two-arm parameters whose comparison a run states on its own when it measured both
# arms: (column, baseline, candidate, words).
_ARMS = (
    ("copy", True, False, "zero-copy vs copy"),
    ("loop", "python", "native", "native loop vs python"),
)


def verdict_lines(result: ResultSet) -> list[str]:
    """For each two-arm parameter measured both ways, the paired verdicts in one line:
    ``zero-copy vs copy (paired, ±1.0%): faster at 64k, 1M; inconclusive at 100 B ...``."""
    df = result.df
    words_of = BENCHMARKS[result.benchmark].words
    lines = []
    arms = list(_ARMS)
    if "python" in df.columns and df["python"].nunique() == 2:
        # Environments side by side: the first named is the baseline.
        old, new = df["python"].unique().tolist()
        arms.append(("python", old, new, f"python {new} vs {old}"))
    for column, baseline, candidate, words in arms:
        if column not in df.columns or not {baseline, candidate} <= set(df[column]):
            continue
        table = result.versus(column, baseline, candidate)
        if table.empty:
            continue
        keys = [c for c in point_columns(table) if table[c].nunique() > 1]
        labels = [words_of(dict(row)) for row in table[keys].to_dict("records")] if keys else None
        parts = []
        for verdict, rows in table.groupby("verdict", sort=False):
            where = ", ".join(labels[i] for i in rows.index) if labels else "every point"
            part = f"{verdict} at {where}"
            if verdict == "inconclusive":
                part += f" ({rows['reason'].mode().iloc[0]})"
            parts.append(part)
        metric = table["metric"].iloc[0]
        lines.append(
            f"{words}, {metric} paired by round (±{table.attrs['tolerance']:.1%} tolerance): "
            + "; ".join(parts)
        )
    return lines
