"""Two runs, point by point: is the candidate faster, slower, or the same?

For each point the two runs share, the headline metric's samples of each side give
the ratio of medians (candidate / baseline) with a bootstrap 95% interval, and a
two-sided Mann-Whitney U test gives the p-value. The verdict follows the metric's
direction (msgs/s: higher is faster; a round trip: lower is faster), and is ``same``
unless the difference is significant (p < 0.05) *and* the interval excludes 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from ..params import METRICS
from .stats import mann_whitney_p, ratio_ci

if TYPE_CHECKING:
    from .resultset import ResultSet

ALPHA = 0.05


def compare(
    baseline: ResultSet,
    candidate: ResultSet,
    match: Sequence[str] | None = None,
    metric: str | None = None,
    tolerance: float = 0.0,
) -> pd.DataFrame:
    """One row per point the two runs share.

    Parameters
    ----------
    match : the columns that pair points; default every point column the two share.
        ``match=["size"]`` pairs on size alone, so tcp can be compared with inproc
        (``baseline.df`` filtered to tcp, ``candidate.df`` to inproc, say).
    metric : the metric compared; default the benchmark's headline (msgs/s,
        mean round trip, tasks/s).
    tolerance : differences smaller than this (0.05: 5%) are ``same`` even when
        significant, as pyperf's ``--min-speed``: on a machine whose speed drifts
        between runs, a significant 3% is not a finding.

    ``table.attrs["shift"]`` says when every point moved the same way by a similar
    ratio: the signature of the machine changing speed between the runs, not of
    what was measured.

    Returns the match columns, ``baseline`` and ``candidate`` medians, their sample
    counts, ``ratio`` (candidate / baseline) with ``ci_low``/``ci_high``, ``p_value``
    and ``verdict`` (``faster``, ``slower`` or ``same``).

    Example
    -------
    >>> load("monday.json").compare(load("tuesday.json"))  # doctest: +SKIP
    """
    if candidate.benchmark != baseline.benchmark:
        msg = f"cannot compare {candidate.benchmark} results with {baseline.benchmark} results"
        raise ValueError(msg)
    metric = metric or baseline.metric_names[0]
    a, b = baseline.df, candidate.df
    if metric not in a.columns or metric not in b.columns:
        msg = f"metric {metric!r} is not in both results; choose one of {list(a.columns)}"
        raise ValueError(msg)
    shared = [c for c in baseline.point_columns if c in a.columns and c in b.columns]
    columns = list(match) if match is not None else shared
    missing = [c for c in columns if c not in a.columns or c not in b.columns]
    if missing:
        msg = f"match: {', '.join(missing)} not in both results; choose from {', '.join(shared)}"
        raise ValueError(msg)
    better = METRICS[metric].better if metric in METRICS else ""
    rows = []
    for key, left in a.groupby(columns, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        right = b
        for column, value in zip(columns, key, strict=True):
            right = right[right[column] == value]
        if right.empty:
            continue
        point = dict(zip(columns, key, strict=True))
        rows.append(_compare_point(point, left, right, metric, better, tolerance))
    table = pd.DataFrame(rows, columns=[*columns, *RESULT_COLUMNS])
    table.attrs["shift"] = common_shift(table)
    return table


def common_shift(table: pd.DataFrame) -> str:
    """A note when all of at least 4 points moved the same way, by ratios within ±10% of
    their median: the whole machine, not the code, probably changed between the runs."""
    ratios = table["ratio"].dropna()
    if len(ratios) < 4:
        return ""
    median = float(ratios.median())
    together = ((ratios > 1).all() or (ratios < 1).all()) and (
        (ratios / median - 1).abs() <= 0.10
    ).all()
    if not together or abs(median - 1) < 0.03:
        return ""
    return (
        f"every point moved the same way, by about {median - 1:+.0%}: the machine's speed "
        "probably changed between the runs; measure both in one run, or on a quiet machine"
    )


RESULT_COLUMNS = [
    "metric", "baseline", "candidate", "n_baseline", "n_candidate",
    "ratio", "ci_low", "ci_high", "p_value", "verdict",
]  # fmt: skip


def _compare_point(
    key: dict[str, object],
    left: pd.DataFrame,
    right: pd.DataFrame,
    metric: str,
    better: str,
    tolerance: float,
) -> dict[str, object]:
    x, y = left[metric].dropna().tolist(), right[metric].dropna().tolist()
    ratio, low, high = ratio_ci(x, y)
    p_value = mann_whitney_p(x, y)
    return {
        **key,
        "metric": metric,
        "baseline": float(pd.Series(x).median()),
        "candidate": float(pd.Series(y).median()),
        "n_baseline": len(x),
        "n_candidate": len(y),
        "ratio": ratio,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "verdict": verdict(ratio, low, high, p_value, better, tolerance),
    }


def verdict(
    ratio: float, low: float, high: float, p_value: float, better: str, tolerance: float = 0.0
) -> str:
    """``faster``/``slower`` only when the difference is significant, the interval of
    the ratio leaves 1 out and the ratio is more than ``tolerance`` from 1; ``same``
    otherwise (and for a metric with no direction).

    >>> verdict(1.3, 1.1, 1.5, 0.01, "higher"), verdict(1.3, 0.9, 1.5, 0.01, "higher")
    ('faster', 'same')
    >>> verdict(1.04, 1.02, 1.06, 0.01, "higher", tolerance=0.05)
    'same'
    """
    significant = p_value < ALPHA and (low > 1 or high < 1) and abs(ratio - 1) > tolerance
    if not significant or not better:
        return "same"
    up = ratio > 1
    return "faster" if up == (better == "higher") else "slower"


def point_columns(table: pd.DataFrame) -> list[str]:
    """The columns of a comparison that say which point a row is (the match columns)."""
    return [c for c in table.columns if c not in RESULT_COLUMNS]


__all__ = ["ALPHA", "RESULT_COLUMNS", "compare", "point_columns", "verdict"]
