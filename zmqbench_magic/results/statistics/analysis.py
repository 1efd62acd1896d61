"""Derived figures computed from a tidy result DataFrame (pure pandas, no plotting)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ...params import METRICS, TOLERANCE, LatencyParams
from ...params.units import format_size
from .compare import versus
from .stats import median_ci

# What identifies a point: the swept parameters (a pair is compared over all but one).
_SWEPT = [p.name for p in LatencyParams.sweep_fields()]


def medians(df: pd.DataFrame, metric: str, by: list[str]) -> pd.DataFrame:
    """The median of ``metric`` over the samples of each group in ``by``."""
    return df.groupby(by, sort=True)[metric].median().reset_index()


def medians_with_intervals(df: pd.DataFrame, metric: str, by: list[str]) -> pd.DataFrame:
    """The median of ``metric`` per group, with its interval (``ci_low``, ``ci_high``;
    order statistics, see :func:`..stats.median_ci`), the level that interval reaches
    (``ci_level``: 95% or more, less with under 6 samples) and the number of samples it
    was taken from (``samples``)."""
    rows = []
    # A setting that does not apply to some rows (NaN) must not drop them.
    for key, group in df.groupby(by, sort=True, dropna=False):
        values = group[metric].dropna().tolist()
        low, high, level = median_ci(values)
        median = float(pd.Series(values, dtype=float).median())
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                metric: median,
                "ci_low": low,
                "ci_high": high,
                "ci_level": level,
                "samples": len(values),
            }
        )
    return pd.DataFrame(rows, columns=[*by, metric, "ci_low", "ci_high", "ci_level", "samples"])


def zero_copy_speedup(
    df: pd.DataFrame, metric: str = "msgs_per_s", tolerance: float = TOLERANCE.default
) -> pd.DataFrame:
    """Zero-copy over copy, per transport and size, paired by round.

    Returns the pair columns, ``speedup`` (above 1: zero-copy is faster), its interval
    (``ci_low``, ``ci_high``, ``ci_level``) and the comparison's ``verdict`` (zero-copy
    ``faster``, ``slower``, ``same`` or ``inconclusive``) with its ``reason``. Points
    measured with only one of the two copy modes are left out.

    Example
    -------
    >>> zero_copy_speedup(result.df)[["size", "speedup", "verdict"]]  # doctest: +SKIP
    """
    table = paired_ratio(df, metric, "copy", baseline=True, candidate=False, tolerance=tolerance)
    return table.rename(columns={"ratio": "speedup"})


def python_tax(
    df: pd.DataFrame, metric: str = "msgs_per_s", tolerance: float = TOLERANCE.default
) -> pd.DataFrame:
    """How many times the Python loop costs the native one, per point, paired by
    round: native / Python for a rate (``msgs_per_s``), Python / native for a time
    (``sample_p50_us``), so above 1 always means Python is slower. Columns: the point's,
    ``tax``, ``ci_low``, ``ci_high``, ``ci_level``, and the ``verdict`` of native
    against Python (``faster``: native is faster); points measured with one loop only
    are left out.

    >>> python_tax(result.df, "sample_p50_us")[["size", "copy", "tax"]]  # doctest: +SKIP
    """
    if METRICS[metric].better == "lower":
        # Python / native time is the tax itself (its interval and reason speak of it);
        # the verdict stays native's: Python slower is native faster.
        table = paired_ratio(df, metric, "loop", "native", "python", tolerance=tolerance)
        table["verdict"] = table["verdict"].replace({"faster": "slower", "slower": "faster"})
    else:
        table = paired_ratio(df, metric, "loop", "python", "native", tolerance=tolerance)
    return table.rename(columns={"ratio": "tax"})


def paired_ratio(
    df: pd.DataFrame,
    metric: str,
    column: str,
    baseline: object,
    candidate: object,
    tolerance: float = TOLERANCE.default,
) -> pd.DataFrame:
    """``metric`` where ``column`` is ``candidate`` over where it is ``baseline``, per
    point of every other swept parameter, paired by round (:func:`.compare.versus`):
    ``ratio``, ``ci_low``, ``ci_high``, ``ci_level``, ``verdict`` and ``reason``."""
    if not {column, metric} <= set(df.columns) or df[column].nunique() < 2:
        return pd.DataFrame(columns=[*_SWEPT, "ratio", "ci_low", "ci_high", "verdict"])
    by = [c for c in _SWEPT if c in df.columns and c != column]
    table = versus(df, column, baseline, candidate, metric, by, tolerance)
    keep = [*by, "ratio", "ci_low", "ci_high", "ci_level", "n", "verdict", "reason", "paired"]
    return table[keep]


@dataclass(frozen=True)
class Threshold:
    """Where a figure crosses its break-even level, from the data and its uncertainty.

    ``low`` and ``high`` are the two measured values of the x axis (sizes, durations)
    between which it crosses; ``estimate`` is interpolated on a log scale between
    their medians, or None when the medians do not bracket the level (both above it, as
    when the smaller point is not established though its median is ahead). ``stable``:
    every larger measured point is above the level with 95% confidence; otherwise there
    is no threshold to report and ``message`` says why. ``where``: the claim in a few
    words (``between 64k B and 256k B``, ``none: ...``), the one phrase a table and a
    conclusion both print, so they cannot disagree.
    """

    estimate: float | None
    low: float | None
    high: float | None
    stable: bool
    message: str
    where: str = ""


@dataclass(frozen=True)
class _Axis:
    """What a threshold is about, in words: ``what`` crosses ``level`` along ``unit``."""

    column: str
    what: str
    unit: str
    level: float
    level_words: str
    spell: Callable[[float], str]
    log_y: bool = True  # ratios: log; efficiencies: linear


def _threshold(table: pd.DataFrame, axis: _Axis) -> Threshold:
    """``table``: one row per x value, sorted, with ``median`` and ``called`` (above the
    level with 95% confidence). The estimate is interpolated on a log x axis, and a
    log or linear y axis."""
    if table.empty:
        return Threshold(None, None, None, False, f"no {axis.what}: nothing to compare", "none")
    above = table["called"].tolist()
    xs, medians = table[axis.column].tolist(), table["median"].tolist()
    if not above[-1]:
        message = (
            f"no stable {axis.what} in the measured range: at the largest {axis.unit} "
            f"({axis.spell(xs[-1])}), that {axis.level_words} is not established with 95% "
            "confidence"
        )
        return Threshold(None, None, None, False, message, "none in the measured range")
    first = len(above)
    while first > 0 and above[first - 1]:
        first -= 1
    if first == 0:
        message = (
            f"{axis.level_words} at every measured {axis.unit}, from {axis.spell(xs[0])}: "
            f"the {axis.what} lies below the measured range"
        )
        return Threshold(None, None, xs[0], False, message, f"below {axis.spell(xs[0])}")
    low, high = xs[first - 1], xs[first]
    below, over = medians[first - 1], medians[first]
    estimate = None
    if below < axis.level <= over and low > 0:
        scale = math.log if axis.log_y else float
        fraction = (scale(axis.level) - scale(below)) / (scale(over) - scale(below))
        estimate = math.exp(math.log(low) + fraction * (math.log(high) - math.log(low)))
    where = f"between {axis.spell(low)} and {axis.spell(high)}"
    if estimate is not None:
        where += f" (about {axis.spell(estimate)}, interpolated)"
    message = (
        f"{axis.what} {where}: {axis.level_words} with 95% confidence from "
        f"{axis.spell(high)} up, at every larger {axis.unit} measured"
    )
    return Threshold(estimate, low, high, True, message, where)


_CROSSOVER = _Axis(
    "size",
    "zero-copy crossover",
    "size",
    1.0,
    "zero-copy is faster",
    lambda v: f"{format_size(int(v))} B",
)
_HALF_EFFICIENCY = _Axis(
    "duration",
    "map efficiency threshold",
    "task duration",
    0.5,
    "map is over 50% efficient",
    lambda v: f"{v * 1e3:.3g} ms",
    log_y=False,
)


def zero_copy_threshold(
    df: pd.DataFrame, metric: str = "msgs_per_s", tolerance: float = TOLERANCE.default
) -> Threshold:
    """The message size from which zero-copy is called faster than copy at every
    larger measured size (the paired comparison's verdicts, Holm-adjusted across the
    sizes). One transport, peer and copy threshold at a time: filter ``df`` first."""
    by = [c for c in _SWEPT if c in df.columns and c not in ("size", "copy")]
    if len(df[by].drop_duplicates()) > 1:
        msg = f"one {'/'.join(by)} at a time, got {len(df[by].drop_duplicates())} combinations"
        raise ValueError(msg)
    table = zero_copy_speedup(df, metric, tolerance)
    called = table["verdict"] == "faster"
    rows = pd.DataFrame({"size": table["size"], "median": table["speedup"], "called": called})
    rows = rows.sort_values("size", ignore_index=True)
    return _threshold(rows, _CROSSOVER)


def crossover_size(df: pd.DataFrame, metric: str = "msgs_per_s") -> float | None:
    """The zero-copy crossover size (B), or None when the data hold no stable one (see
    :func:`zero_copy_threshold` for the interval and the reason)."""
    found = zero_copy_threshold(df, metric)
    return found.estimate if found.stable else None


def map_efficiency_threshold(df: pd.DataFrame, level: float = 0.5) -> Threshold:
    """The task duration (s) from which ``map`` is at least ``level`` efficient at every
    longer measured duration, with 95% confidence (order-statistic interval of the
    median). One engine count / view / scheme at a time: filter ``df`` first."""
    rows = []
    for duration, group in df[df["duration"] > 0].groupby("duration", sort=True):
        values = group["efficiency"].dropna().tolist()
        low, _, _ = median_ci(values)
        rows.append(
            {
                "duration": duration,
                "median": float(pd.Series(values).median()),
                "called": low > level,
            }
        )
    axis = dataclasses.replace(
        _HALF_EFFICIENCY, level=level, level_words=f"map is over {level:.0%} efficient"
    )
    return _threshold(pd.DataFrame(rows), axis)


def half_efficiency_duration(df: pd.DataFrame) -> float | None:
    """The task duration (s) at which ``map`` reaches 50% efficiency, or None when the
    data hold no stable one (see :func:`map_efficiency_threshold`)."""
    found = map_efficiency_threshold(df)
    return found.estimate if found.stable else None
