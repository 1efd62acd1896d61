"""A documented rate as an assertion: the share observed in ``trials`` synthetic trials
must not be significantly worse than the rate the docs promise (a one-sided binomial
test at 1%). With a fixed seed the outcome is repeatable; with the trial counts the
tests use, a rule twice as bad as its promise fails."""

from __future__ import annotations

from scipy import stats

SIGNIFICANCE = 0.01


def assert_rate_at_most(hits: int, trials: int, rate: float) -> None:
    """``hits`` of ``trials`` (false calls, misses) is not significantly above ``rate``."""
    p = stats.binomtest(hits, trials, rate, alternative="greater").pvalue
    assert p >= SIGNIFICANCE, f"{hits} of {trials} ({hits / trials:.2%}) is above {rate:.1%}"


def assert_rate_at_least(hits: int, trials: int, rate: float) -> None:
    """``hits`` of ``trials`` (detections, coverage) is not significantly below ``rate``."""
    p = stats.binomtest(hits, trials, rate, alternative="less").pvalue
    assert p >= SIGNIFICANCE, f"{hits} of {trials} ({hits / trials:.2%}) is below {rate:.1%}"
