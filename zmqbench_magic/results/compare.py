"""Is the candidate faster, slower, the same, or can the data not tell? Point by point.

Two kinds of comparison give the same table:

- :func:`versus`, within one run: two arms of a swept parameter (copy and zero-copy,
  python and native, tcp and ipc) measured in the same rounds. Each round's ratio
  cancels what the machine was doing in that round (paired: Wilcoxon's signed-rank
  test). This is the comparison to trust.
- :func:`compare`, across two runs (two files, two days, two machines): nothing is
  shared, so the samples of each side are compared as they are (unpaired: the
  Mann-Whitney test), and a change in the machine's own speed between the runs looks
  exactly like a change in what was measured.

The verdicts and their rules are in :mod:`.verdict`; the tests in :mod:`.stats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..params import METRICS, TOLERANCE
from .stats import CONFIDENCE, RatioTest, paired_ratio_test, unpaired_ratio_test
from .verdict import judge

if TYPE_CHECKING:
    from .resultset import ResultSet

RESULT_COLUMNS = [
    "metric", "baseline", "candidate", "n_baseline", "n_candidate", "n",
    "ratio", "ci_low", "ci_high", "ci_level", "p_value", "p_adjusted",
    "verdict", "reason", "paired",
]  # fmt: skip
# Columns that say which round a sample was taken in: samples of two arms with the
# same values were measured side by side (a flood's blocks of one cluster size run
# their rounds one block after the other, so the block is part of the round).
ROUND_COLUMNS = ("run", "block", "sample")


def compare(
    baseline: ResultSet,
    candidate: ResultSet,
    match: Sequence[str] | None = None,
    metric: str | None = None,
    tolerance: float = TOLERANCE.default,
) -> pd.DataFrame:
    """Two runs, one row per point they share (unpaired: see the module's note).

    Parameters
    ----------
    match
        The columns that pair points; default every point column the two share.
        ``match=["size"]`` pairs on size alone, so tcp can be compared with inproc
        (``baseline.df`` filtered to tcp, ``candidate.df`` to inproc, say).
    metric
        The metric compared; default the benchmark's headline (msgs/s, mean round
        trip, tasks/s).
    tolerance
        The band ``1 ± tolerance`` within which a difference is not called (as
        pyperf's ``--min-speed``): on a machine whose speed drifts between runs by 2%,
        a 2% difference is not a finding.

    Returns
    -------
    pandas.DataFrame
        The match columns and :data:`RESULT_COLUMNS`: the medians of each side and
        their sample counts, ``ratio`` (candidate / baseline, Hodges-Lehmann) with its
        interval (``ci_low``, ``ci_high`` at ``ci_level``), ``p_value`` (of the ratio lying
        beyond the tolerance), ``p_adjusted`` (Holm, across the points), ``verdict``
        (``faster``, ``slower``, ``same`` or ``inconclusive``) and ``reason``. ``attrs``
        hold ``shift`` (a note when every point moved alike), ``tolerance`` and ``level``.

    Example
    -------
    >>> load("monday.json").compare(load("tuesday.json"))  # doctest: +SKIP
    """
    if candidate.benchmark != baseline.benchmark:
        msg = f"cannot compare {candidate.benchmark} results with {baseline.benchmark} results"
        raise ValueError(msg)
    a, b = baseline.df, candidate.df
    metric = _checked_metric(metric or baseline.metric_names[0], a, b)
    shared = [c for c in baseline.point_columns if c in a.columns and c in b.columns]
    columns = list(match) if match is not None else shared
    missing = [c for c in columns if c not in a.columns or c not in b.columns]
    if missing:
        msg = f"match: {', '.join(missing)} not in both results; choose from {', '.join(shared)}"
        raise ValueError(msg)
    points, tests = [], []
    for key, left in a.groupby(columns, sort=True, dropna=False):
        point = dict(zip(columns, key if isinstance(key, tuple) else (key,), strict=True))
        right = b.loc[_matching(b, point)]
        if right.empty:
            continue
        x, y = _positive(left[metric]), _positive(right[metric])
        points.append({**point, **_sides(x, y)})
        tests.append(unpaired_ratio_test(x, y, tolerance))
    return _table(points, tests, columns, metric, tolerance, paired=False)


def versus(
    df: pd.DataFrame,
    column: str,
    baseline: Any,
    candidate: Any,
    metric: str,
    by: Sequence[str],
    tolerance: float = TOLERANCE.default,
) -> pd.DataFrame:
    """Within one run: ``column == candidate`` against ``column == baseline`` at each
    point of ``by``, paired by round (see :meth:`ResultSet.versus`, which picks ``by``).

    Arms that were not measured in the same rounds (a flood's two cluster sizes) are
    compared unpaired, and their rows say so (``paired`` False).
    """
    if column not in df.columns:
        msg = f"{column!r} is not a column of this result; choose one of {list(by)}"
        raise ValueError(msg)
    _check_arms(df[column], baseline, candidate, column)
    _checked_metric(metric, df)
    rounds = [c for c in ROUND_COLUMNS if c in df.columns]
    by = [c for c in by if c in df.columns and c != column]
    points, tests = [], []
    groups = df.groupby(by, sort=True, dropna=False) if by else [((), df)]
    for key, group in groups:
        point = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        base = group.loc[group[column] == baseline]
        cand = group.loc[group[column] == candidate]
        if base[metric].dropna().empty or cand[metric].dropna().empty:
            continue
        pairs = pd.DataFrame()
        if rounds:  # rows without their rounds (a frame built by hand) cannot be paired
            pairs = pd.concat([base.set_index(rounds)[metric], cand.set_index(rounds)[metric]],
                              axis=1, join="inner", keys=["b", "c"])  # fmt: skip
            pairs = pairs[(pairs > 0).all(axis=1)]
        if len(pairs) >= 2:
            x, y = pairs["b"].tolist(), pairs["c"].tolist()
            tests.append(paired_ratio_test(x, y, tolerance))
        else:  # not measured in the same rounds
            x, y = _positive(base[metric]), _positive(cand[metric])
            tests.append(unpaired_ratio_test(x, y, tolerance))
        points.append({**point, **_sides(x, y)})
    table = _table(points, tests, by, metric, tolerance, paired=all(t.paired for t in tests))
    table.attrs |= {"column": column, "arms": (baseline, candidate)}
    return table


def _matching(frame: pd.DataFrame, point: dict[str, Any]) -> pd.Series:
    """Rows of ``frame`` at ``point`` (a setting that does not apply, NaN, matches NaN)."""
    mask = pd.Series(True, index=frame.index)
    for column, value in point.items():
        mask &= frame[column].isna() if pd.isna(value) else frame[column] == value
    return mask


def _check_arms(values: pd.Series, baseline: Any, candidate: Any, column: str) -> None:
    present = list(dict.fromkeys(values.dropna().tolist()))
    absent = [arm for arm in (baseline, candidate) if arm not in present]
    if absent:
        msg = (
            f"{column}: {', '.join(map(repr, absent))} not measured in this result; "
            f"it has {', '.join(map(repr, present))}"
        )
        raise ValueError(msg)


def _checked_metric(metric: str, *frames: pd.DataFrame) -> str:
    for frame in frames:
        if metric not in frame.columns:
            metrics = [c for c in frame.columns if c in METRICS]
            msg = f"metric {metric!r} is not in the result; choose one of {metrics}"
            raise ValueError(msg)
    return metric


def _positive(values: pd.Series) -> list[float]:
    clean = values.dropna()
    return clean[clean > 0].tolist()


def _sides(x: list[float], y: list[float]) -> dict[str, Any]:
    return {
        "baseline": float(pd.Series(x, dtype=float).median()),
        "candidate": float(pd.Series(y, dtype=float).median()),
        "n_baseline": len(x),
        "n_candidate": len(y),
    }


def _table(
    points: list[dict[str, Any]],
    tests: list[RatioTest],
    columns: list[str],
    metric: str,
    tolerance: float,
    paired: bool,
) -> pd.DataFrame:
    better = METRICS[metric].better if metric in METRICS else ""
    verdicts = judge(tests, better, tolerance)
    rows = [
        {
            **point, "metric": metric, "n": test.n, "ratio": test.ratio,
            "ci_low": test.low, "ci_high": test.high, "ci_level": test.level,
            "p_value": test.p_value, "p_adjusted": verdict.p_adjusted,
            "verdict": verdict.word, "reason": verdict.reason, "paired": test.paired,
        }
        for point, test, verdict in zip(points, tests, verdicts, strict=True)
    ]  # fmt: skip
    table = pd.DataFrame(rows, columns=[*columns, *RESULT_COLUMNS])
    table.attrs = {"tolerance": tolerance, "level": CONFIDENCE, "metric": metric}
    table.attrs["shift"] = common_shift(table, tolerance, paired)
    return table


def common_shift(table: pd.DataFrame, tolerance: float = 0.0, paired: bool = False) -> str:
    """A note when all of at least 4 points moved the same way, by ratios within ±10%
    of their median and beyond the tolerance: one shift common to the sweep, reported
    as what was found, beside the verdicts it sums up. Across separate runs it adds
    that a machine whose speed changed between the runs looks the same."""
    ratios = table["ratio"].dropna()
    if len(ratios) < 4:
        return ""
    median = float(ratios.median())
    together = ((ratios > 1).all() or (ratios < 1).all()) and (
        (ratios / median - 1).abs() <= 0.10
    ).all()
    if not together or abs(median - 1) <= tolerance:
        return ""
    counts = table["verdict"].value_counts()
    called = ", ".join(f"{count} {word}" for word, count in counts.items())
    note = (
        f"every point moved the same way, by about {median - 1:+.1%} (verdicts: {called}, "
        f"of {len(table)} points)"
    )
    if paired:
        return note
    return (
        f"{note}; across separate runs a change in the machine's own speed looks the "
        "same: to tell the two apart, measure both arms in one run and compare them "
        "with versus()"
    )


def point_columns(table: pd.DataFrame) -> list[str]:
    """The columns of a comparison that say which point a row is (the match columns)."""
    return [c for c in table.columns if c not in RESULT_COLUMNS]


__all__ = ["RESULT_COLUMNS", "ROUND_COLUMNS", "common_shift", "compare", "point_columns", "versus"]
