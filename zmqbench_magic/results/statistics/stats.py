"""Statistics over the kept samples of a point: intervals and ratio tests.

Every distribution here is scipy's (``scipy.stats``); this module only says which
test answers which question, on what scale, and turns a test into an interval. Two
p-values are also computed here, where scipy would compute them the same way: the
signed-rank test's from its exact null distribution, the rank-sum test's from its
normal approximation (scipy's call checks and dispatches for far longer than either
takes; a test holds both to scipy's to the last bits):

- :func:`median_ci`: a distribution-free interval for the median from order
  statistics (the binomial method, benchstat's): no assumption about the shape of
  the samples, which on a shared machine are skewed and heavy-tailed.
- :func:`paired_ratio_test`: two arms measured in the same rounds. Each round gives
  the ratio candidate / baseline; the machine's state in that round cancels in it.
  Wilcoxon's signed-rank test on the log ratios, its Hodges-Lehmann estimate and
  the interval found by inverting the test.
- :func:`unpaired_ratio_test`: two runs with nothing shared. The Mann-Whitney
  (rank-sum) test on the log values, its Hodges-Lehmann estimate and interval.
- :func:`holm`: Holm's step-down adjustment of the p-values of one comparison's
  points. scipy offers Benjamini-Hochberg (``false_discovery_control``), which
  controls the share of false calls among the calls; a benchmark reader wants "no
  point's verdict is false" with 95% confidence, which is Holm's guarantee.

Ratios are tested on a log scale: 2x and 0.5x are the same distance from 1, and a
round's slowdown that multiplies both arms cancels exactly.

Both tests take a ``tolerance``: the p-value is that of the ratio lying beyond the
band ``[1 - tolerance, 1 + tolerance]`` (a minimum-effect test; with 0 it is the usual
test of no difference).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ...params.columns import Row

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE


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
    j = _order_statistic(n, level)
    return float(x[j - 1]), float(x[n - j]), _order_level(n, j)


def _order_level(n: int, j: int) -> float:
    """P(x(j) <= median <= x(n+1-j)): 1 - 2 P(B <= j - 1), B ~ Binomial(n, 1/2)."""
    return 1 - 2 * _tails(n)[j - 1]


@cache
def _tails(n: int) -> tuple[float, ...]:
    """P(B <= k) for k = 0 .. n // 2, B ~ Binomial(n, 1/2): counted exactly in integers
    (each binomial coefficient from the one before), so a summary's interval imports no
    statistics library."""
    tails, below, term = [], 0, 1  # term: C(n, k)
    for k in range(n // 2 + 1):
        below += term
        tails.append(below / 2**n)
        term = term * (n - k) // (k + 1)
    return tuple(tails)


@cache
def _order_statistic(n: int, level: float) -> int:
    """The largest ``j`` whose interval ``[x(j), x(n+1-j)]`` reaches ``level`` (1 if none):
    the interval's level falls as ``j`` grows, so the first ``j`` short of it ends the
    search."""
    found = 1
    for j in range(1, n // 2 + 1):
        if _order_level(n, j) < level:
            break
        found = j
    return found


# --precision stops on an interval checked at this level, stricter than the 95% that
# is reported: stopping when an interval happens to be narrow makes the reported one
# cover less than it says (0.93 for 95% checked at 95%; measured in the tests).
PRECISION_LEVEL = 0.99


def precision_rule(precision: float, metric: str) -> Callable[[Sequence[Row]], bool] | None:
    """``--precision``'s stopping rule for one point's kept rows (None when it is off):
    the median's interval at :data:`PRECISION_LEVEL` within ``precision`` of it."""
    if not precision:
        return None
    return lambda rows: relative_halfwidth([r[metric] for r in rows], PRECISION_LEVEL) <= precision


def relative_halfwidth(values: Sequence[float], level: float = CONFIDENCE) -> float:
    """Half the median's interval at ``level``, relative to the median (``--precision``)."""
    low, high, _ = median_ci(values, level)
    median = float(np.median(values)) if len(values) else math.nan
    if not median or math.isnan(low):
        return math.inf
    return (high - low) / 2 / abs(median)


@dataclass(frozen=True)
class RatioTest:
    """candidate / baseline for one point: the estimate, its interval and the test.

    ``ratio`` is the Hodges-Lehmann estimate (the median of the Walsh averages of the
    log ratios, paired; of all pairwise log differences, unpaired): the estimate that
    goes with the rank test, and always inside its interval. ``level`` is what the
    interval really reaches (below the level asked for when there are too few samples
    for it). ``p_value`` is that of the ratio lying beyond ``1 ± tolerance``.
    ``smallest_p`` is the smallest p-value these sample counts can give at all.
    """

    ratio: float
    low: float
    high: float
    level: float
    p_value: float
    n: int
    smallest_p: float
    paired: bool


def _nan_test(n: int, paired: bool) -> RatioTest:
    return RatioTest(math.nan, math.nan, math.nan, 0.0, math.nan, n, 1.0, paired)


def _logs(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if (array <= 0).any():
        msg = "a ratio needs positive values; got zero or a negative figure"
        raise ValueError(msg)
    return np.log(array)


def _band(tolerance: float) -> tuple[float, float]:
    """The band of log ratios within ``tolerance`` of 1: from ``1 - tolerance`` to
    ``1 + tolerance``. A noise floor can be 100% or more (a busy host's runs whose
    medians land twice apart): the band then reaches zero, and no decrease is told from
    noise (a user's own --tolerance is below 1, by its declaration)."""
    if not 0 <= tolerance < math.inf:
        msg = f"tolerance must be a fraction from 0 up, got {tolerance!r}"
        raise ValueError(msg)
    down = math.log1p(-tolerance) if tolerance < 1 else -math.inf
    return down, math.log1p(tolerance)


def _two_sided(p_up: float, p_down: float) -> float:
    return float(min(1.0, 2 * min(p_up, p_down)))


def paired_ratio_test(
    baseline: Sequence[float],
    candidate: Sequence[float],
    tolerance: float = 0.0,
    level: float = CONFIDENCE,
) -> RatioTest:
    """The two arms of one point, measured in the same rounds (``baseline[i]`` and
    ``candidate[i]`` in round ``i``): Wilcoxon's signed-rank test on the log of each
    round's ratio.

    >>> t = paired_ratio_test([100, 102, 97, 110, 99, 101], [120, 121, 118, 133, 119, 120])
    >>> round(t.ratio, 3), t.n, round(t.p_value, 4)
    (1.201, 6, 0.0312)
    """
    if len(baseline) != len(candidate):
        msg = f"paired samples need equal counts, got {len(baseline)} and {len(candidate)}"
        raise ValueError(msg)
    d = _logs(candidate) - _logs(baseline)
    n = len(d)
    if n < 2:
        return _nan_test(n, paired=True)
    down, up = _band(tolerance)
    walsh = np.sort((d[:, None] + d[None, :])[np.triu_indices(n)] / 2)
    cut = _cut(lambda c: _signed_rank_cdf(n, c), level, len(walsh))
    return RatioTest(
        ratio=math.exp(float(np.median(walsh))),
        low=math.exp(walsh[cut]),
        high=math.exp(walsh[len(walsh) - 1 - cut]),
        level=1 - 2 * _signed_rank_cdf(n, cut),
        p_value=_two_sided(_signed_rank_p(d - up, "greater"), _signed_rank_p(d - down, "less")),
        n=n,
        smallest_p=smallest_p(n, paired=True),
        paired=True,
    )


def _cut(cdf: Callable[[int], float], level: float, count: int) -> int:
    """How many of the ``count`` sorted estimates (Walsh averages, pairwise differences)
    to drop at each end for the interval at ``level``: the largest ``c`` with
    ``cdf(c) <= (1 - level) / 2``, where ``cdf`` is the rank statistic's null
    distribution (the test at a shift outside the interval then rejects). 0 when even
    the widest interval falls short of ``level``: its real level is then reported."""
    tail = (1 - level) / 2
    if cdf(0) > tail:
        return 0
    low, high = 0, (count - 1) // 2  # cdf(low) <= tail; the statistic is symmetric
    while low < high:
        middle = (low + high + 1) // 2
        if cdf(middle) <= tail:
            low = middle
        else:
            high = middle - 1
    return low


def scipy_stats() -> Any:
    """scipy's statistics, imported when first needed (a rank test, a pooled
    percentile's bootstrap): its import takes about a second, which a command that
    only prints a summary (``zmqbench thr``, ``--help``) should not pay."""
    from scipy import stats

    return stats


def _signed_rank_p(differences: np.ndarray, alternative: str) -> float:
    """scipy's signed-rank p-value; differences that are all zero show no shift at all.

    Where scipy's own choice is its exact test (at most 50 differences, none zero and
    no two of the same size), the statistic is counted here against the same exact
    null distribution, in integers: scipy's call checks and dispatches for about a
    millisecond, ten times the test, and a ``--until`` run or a comparison of many
    points asks for two a point."""
    if not differences.any():
        return 1.0
    n = len(differences)
    sizes = np.abs(differences)
    if n > _EXACT_SIGNED_RANK_MAX or not sizes.all() or len(np.unique(sizes)) < n:
        return float(scipy_stats().wilcoxon(differences, alternative=alternative).pvalue)
    ranks = np.empty(n, dtype=np.int64)
    ranks[np.argsort(sizes)] = np.arange(1, n + 1)
    positive = int(ranks[differences > 0].sum())  # T+
    at_least = _signed_rank_at_least(n)
    if alternative == "greater":  # P(T+ >= observed)
        return at_least[positive] / 2**n
    if alternative == "less":  # P(T+ <= observed)
        return (2**n - at_least[positive + 1]) / 2**n
    msg = f"alternative must be 'greater' or 'less', got {alternative!r}"
    raise ValueError(msg)


# scipy's wilcoxon(method="auto") is exact up to this many differences (then normal).
_EXACT_SIGNED_RANK_MAX = 50


@cache
def _signed_rank_at_least(n: int) -> tuple[int, ...]:
    """For each k from 0 to n(n+1)/2 + 1: of the 2**n equally likely sign patterns of
    ranks 1..n, how many give T+ >= k (the exact null distribution, tie-free)."""
    top = n * (n + 1) // 2
    ways = [1] + [0] * top  # ways[s]: subsets of the ranks so far summing to s
    for rank in range(1, n + 1):
        for total in range(top, rank - 1, -1):
            ways[total] += ways[total - rank]
    at_least = [0] * (top + 2)
    for k in range(top, -1, -1):
        at_least[k] = at_least[k + 1] + ways[k]
    return tuple(at_least)


@cache
def _signed_rank_cdf(n: int, k: int) -> float:
    """P(T+ <= k) for n pairs with no shift, from scipy: data with ranks 1..n whose
    positive ones sum to exactly ``k``."""
    signs = -np.ones(n)
    remaining = k
    for rank in range(n, 0, -1):  # greedy: any k from 0 to n(n+1)/2 is reachable
        if rank <= remaining:
            signs[rank - 1] = 1
            remaining -= rank
    data = signs * np.arange(1, n + 1)
    return float(scipy_stats().wilcoxon(data, alternative="less").pvalue)


def unpaired_ratio_test(
    baseline: Sequence[float],
    candidate: Sequence[float],
    tolerance: float = 0.0,
    level: float = CONFIDENCE,
) -> RatioTest:
    """Two sets of samples with nothing shared (two runs): the Mann-Whitney test on the
    log values.

    >>> t = unpaired_ratio_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    >>> round(t.p_value, 4), t.smallest_p == t.p_value
    (0.0079, True)
    """
    x, y = _logs(baseline), _logs(candidate)
    if len(x) < 2 or len(y) < 2:
        return _nan_test(min(len(x), len(y)), paired=False)
    down, up = _band(tolerance)
    differences = np.sort((y[None, :] - x[:, None]).ravel())
    m, n = len(x), len(y)
    cut = _cut(lambda c: _rank_sum_cdf(m, n, c), level, len(differences))
    return RatioTest(
        ratio=math.exp(float(np.median(differences))),
        low=math.exp(differences[cut]),
        high=math.exp(differences[len(differences) - 1 - cut]),
        level=1 - 2 * _rank_sum_cdf(m, n, cut),
        p_value=_two_sided(_rank_sum_p(y - up, x, "greater"), _rank_sum_p(y - down, x, "less")),
        n=min(m, n),
        smallest_p=_two_sided(_rank_sum_cdf(m, n, 0), 1.0),
        paired=False,
    )


def _rank_sum_p(candidate: np.ndarray, baseline: np.ndarray, alternative: str) -> float:
    """scipy's Mann-Whitney p-value; the same samples on both sides show no shift.

    Where scipy's own choice is its normal approximation (more than 8 samples a side,
    or ties), it is computed here as scipy does (tie-corrected, with the continuity
    correction), for the reason :func:`_signed_rank_p` gives."""
    if np.array_equal(np.sort(candidate), np.sort(baseline)):
        return 1.0
    m, n = len(candidate), len(baseline)
    _, ties = np.unique(np.concatenate([candidate, baseline]), return_counts=True)
    tied = bool((ties > 1).any())
    total = m + n
    tie_term = float(np.sum(ties.astype(float) ** 3 - ties))
    spread = math.sqrt(m * n / 12 * ((total + 1) - tie_term / (total * (total - 1))))
    exact = (m <= _EXACT_RANK_SUM_MAX or n <= _EXACT_RANK_SUM_MAX) and not tied
    if exact or not spread:
        test = scipy_stats().mannwhitneyu(candidate, baseline, alternative=alternative)
        return float(test.pvalue)
    # U of the candidate: pairs where it is larger, a tie counting a half.
    above = candidate[:, None] - baseline[None, :]
    u_candidate = float(np.sum(above > 0) + 0.5 * np.sum(above == 0))
    if alternative not in ("greater", "less"):
        msg = f"alternative must be 'greater' or 'less', got {alternative!r}"
        raise ValueError(msg)
    u = u_candidate if alternative == "greater" else m * n - u_candidate
    from scipy.special import ndtr  # a bare ufunc: none of stats' per-call checks

    return float(min(1.0, max(0.0, ndtr(-(u - m * n / 2 - 0.5) / spread))))


# scipy's mannwhitneyu(method="auto") is exact, with no ties, while a side has at most
# this many samples; normal otherwise.
_EXACT_RANK_SUM_MAX = 8


@cache
def _rank_sum_cdf(n_baseline: int, n_candidate: int, k: int) -> float:
    """P(U <= k), U the number of (candidate, baseline) pairs where the candidate is
    larger, with no shift; from scipy, on tie-free data built to give U = k."""
    counts = []  # per candidate value: how many baseline values lie below it
    remaining = k
    for _ in range(n_candidate):
        counts.append(min(n_baseline, remaining))
        remaining -= counts[-1]
    baseline = np.arange(n_baseline, dtype=float)
    # Distinct values, each just below the baseline value it must not pass.
    candidate = np.array([c - 0.5 + i * 1e-6 for i, c in enumerate(counts)])
    return float(scipy_stats().mannwhitneyu(candidate, baseline, alternative="less").pvalue)


def smallest_p(n: int, paired: bool) -> float:
    """The smallest two-sided p-value ``n`` pairs (paired) or ``n`` samples a side
    (unpaired) can give: with 5 pairs 0.0625, so no call is possible at 0.05."""
    cdf = _signed_rank_cdf(n, 0) if paired else _rank_sum_cdf(n, n, 0)
    return _two_sided(cdf, 1.0)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment: a point is called at level alpha when its adjusted
    p-value is below alpha, and then the chance of any false call among all the points
    is at most alpha. NaN stays NaN and does not count as a test.

    >>> holm([0.01, 0.04, 0.03, 0.005]).round(3).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, math.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested], kind="stable")]
    m = len(order)
    running = 0.0
    for step, index in enumerate(order):
        running = max(running, min(1.0, (m - step) * p[index]))
        adjusted[index] = running
    return adjusted
