"""Four verdicts a comparison may give a point, and what stops it giving a firmer one.

- ``faster`` / ``slower``: the ratio lies beyond the tolerance band ``1 ± tolerance``:
  its interval is outside the band, and its test against the band's edge stays
  significant after Holm's adjustment across the points of the comparison. A sweep
  of 12 points compared with itself then shows no call at all in 95% of trials.
- ``same``: the whole interval (at 95% or more) lies inside the band: an equivalence
  claim, as two one-sided tests make it.
- ``inconclusive``: anything else; ``reason`` says what is missing (more samples,
  a narrower interval, a larger tolerance).

A metric without a direction (neither higher nor lower is better) gets ``higher`` or
``lower`` in place of ``faster`` or ``slower``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...params import TOLERANCE
from .stats import ALPHA, CONFIDENCE, RatioTest, holm, smallest_p

VERDICTS = ("faster", "slower", "same", "inconclusive")


@dataclass(frozen=True)
class Verdict:
    word: str
    p_adjusted: float
    reason: str = ""


def judge(
    tests: Sequence[RatioTest],
    better: str,
    tolerance: float | Sequence[float] = TOLERANCE.default,
) -> list[Verdict]:
    """A verdict for each point of one comparison (its tests, in any order); the
    tolerance is the comparison's, or each point's own (a noise floor's).

    >>> from zmqbench_magic.results.statistics.stats import paired_ratio_test
    >>> tests = [paired_ratio_test([10, 10.2, 9.9], [12, 12.1, 11.8])]
    >>> judge(tests, "higher")[0].word
    'inconclusive'
    """
    p_adjusted = holm([t.p_value for t in tests])
    m = sum(not math.isnan(t.p_value) for t in tests)
    bands = [tolerance] * len(tests) if isinstance(tolerance, (int, float)) else list(tolerance)
    return [
        _verdict(test, float(p), m, better, band)
        for test, p, band in zip(tests, p_adjusted, bands, strict=True)
    ]


def _verdict(
    test: RatioTest,
    p_adjusted: float,
    m: int,
    better: str,
    tolerance: float,
) -> Verdict:
    if math.isnan(test.ratio) or math.isnan(test.low):
        return Verdict("inconclusive", p_adjusted, "need at least 2 samples a side")
    beyond_up, beyond_down = test.low > 1 + tolerance, test.high < 1 - tolerance
    if (beyond_up or beyond_down) and p_adjusted < ALPHA:
        return Verdict(_direction(beyond_up, better), p_adjusted)
    inside = test.low >= 1 - tolerance and test.high <= 1 + tolerance
    if inside and tolerance > 0 and test.level >= CONFIDENCE - 1e-9:
        return Verdict("same", p_adjusted)
    return Verdict("inconclusive", p_adjusted, _missing(test, p_adjusted, m, tolerance))


def _direction(up: bool, better: str) -> str:
    if not better:
        return "higher" if up else "lower"
    return "faster" if up == (better == "higher") else "slower"


def _missing(
    test: RatioTest,
    p_adjusted: float,
    m: int,
    tolerance: float,
) -> str:
    """Why a point is neither called nor ``same``, in words a user can act on."""
    unit = "pairs of samples (rounds)" if test.paired else "samples a side"
    if m * test.smallest_p >= ALPHA:
        needed = _samples_needed(m, test.paired)
        more = f"need at least {needed} {unit}" if needed else f"need more {unit}"
        return (
            f"{more}: {test.n} cannot reach p < {ALPHA:g} over {m} point(s) (the "
            f"smallest p-value {test.n} can give is {test.smallest_p:.2g})"
        )
    if test.low > 1 + tolerance or test.high < 1 - tolerance:
        return (
            f"beyond ±{tolerance:.1%} at this point alone, but not after adjusting for "
            f"{m} points (p_adjusted {p_adjusted:.2g})"
        )
    half = (test.high - test.low) / 2
    if half > tolerance:
        wide = (
            f"the interval ({test.low:.3f} to {test.high:.3f}, ±{half:.1%}) is wider than "
            f"the ±{tolerance:.1%} tolerance"
        )
        if test.low > 1 or test.high < 1:
            # A larger tolerance only moves the band's edge further into the interval.
            side = "above" if test.low > 1 else "below"
            return f"{wide}, wholly {side} 1 and into the band: more rounds narrow it"
        reach = max(1 - test.low, test.high - 1)
        if test.level < CONFIDENCE - 1e-9:  # "same" needs the full level, whatever the band
            return f"{wide}: more rounds narrow it"
        if reach >= 1:
            # A band past ±100% takes in a ratio of 0: no tolerance anyone would set.
            return f"{wide}: only more rounds narrow it"
        return (
            f"{wide}: more rounds narrow it, or a tolerance of ±{reach:.1%} would take it "
            "as a whole"
        )
    return (
        f"the ratio is at the edge of the ±{tolerance:.1%} tolerance: its interval "
        f"({test.low:.3f} to {test.high:.3f}) straddles the edge"
    )


def _samples_needed(m: int, paired: bool, limit: int = 200) -> int | None:
    """The fewest samples whose smallest p-value, times ``m`` points (Holm's first
    step), is below alpha. They also give an interval of at least 95%."""
    for n in range(2, limit + 1):
        if m * smallest_p(n, paired) < ALPHA:
            return n
    return None


__all__ = ["VERDICTS", "Verdict", "judge"]
