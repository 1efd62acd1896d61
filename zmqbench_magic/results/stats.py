"""Statistics over the kept samples of a point: intervals, comparisons, spread checks.

Pure numpy, deterministic (a fixed bootstrap seed), no scipy:

- :func:`median_ci`: a distribution-free interval for the median from order
  statistics (the binomial method): no assumption about the shape of the samples,
  which on a shared machine are skewed and heavy-tailed.
- :func:`ratio_ci`: an interval for the ratio of two medians, by bootstrap.
- :func:`mann_whitney_p`: the two-sided Mann-Whitney U test, exact for small samples
  without ties, normal approximation otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

# pyperf's thresholds for "the machine was busy": stdev >= 10% of the mean, or a
# sample more than 50% away from the median.
SPREAD_WARN_STDEV = 0.10
SPREAD_WARN_RANGE = 0.50
CONFIDENCE = 0.95
_BOOTSTRAP = 4000
_SEED = 20261122  # fixed: the same samples always give the same interval
_EXACT_MAX = 50  # n1 + n2 up to this: exact U distribution (when there are no ties)


def _binomial_cdf(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def median_ci(values: Sequence[float], level: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(low, high, achieved)``: the tightest order-statistic interval
    ``[x(j), x(n+1-j)]`` that holds the median with probability >= ``level``.

    With too few samples for ``level`` (fewer than 6 for 95%) it is ``[min, max]``
    and ``achieved`` says what it really is (e.g. 0.94 with 5 samples): never a
    narrower interval that claims more than it can.

    >>> median_ci([5, 1, 4, 2, 3, 6, 7, 8, 9, 10])
    (2.0, 9.0, 0.978515625)
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0.0
    if n == 1:
        return float(x[0]), float(x[0]), 0.0
    best = 1
    for j in range(1, n // 2 + 1):
        if 1 - 2 * _binomial_cdf(j - 1, n) >= level:
            best = j
    achieved = 1 - 2 * _binomial_cdf(best - 1, n)
    return float(x[best - 1]), float(x[n - best]), achieved


def relative_halfwidth(values: Sequence[float]) -> float:
    """Half the median's interval, relative to the median (``--precision``)."""
    low, high, _ = median_ci(values)
    median = float(np.median(values)) if len(values) else math.nan
    if not median or math.isnan(low):
        return math.inf
    return (high - low) / 2 / abs(median)


def ratio_ci(
    baseline: Sequence[float], candidate: Sequence[float], level: float = CONFIDENCE
) -> tuple[float, float, float]:
    """``(ratio, low, high)``: median(candidate) / median(baseline) and a bootstrap
    percentile interval for it (each side resampled on its own)."""
    a = np.asarray(baseline, dtype=float)
    b = np.asarray(candidate, dtype=float)
    ratio = float(np.median(b) / np.median(a))
    if len(a) < 2 or len(b) < 2:
        return ratio, math.nan, math.nan
    rng = np.random.default_rng(_SEED)
    med_a = np.median(rng.choice(a, (_BOOTSTRAP, len(a))), axis=1)
    med_b = np.median(rng.choice(b, (_BOOTSTRAP, len(b))), axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(med_b / med_a, [tail, 100 - tail])
    return ratio, float(low), float(high)


@cache
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1+n2, n1) orderings give each value of U (no ties)."""
    if n1 == 0 or n2 == 0:
        return (1,)
    # The largest value is either from the first sample (adding n2 to U) or not.
    with_first = _u_counts(n1 - 1, n2)
    without = _u_counts(n1, n2 - 1)
    counts = [0] * (n1 * n2 + 1)
    for u, c in enumerate(with_first):
        counts[u + n2] += c
    for u, c in enumerate(without):
        counts[u] += c
    return tuple(counts)


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test that ``a`` and ``b`` come from the
    same distribution. Identical samples give 1.

    >>> round(mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 4)
    0.0079
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        return math.nan
    ranks = pd.Series(np.concatenate([x, y])).rank(method="average").to_numpy()
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2)
    u = min(u1, n1 * n2 - u1)
    ties = len(np.unique(np.concatenate([x, y]))) < n1 + n2
    if not ties and n1 + n2 <= _EXACT_MAX:
        counts = _u_counts(n1, n2)
        tail = sum(counts[: int(u) + 1]) / math.comb(n1 + n2, n1)
        return min(1.0, 2 * tail)
    return _normal_p(ranks, u, n1, n2)


def _normal_p(ranks: np.ndarray, u: float, n1: int, n2: int) -> float:
    n = n1 + n2
    _, tie_sizes = np.unique(ranks, return_counts=True)
    tie_term = float(((tie_sizes**3) - tie_sizes).sum()) / (n * (n - 1))
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
    if sigma == 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / sigma  # with continuity correction
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def spread_warnings(
    rows: Iterable[Mapping[str, Any]],
    metric: str,
    where: str,
    advice: str = "use more --repeat, a longer --min-time, or --precision",
) -> list[str]:
    """pyperf's sanity checks on the kept samples of one point."""
    values = pd.Series([r[metric] for r in rows], dtype=float).dropna()
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
