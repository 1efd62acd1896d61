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

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from ...params import METRICS, TOLERANCE
from ...params.columns import Row
from ...params.point_record import Settings
from ..storage import noise_floor
from .sequential import SequentialTest, sequential_test
from .stats import CONFIDENCE, RatioTest, paired_ratio_test, unpaired_ratio_test
from .unlike import differences
from .verdict import judge

# A kind's point record: a mapping of the settings it names.
PointT = TypeVar("PointT", bound=Settings)

if TYPE_CHECKING:
    from ..resultlike import ResultLike

RESULT_COLUMNS = [
    "metric", "baseline", "candidate", "n_baseline", "n_candidate", "n",
    "ratio", "ci_low", "ci_high", "ci_level", "p_value", "p_adjusted",
    "verdict", "reason", "paired", "tolerance",
]  # fmt: skip
# Columns that say which round a sample was taken in: samples of two arms with the
# same values were measured side by side (a flood's blocks of one cluster size run
# their rounds one block after the other, so the block is part of the round).
ROUND_COLUMNS = ("run", "block", "sample")


def compare(
    baseline: ResultLike,
    candidate: ResultLike,
    match: Sequence[str] | None = None,
    metric: str | None = None,
    tolerance: float | None = None,
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
        a 2% difference is not a finding. Default: at each point, this host's noise
        floor there (``zmqbench noise``, :mod:`..storage.noise_floor`), at least 1%;
        where none was measured, 1%, and the comparison's ``attrs["noise_floor"]`` says
        so.

    Returns
    -------
    pandas.DataFrame
        The match columns and :data:`RESULT_COLUMNS`: the medians of each side and
        their sample counts, ``ratio`` (candidate / baseline, Hodges-Lehmann) with its
        interval (``ci_low``, ``ci_high`` at ``ci_level``), ``p_value`` (of the ratio lying
        beyond the tolerance), ``p_adjusted`` (Holm, across the points), ``verdict``
        (``faster``, ``slower``, ``same`` or ``inconclusive``) and ``reason``. ``attrs``
        hold ``shift`` (a note when every point moved alike), ``tolerance``, ``level``
        and ``unlike``: what else the two runs differ in (versions, host, CPU, driver,
        count, high-water marks), each part of every ratio.

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
    floors = {}
    if tolerance is None:
        floors = noise_floor.floor_for(baseline) or noise_floor.floor_for(candidate)
    else:
        TOLERANCE.check(tolerance)  # a noise floor may be wider; a user's own may not
    points, tests, bands = [], [], []
    rights = _groups(b, columns)
    for key, (point, left) in _groups(a, columns).items():
        if key not in rights:
            continue
        right = rights[key][1]
        x, y = _positive(left[metric]), _positive(right[metric])
        band = tolerance if tolerance is not None else noise_floor.tolerance_at(floors, point)
        points.append({**point, **_sides(x, y)})
        tests.append(unpaired_ratio_test(x, y, band))
        bands.append(band)
    widest = max(bands, default=tolerance or TOLERANCE.default)
    table = _table(points, tests, columns, metric, bands, paired=False)
    table.attrs["tolerance"] = widest
    table.attrs["shift"] = common_shift(table, widest, paired=False)
    table.attrs["unlike"] = differences(baseline, candidate)
    if tolerance is None:
        table.attrs["noise_floor"] = noise_floor.describe(floors)
    return table


def arms_versus(
    result: ResultLike,
    column: str,
    baseline: Any,
    candidate: Any,
    metric: str | None = None,
    tolerance: float | None = None,
) -> pd.DataFrame:
    """Two arms of one run, ``column == candidate`` against ``column == baseline``, at
    every point of the run's other swept parameters (see :meth:`ResultSet.versus`), at
    ``tolerance`` (default: the run's own)."""
    if tolerance is None:
        tolerance = float(result.settings.get("tolerance", TOLERANCE.default))
    df = result.df
    by = [c for c in result.point_columns if c != column]
    if column in df.columns:  # else versus() names the columns there are
        arms = df[df[column].isin([baseline, candidate])]
        by = [c for c in by if not _follows(arms, column, c)]
    metric = metric or result.metric_names[0]
    return versus(df, column, baseline, candidate, metric, by, tolerance)


def _follows(arms: pd.DataFrame, column: str, other: str) -> bool:
    """Whether ``other`` is set by ``column`` in these two arms (one value in each, not
    the same, none counting as one): inproc's far end is always a thread, tcp's a
    process, a kernel's websocket protocol is named only through a server, and the arms
    still pair point by point."""
    if other not in arms:
        return False
    per_arm = arms.groupby(column, dropna=False)[other].agg(["nunique", "first"])
    if len(per_arm) != 2:  # an arm missing: nothing to pair, nothing follows
        return False
    return bool((per_arm["nunique"] <= 1).all() and per_arm["first"].nunique(dropna=False) == 2)


def versus(
    df: pd.DataFrame,
    column: str,
    baseline: Any,
    candidate: Any,
    metric: str,
    by: Sequence[str],
    tolerance: float = TOLERANCE.default,
    until: str | None = None,
    family: int | None = None,
) -> pd.DataFrame:
    """Within one run: ``column == candidate`` against ``column == baseline`` at each
    point of ``by``, paired by round (see :meth:`ResultSet.versus`, which picks ``by``).

    Arms that were not measured in the same rounds (a flood's two cluster sizes) are
    compared unpaired, and their rows say so (``paired`` False). A run that took its
    rounds ``until`` decided (default: as ``df.attrs`` says, which a result's frame
    carries) is judged as it was taken, round by round (:mod:`.sequential`), over
    ``family`` points (default: those compared here).
    """
    until = until or df.attrs.get("until", "rounds")
    if column not in df.columns:
        msg = f"{column!r} is not a column of this result; choose one of {list(by)}"
        raise ValueError(msg)
    TOLERANCE.check(tolerance)
    _check_arms(df[column], baseline, candidate, column)
    _checked_metric(metric, df)
    rounds = [c for c in ROUND_COLUMNS if c in df.columns]
    by = [c for c in by if c in df.columns and c != column]
    points, tests = [], []
    groups = df.groupby(by, sort=True, dropna=False) if by else [((), df)]
    if until == "decided":
        arms = (column, baseline, candidate)
        return _decided(groups, rounds, arms, metric, by, tolerance, family)
    for key, group in groups:
        point = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        base = group.loc[group[column] == baseline]
        cand = group.loc[group[column] == candidate]
        if base[metric].dropna().empty or cand[metric].dropna().empty:
            continue
        # Rows without their rounds (a frame built by hand) cannot be paired.
        x, y = _paired(base, cand, rounds, metric) if rounds else ([], [])
        if len(x) >= 2:
            tests.append(paired_ratio_test(x, y, tolerance))
        else:  # not measured in the same rounds
            x, y = _positive(base[metric]), _positive(cand[metric])
            tests.append(unpaired_ratio_test(x, y, tolerance))
        points.append({**point, **_sides(x, y)})
    table = _table(points, tests, by, metric, tolerance, paired=all(t.paired for t in tests))
    table.attrs |= {"column": column, "arms": (baseline, candidate)}
    return table


def _decided(
    groups: Any,
    rounds: list[str],
    arms: tuple[str, Any, Any],
    metric: str,
    by: list[str],
    tolerance: float,
    family: int | None,
) -> pd.DataFrame:
    """:func:`versus` of a run that took its rounds until decided: each point's rounds
    in the order taken, judged as the run judged them after each."""
    column, baseline, candidate = arms
    better = METRICS[metric].better if metric in METRICS else ""
    pairs = []
    for key, group in groups:
        point = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        base = group.loc[group[column] == baseline]
        cand = group.loc[group[column] == candidate]
        pairs.append((point, *_paired(base, cand, rounds, metric)))
    family = family or len(pairs)
    rows = []
    for point, x, y in pairs:
        test = sequential_test(x, y, family, better, tolerance)
        rows.append({**point, **_sides(x, y), **_sequential_row(test, metric, tolerance)})
    table = pd.DataFrame(rows, columns=[*by, *RESULT_COLUMNS])
    table.attrs = {
        "tolerance": tolerance,
        "level": CONFIDENCE,
        "metric": metric,
        "until": "decided",
        "family": family,
        "column": column,
        "arms": (baseline, candidate),
    }
    table.attrs["shift"] = common_shift(table, tolerance, paired=True)
    return table


def _sequential_row(test: SequentialTest, metric: str, tolerance: float) -> Row:
    reason = test.reason and f"undecided after {test.n} round(s): {test.reason}"
    return {
        "metric": metric,
        "n": test.n,
        "ratio": test.ratio,
        "ci_low": test.low,
        "ci_high": test.high,
        "ci_level": CONFIDENCE,
        "p_value": test.p_value,
        "p_adjusted": test.p_adjusted,
        # Not decided yet is what the fixed design calls inconclusive: the gates and
        # the charts read one word.
        "verdict": "inconclusive" if test.word == "undecided" else test.word,
        "reason": reason,
        "paired": True,
        "tolerance": tolerance,
    }


def undecided_points(
    rows: Sequence[Row],
    points: Sequence[PointT],
    arms: tuple[str, Any, Any],
    metric: str,
    tolerance: float,
    family: int,
) -> list[PointT]:
    """Of ``points`` (both arms of each), those whose comparison the ``rows`` taken so
    far do not yet decide: what a run taken until decided measures next."""
    column, baseline, candidate = arms
    df = pd.DataFrame(list(rows))
    by = [c for c in points[0] if c != column]
    by = [c for c in by if not _follows(df[df[column].isin([baseline, candidate])], column, c)]
    table = versus(df, column, baseline, candidate, metric, by, tolerance, "decided", family)
    if table.empty:
        return []
    open_keys = {
        tuple(key)
        for key in table.loc[table["verdict"] == "inconclusive", by].itertuples(index=False)
    }
    return [p for p in points if tuple(p[c] for c in by) in open_keys]


def _paired(
    base: pd.DataFrame, cand: pd.DataFrame, rounds: list[str], metric: str
) -> tuple[list[float], list[float]]:
    """The two arms' values of the rounds both were measured in (and both measured a
    positive value), in the baseline's order."""

    def by_round(arm: pd.DataFrame) -> dict[tuple[Any, ...], float]:
        keys = arm[rounds].itertuples(index=False, name=None)
        return dict(zip(keys, arm[metric].tolist(), strict=True))

    b, c = by_round(base), by_round(cand)
    common = [k for k in b if k in c and b[k] > 0 and c[k] > 0]
    return [b[k] for k in common], [c[k] for k in common]


def _groups(
    frame: pd.DataFrame, columns: list[str]
) -> dict[tuple[Any, ...], tuple[Settings, pd.DataFrame]]:
    """``frame``'s rows by point: a key both results' points can be looked up by (a
    setting that does not apply, NaN, matches NaN), the point, and its rows."""
    found: dict[tuple[Any, ...], tuple[Settings, pd.DataFrame]] = {}
    for key, rows in frame.groupby(columns, sort=True, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        lookup = tuple("not applicable" if pd.isna(v) else v for v in values)
        found[lookup] = (dict(zip(columns, values, strict=True)), rows)
    return found


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


def _sides(x: list[float], y: list[float]) -> dict[str, float]:
    return {
        "baseline": float(np.median(x)) if x else math.nan,
        "candidate": float(np.median(y)) if y else math.nan,
        "n_baseline": len(x),
        "n_candidate": len(y),
    }


def _table(
    points: Sequence[Settings],
    tests: list[RatioTest],
    columns: list[str],
    metric: str,
    tolerance: float | Sequence[float],
    paired: bool,
) -> pd.DataFrame:
    better = METRICS[metric].better if metric in METRICS else ""
    verdicts = judge(tests, better, tolerance)
    bands = [tolerance] * len(tests) if isinstance(tolerance, float) else list(tolerance)
    rows = [
        {
            **point,
            "metric": metric,
            "n": test.n,
            "ratio": test.ratio,
            "ci_low": test.low,
            "ci_high": test.high,
            "ci_level": test.level,
            "p_value": test.p_value,
            "p_adjusted": verdict.p_adjusted,
            "verdict": verdict.word,
            "reason": verdict.reason,
            "paired": test.paired,
            "tolerance": band,
        }
        for point, test, verdict, band in zip(points, tests, verdicts, bands, strict=True)
    ]
    table = pd.DataFrame(rows, columns=[*columns, *RESULT_COLUMNS])
    if isinstance(tolerance, float):
        table.attrs = {"tolerance": tolerance, "level": CONFIDENCE, "metric": metric}
        table.attrs["shift"] = common_shift(table, tolerance, paired)
    else:
        table.attrs = {"level": CONFIDENCE, "metric": metric}
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


__all__ = [
    "RESULT_COLUMNS",
    "ROUND_COLUMNS",
    "common_shift",
    "compare",
    "point_columns",
    "undecided_points",
    "versus",
]
