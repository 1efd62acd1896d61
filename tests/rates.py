"""A documented rate as an assertion: the share observed in ``trials`` synthetic trials
must not be significantly worse than the rate the docs promise (a one-sided binomial
test at 1%). With a fixed seed the outcome is repeatable.

What the trial counts can detect is worked out exactly, not assumed: each assertion
first checks that its ``trials`` fail a rule ``AS_BAD`` (2.5) times as bad as its
promise with probability ``POWER`` (90%) or more, and refuses to run on fewer. "N times
as bad" is, for a rate promised at most ``r`` (false calls, misses), a true rate of
``N * r``; for a rate promised at least ``r`` (detections, coverage), a shortfall ``N``
times the promised one: a true rate of ``1 - N * (1 - r)`` (95% -> 87.5%), or of
``r / N`` where that would fall below zero (a promise under one half: 15% -> 6%).
Most of the tests' counts also fail a rule twice as bad with 90% probability; the
test of this module says which (tests/results/test_rates.py).
"""

from __future__ import annotations

from scipy import stats

SIGNIFICANCE = 0.01
POWER = 0.9
AS_BAD = 2.5


def worse(rate: float, at_most: bool, factor: float) -> float:
    """The true rate of a rule ``factor`` times as bad as the promise ``rate``."""
    if at_most:
        return min(1.0, factor * rate)
    shortfall = 1 - factor * (1 - rate)
    return shortfall if shortfall > 0 else rate / factor


def power(trials: int, rate: float, at_most: bool, factor: float = AS_BAD) -> float:
    """The exact chance that ``trials`` trials of a rule ``factor`` times as bad as
    ``rate`` fail the assertion: the binomial mass of the hit counts its test rejects."""
    true = worse(rate, at_most, factor)
    if at_most:  # rejected: the fewest hits k with P(X >= k) < SIGNIFICANCE, and more
        k = int(stats.binom.isf(SIGNIFICANCE, trials, rate))
        while stats.binom.sf(k - 1, trials, rate) >= SIGNIFICANCE:
            k += 1
        while k > 0 and stats.binom.sf(k - 2, trials, rate) < SIGNIFICANCE:
            k -= 1
        return float(stats.binom.sf(k - 1, trials, true))
    # rejected: the most hits k with P(X <= k) < SIGNIFICANCE, and fewer
    k = int(stats.binom.ppf(SIGNIFICANCE, trials, rate))
    while k >= 0 and stats.binom.cdf(k, trials, rate) >= SIGNIFICANCE:
        k -= 1
    while stats.binom.cdf(k + 1, trials, rate) < SIGNIFICANCE:
        k += 1
    return float(stats.binom.cdf(k, trials, true)) if k >= 0 else 0.0


def detectable(trials: int, rate: float, at_most: bool, chance: float = POWER) -> float:
    """The smallest factor (to 0.01) such that a rule that many times as bad as
    ``rate`` fails ``trials`` trials with probability ``chance`` or more."""
    low, high = 1.0, 1.0
    while power(trials, rate, at_most, high) < chance:
        low, high = high, 2 * high
        if high > 1e4:
            return float("inf")
    while high - low > 0.005:
        middle = (low + high) / 2
        if power(trials, rate, at_most, middle) >= chance:
            high = middle
        else:
            low = middle
    return round(high + 0.005, 2)


def _enough(trials: int, rate: float, at_most: bool) -> None:
    chance = power(trials, rate, at_most)
    assert chance >= POWER, (
        f"{trials} trials fail a rule {AS_BAD:g} times as bad as {rate:.1%} with "
        f"probability {chance:.2f}, under {POWER:.0%}: the assertion would say little"
    )


def assert_rate_at_most(hits: int, trials: int, rate: float) -> None:
    """``hits`` of ``trials`` (false calls, misses) is not significantly above ``rate``."""
    _enough(trials, rate, at_most=True)
    p = stats.binomtest(hits, trials, rate, alternative="greater").pvalue
    assert p >= SIGNIFICANCE, f"{hits} of {trials} ({hits / trials:.2%}) is above {rate:.1%}"


def assert_rate_at_least(hits: int, trials: int, rate: float) -> None:
    """``hits`` of ``trials`` (detections, coverage) is not significantly below ``rate``."""
    _enough(trials, rate, at_most=False)
    p = stats.binomtest(hits, trials, rate, alternative="less").pvalue
    assert p >= SIGNIFICANCE, f"{hits} of {trials} ({hits / trials:.2%}) is below {rate:.1%}"
