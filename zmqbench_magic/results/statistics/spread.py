"""pyperf's sanity check on the kept samples of each point, said once per run.

A spread of a tenth of the mean is this kind of machine's everyday state, not a
fault, and each point's interval already carries it; so the points whose samples
vary that much are gathered into one line that names them, rather than a warning
per point that reads as if something were broken.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from ...params import MIN_TIME, PRECISION, REPEAT
from ...params.columns import Row

# pyperf's thresholds: a standard deviation of 10% of the mean, or a sample more
# than 50% from the median.
SPREAD_WARN_STDEV = 0.10
SPREAD_WARN_RANGE = 0.50
# What narrows a wide interval, unless the benchmark has its own words for it.
_NARROWER = f"more {REPEAT.option}, a longer {MIN_TIME.option} or {PRECISION.option} narrow them"
# How many of the points a line names before it counts the rest.
_NAMED = 4


def spread_of(rows: Iterable[Row], metric: str) -> float | None:
    """The samples' stdev over their mean when it, or one sample's distance from the
    median, is past pyperf's thresholds; None for a steady point."""
    values = pd.Series([r[metric] for r in rows], dtype=float).dropna()
    if len(values) < 2 or values.mean() == 0:
        return None
    stdev_ratio = values.std(ddof=0) / values.mean()
    median = values.median()
    worst = max(abs(values.max() - median), abs(values.min() - median)) / median
    return stdev_ratio if stdev_ratio >= SPREAD_WARN_STDEV or worst > SPREAD_WARN_RANGE else None


def spread_warnings(
    points: Iterable[tuple[str, Iterable[Row]]],
    metric: str,
    advice: str | None = None,
    usual: Sequence[float | None] = (),
) -> list[str]:
    """One line for a run: which of its points (given as ``(words, rows)``) have
    samples that vary past pyperf's thresholds, widest first. ``usual``: per point,
    the widest spread this host's noise floor saw within one run (None: unknown); a
    point that varies no more than that is this host's everyday state, counted apart."""
    advice = advice or _NARROWER
    points = list(points)
    usual = list(usual) or [None] * len(points)
    flagged, everyday = [], 0
    for (where, rows), within in zip(points, usual, strict=True):
        spread = spread_of(rows, metric)
        if spread is not None and within is not None and spread <= within:
            everyday += 1
        elif spread is not None:
            flagged.append((where, spread))
    if not flagged:
        return []
    flagged.sort(key=lambda item: -item[1])
    named = ", ".join(f"{where} {spread:.0%}" for where, spread in flagged[:_NAMED])
    more = f" and {len(flagged) - _NAMED} more" if len(flagged) > _NAMED else ""
    usual_too = (
        f"; {everyday} more vary no more than within a run of this host's noise floor"
        if everyday
        else ""
    )
    return [
        f"{metric} samples vary at {len(flagged)} of {len(points)} points (stdev over mean: "
        f"{named}{more}){usual_too}; their intervals are wide: {advice}"
    ]


__all__ = ["SPREAD_WARN_RANGE", "SPREAD_WARN_STDEV", "spread_of", "spread_warnings"]
