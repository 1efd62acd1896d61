"""Statistics over the kept samples of one point."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

# pyperf's thresholds for "the machine was busy": stdev >= 10% of the mean, or a
# sample more than 50% away from the median.
SPREAD_WARN_STDEV = 0.10
SPREAD_WARN_RANGE = 0.50


def spread_warnings(
    rows: Iterable[Mapping[str, Any]],
    metric: str,
    where: str,
    advice: str = "use more --repeat or a longer --min-time",
) -> list[str]:
    """pyperf's sanity checks on the kept samples of one point."""
    values = pd.Series([r[metric] for r in rows], dtype=float)
    if len(values) < 2 or values.mean() == 0:
        return []
    stdev_ratio = values.std(ddof=0) / values.mean()
    median = values.median()
    worst = max(abs(values.max() - median), abs(values.min() - median)) / median
    if stdev_ratio >= SPREAD_WARN_STDEV or worst > SPREAD_WARN_RANGE:
        return [
            f"{where}: {metric} samples vary (stdev {stdev_ratio:.0%} of the mean, one "
            f"{worst:.0%} from the median); the machine may be busy: {advice}"
        ]
    return []
