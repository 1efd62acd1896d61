"""A history of saved runs: each point's headline figure run after run, and the runs
where it stepped.

``zmqbench history DIR`` and :meth:`ResultSet.history` (of ``a + b + c``, a result
holding several runs) put each point's median, with its interval, in the runs' order
(their dates, or a version they ran with). What a step is, and how it is found:

- **The series** of one point is the log of its median in each run. Runs are
  independent measurements of the same thing when nothing changed, so their order
  carries no information: any order of them is as likely as the one observed.
- **The statistic** is binary segmentation's: for each split of the series in two,
  the difference of the two sides' means weighted by ``sqrt(k (n - k) / n)`` (the
  likelihood ratio of a single shift in a mean), and its largest value over the splits.
- **Its p-value** comes from permutations of the series (every order equally likely
  when nothing changed), so it holds whatever the runs' noise is, without a model of
  it: a flat series is called stepped in at most ``alpha`` of cases. The points of one
  history are adjusted together (Holm), as a comparison's are.
- **A step is called** where that p-value is under ``alpha`` and the two sides'
  medians differ by more than the tolerance (this host's noise floor at the point,
  ``zmqbench noise``, at least 1%). Each side is then searched again for a further
  step, as asv's step detection does, to a minimum of one run a side.

How often this finds a 5% step within one run of where it was put, and how often it
calls a step in a flat series, is measured on synthetic series in the tests. A history
in words is :mod:`..words.history_text`'s.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...params import HISTORY_ORDER, TOLERANCE
from ...params.columns import Metadata
from ...params.point_record import Settings
from ..storage import noise_floor
from .stats import holm

if TYPE_CHECKING:
    from ..resultlike import ResultLike

ALPHA = 0.05
PERMUTATIONS = 999
HISTORY_COLUMNS = ["order", "run", "date", "version", "median", "ci_low", "ci_high", "n"]
STEP_COLUMNS = ["run", "date", "at", "runs_before", "runs_after", "before", "after", "ratio"]
# (The steps table adds p_value, p_adjusted, called and reason.)


@dataclass(frozen=True)
class Step:
    """A step in one series: at index ``at`` (the first run after it)."""

    at: int
    before: float  # the median of the medians on each side of it, within its segment
    after: float
    p_value: float


def find_steps(
    values: Sequence[float],
    tolerance: float = TOLERANCE.default,
    alpha: float = ALPHA,
    seed: int = 0,
) -> tuple[list[Step], Step | None]:
    """The steps in one series of positive figures (a point's medians, run after run),
    in order; and the whole series' best split, called or not (None for fewer than 3
    values): its p-value is what the adjustment across a history's points takes.
    ``tolerance``: a step smaller than this fraction is not called."""
    logs = np.log(np.asarray(values, dtype=float))
    rng = np.random.default_rng(seed)
    steps: list[Step] = []
    best = _segment(logs, 0, len(logs), tolerance, alpha, rng, steps)
    return sorted(steps, key=lambda step: step.at), best


def _segment(
    logs: np.ndarray,
    start: int,
    end: int,
    tolerance: float,
    alpha: float,
    rng: np.random.Generator,
    steps: list[Step],
) -> Step | None:
    """Search ``logs[start:end]`` for a step, and each side of one found; this
    segment's best split, called or not."""
    part = logs[start:end]
    if len(part) < 3:
        return None
    at, p_value = _best_split(part, rng)
    before, after = float(np.exp(np.median(part[:at]))), float(np.exp(np.median(part[at:])))
    best = Step(start + at, before, after, p_value)
    if p_value >= alpha or abs(after / before - 1) <= tolerance:
        return best
    steps.append(best)
    _segment(logs, start, start + at, tolerance, alpha, rng, steps)
    _segment(logs, start + at, end, tolerance, alpha, rng, steps)
    return best


def _best_split(part: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
    """The split with the largest weighted shift in the mean, and the share of the
    series' permutations whose largest is at least as large (with the observed one)."""
    observed = _shift_statistics(part[np.newaxis, :])[0]
    at = int(np.argmax(observed)) + 1
    shuffled = rng.permuted(np.tile(part, (PERMUTATIONS, 1)), axis=1)
    largest = _shift_statistics(shuffled).max(axis=1)
    exceed = int(np.sum(largest >= observed.max() - 1e-12))
    return at, (1 + exceed) / (1 + PERMUTATIONS)


def _shift_statistics(series: np.ndarray) -> np.ndarray:
    """Per row, for each split k = 1 .. n-1: sqrt(k (n-k) / n) |mean(left) - mean(right)|."""
    n = series.shape[1]
    k = np.arange(1, n)
    left = np.cumsum(series, axis=1)[:, :-1]
    total = series.sum(axis=1, keepdims=True)
    difference = left / k - (total - left) / (n - k)
    return np.sqrt(k * (n - k) / n) * np.abs(difference)


def run_order(result: ResultLike, by: str = "date") -> list[str]:
    """The result's runs in time order, or by the version of ``by`` they ran with
    (dates break ties); a ``ValueError`` names a ``by`` that is not one of the
    choices of ``HISTORY_ORDER``."""
    if by not in HISTORY_ORDER.choices:
        msg = f"history order must be one of {', '.join(HISTORY_ORDER.choices)}, got {by!r}"
        raise ValueError(msg)

    def key(name: str) -> tuple[Any, ...]:
        meta = result.runs[name]
        date = str(meta.get("date", ""))
        return (date,) if by == "date" else (_version_key(ran_with(meta, by)), date)

    return sorted(result.runs, key=key)


def ran_with(meta: Metadata, key: str) -> Any:
    """A run's ``key`` (a date, a version): for the versions, those of the interpreter
    that ran its loops (a run with one ``--python`` environment ran them there, not in
    the kernel whose versions head its metadata)."""
    arms = list((meta.get("environments") or {}).values())
    if key != "date" and len(arms) == 1 and arms[0].get(key) is not None:
        return arms[0][key]
    return meta.get(key)


def _version_key(version: Any) -> tuple[Any, ...]:
    """``27.10.0`` after ``27.9.1``: numbers compared as numbers."""
    parts = str(version or "").replace("-", ".").split(".")
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def history(
    result: ResultLike,
    metric: str | None = None,
    by: str = "date",
    tolerance: float | None = None,
    alpha: float = ALPHA,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each point's figure across the runs ``result`` holds, and the steps found in it.

    Returns
    -------
    (series, steps)
        ``series``: per point and run (in ``by`` order), :data:`HISTORY_COLUMNS`: its
        place ``order``, ``run``, ``date``, the ``version`` of ``by`` (the date when
        ordered by date), the metric's ``median`` with its interval and sample count,
        ``level`` (the median of the runs' medians between steps) and ``band`` (the
        tolerance: a level's band is ``level * (1 ± band)``).
        ``steps``: per step, the point, :data:`STEP_COLUMNS` (``run`` and ``date`` of
        the first run after it, ``before``/``after`` levels and their ``ratio``),
        ``p_value`` and ``p_adjusted`` (Holm, over the points' first steps).
        ``attrs`` of both: ``metric``, ``by``, ``alpha``, and ``noise_floor`` (where the
        tolerance came from).
    """
    if len(result.runs) < 2:
        msg = f"a history needs at least 2 runs, got {len(result.runs)}: give more result files"
        raise ValueError(msg)
    metric = metric or result.metric_names[0]
    if metric not in result.df.columns:
        msg = f"metric must be one of {', '.join(result.metric_names)}, got {metric!r}"
        raise ValueError(msg)
    order = run_order(result, by)
    keys = [c for c in result.point_columns if c not in ("run", "python")]
    floors = noise_floor.floor_for(result) if tolerance is None else {}
    series = _series(result, metric, keys, order, by)
    found = []
    for point, rows in by_point(series, keys):
        band = tolerance if tolerance is not None else noise_floor.tolerance_at(floors, point)
        steps, best = find_steps(rows["median"].tolist(), band, alpha)
        found.append((point, rows.assign(band=band), steps, best))
    # A point's steps stand only where its first test survives Holm's adjustment across
    # the points (the later ones are tests within it).
    adjusted = holm([best.p_value if best else 1.0 for *_, best in found]).tolist()
    called = [steps if p < alpha else [] for (*_, steps, _), p in zip(found, adjusted, strict=True)]
    series = pd.concat(
        [
            rows.assign(level=_levels(rows["median"].tolist(), steps))
            for (_, rows, _, _), steps in zip(found, called, strict=True)
        ],
        ignore_index=True,
    )
    steps_table = _steps_table(found, called, adjusted, keys, alpha)
    attrs = {
        "metric": metric,
        "by": by,
        "alpha": alpha,
        "noise_floor": noise_floor.describe(floors) if tolerance is None else "",
        "benchmark": result.benchmark,
    }
    series.attrs.update(attrs)
    steps_table.attrs.update(attrs)
    return series, steps_table


def _series(
    result: ResultLike, metric: str, keys: list[str], order: list[str], by: str
) -> pd.DataFrame:
    from .stats import median_ci

    df = result.df
    rows = []
    for place, run in enumerate(order):
        meta = result.runs[run]
        mine = df[df["run"] == run] if "run" in df.columns else df
        for point, samples in by_point(mine, keys):
            values = samples[metric].dropna().tolist()
            if not values:
                continue
            low, high, _ = median_ci(values)
            rows.append(
                {
                    **point,
                    "order": place,
                    "run": run,
                    "date": meta.get("date", ""),
                    "version": str(ran_with(meta, by) or ""),
                    "median": float(np.median(values)),
                    "ci_low": low,
                    "ci_high": high,
                    "n": len(values),
                }
            )
    return pd.DataFrame(rows, columns=[*keys, *HISTORY_COLUMNS])


def by_point(df: pd.DataFrame, keys: list[str]) -> Iterable[tuple[Settings, pd.DataFrame]]:
    """Each point of a history's ``series`` (its values of ``keys``) and its rows."""
    if not keys:
        yield {}, df
        return
    for values, rows in df.groupby(keys, sort=False, dropna=False):
        yield dict(zip(keys, values, strict=True)), rows


def _levels(medians: list[float], steps: list[Step]) -> list[float]:
    """Each run's level: the median of the medians between the steps around it."""
    bounds = [0, *(step.at for step in steps), len(medians)]
    levels: list[float] = []
    for start, end in itertools.pairwise(bounds):
        levels += [float(np.median(medians[start:end]))] * (end - start)
    return levels


def _steps_table(
    found: list[tuple[Settings, pd.DataFrame, list[Step], Step | None]],
    called_steps: list[list[Step]],
    adjusted: list[float],
    keys: list[str],
    alpha: float,
) -> pd.DataFrame:
    """One row per step called, and for a point with none its best split (not called,
    ``reason`` saying why)."""
    rows = []
    for (point, series, _, best), called, p_adjusted in zip(
        found, called_steps, adjusted, strict=True
    ):
        band = float(series["band"].iloc[0])
        shown = called or ([best] if best else [])
        for step in shown:
            after = series.iloc[step.at]
            ratio = step.after / step.before
            reason = ""
            if not called:
                reason = (
                    f"p {p_adjusted:.3g} after Holm's adjustment is not under {alpha:.2g}"
                    if p_adjusted >= alpha or step.p_value >= alpha
                    else f"the shift is within the ±{band:.1%} tolerance"
                )
            rows.append(
                {
                    **point,
                    "run": after["run"],
                    "date": after["date"],
                    "at": step.at,
                    "runs_before": step.at,
                    "runs_after": len(series) - step.at,
                    "before": step.before,
                    "after": step.after,
                    "ratio": ratio,
                    "p_value": step.p_value,
                    "p_adjusted": p_adjusted,
                    "called": bool(called),
                    "reason": reason,
                }
            )
    columns = [*keys, *STEP_COLUMNS, "p_value", "p_adjusted", "called", "reason"]
    return pd.DataFrame(rows, columns=columns)
