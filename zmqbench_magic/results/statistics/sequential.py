"""A comparison that may be looked at after every round and stop once it can decide.

A fixed design (:mod:`.verdict`) takes its rounds first and tests once: looking after
each round and stopping at the first call would make false calls far more often than
its 5%. Here each point's evidence is an *e-process*: a number that, where the
ratio lies at a given value, stays below ``1 / alpha`` at every round with probability
at least ``1 - alpha``, however the rounds to look at are chosen (Ville's
inequality). Inverted, it gives a *confidence sequence*: an interval for the ratio
that holds at every round at once (Howard et al., "Time-uniform, nonparametric,
nonasymptotic confidence sequences", Annals of Statistics 2021).

The evidence is the Bayes factor of the one-sample t-test on the rounds' log ratios
(candidate / baseline, paired by round), with a normal prior of variance
:data:`MIXTURE_SPREAD` on the effect in units of its own noise and the noise's scale
left free. Being a ratio of likelihoods of a scale-invariant statistic, it is an
e-process for any noise level (Lai, "On confidence sequences", Annals of Statistics
1976; Pérez-Ortiz et al., "E-statistics, group invariance and anytime valid
testing", 2022): the test's guarantee assumes normal log ratios, and the synthetic
runs measure it with heavier tails too (``bench/bench_verdicts.py``).

The verdicts keep the fixed design's meanings, with the interval a confidence
sequence:

- ``faster`` / ``slower``: the sequence at ``1 - alpha / m`` (``m`` points, Bonferroni)
  lies beyond the band ``1 ± tolerance``. Any false call needs some point's sequence
  to miss its ratio at some round: at most ``alpha`` over the whole comparison.
- ``same``: the 95% sequence lies within the band (per point, as the fixed design's
  interval).
- ``undecided``: neither yet; a point's rounds go on, and the last look's
  :func:`rounds_to_decide` estimates how many more it would need.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from .stats import ALPHA, _band, _logs

# The prior's variance of the effect (the mean log ratio beyond a band's edge, over its
# noise). Wider priors decide large differences in fewer rounds and small ones in
# more; 4 decides 2x in 5 rounds over 12 points, and +5% at 2% noise a round in about
# as many as the fixed design needs for the same power (measured in the bench).
MIXTURE_SPREAD = 4.0
# The rounds a plan or an estimate looks ahead at most.
HORIZON = 10_000


@cache
def t_bound(rounds: int, evidence: float, spread: float = MIXTURE_SPREAD) -> float:
    """The |t| at which the evidence after ``rounds`` rounds reaches ``evidence``
    (``1 / alpha``): infinite while so few rounds cannot reach it at all.

    The Bayes factor is ``(1 + n g)^(-1/2) ((1 + t²/ν) / (1 + t²/(ν (1 + n g))))^((ν+1)/2)``
    with ``ν = n - 1``; it grows with ``|t|``, so the bound is that equation solved for t.

    >>> round(t_bound(10, 20), 2), t_bound(3, 240)
    (3.97, inf)
    """
    if rounds < 2:
        return math.inf
    nu, spread_n = rounds - 1, 1 + rounds * spread
    ratio = (evidence * math.sqrt(spread_n)) ** (2 / (nu + 1))
    if ratio >= spread_n:
        return math.inf
    return math.sqrt(nu * (ratio - 1) / (1 - ratio / spread_n))


def evidence_at(log_ratios: np.ndarray, value: float, spread: float = MIXTURE_SPREAD) -> float:
    """The Bayes factor against the mean log ratio being ``value``: how far the rounds
    so far point away from it (``1 / evidence`` is an always-valid p-value)."""
    n = len(log_ratios)
    if n < 2:
        return 1.0
    sd = float(np.std(log_ratios, ddof=1))
    mean = float(np.mean(log_ratios))
    if sd == 0:
        return math.inf if mean != value else 1.0
    t2 = n * (mean - value) ** 2 / sd**2
    nu, spread_n = n - 1, 1 + n * spread
    growth = (1 + t2 / nu) / (1 + t2 / (nu * spread_n))
    return float(math.exp((nu + 1) / 2 * math.log(growth)) / math.sqrt(spread_n))


@dataclass(frozen=True)
class SequentialTest:
    """One point's comparison after its rounds: the verdict and what it rests on.

    ``ratio`` is the geometric mean of the rounds' ratios, the centre of the intervals;
    ``low`` and ``high`` the 95% confidence sequence at the last round; ``p_value`` the
    always-valid p-value of the ratio lying at the band's nearer edge, and
    ``p_adjusted`` that times the points (Bonferroni). ``more`` is the estimated number
    of further rounds an undecided point needs (None: more than :data:`HORIZON`)."""

    word: str
    ratio: float
    low: float
    high: float
    p_value: float
    p_adjusted: float
    n: int
    reason: str = ""
    more: int | None = 0


def sequential_test(
    baseline: Sequence[float],
    candidate: Sequence[float],
    points: int,
    better: str,
    tolerance: float,
) -> SequentialTest:
    """The verdict on one of ``points`` points after its rounds (``baseline[i]`` and
    ``candidate[i]`` measured in round ``i``), at its first round that decides it.

    >>> sequential_test([100] * 5, [200.0, 201, 199, 200.5, 199.5], 12, "higher", 0.01).word
    'faster'
    """
    if len(baseline) != len(candidate):
        msg = f"paired samples need equal counts, got {len(baseline)} and {len(candidate)}"
        raise ValueError(msg)
    d = _logs(candidate) - _logs(baseline)
    down, up = _band(tolerance)
    first = _first_decision(d, points, down, up)
    if first is None:
        return _undecided(d, points, down, up)
    n, side = first
    word = side if side == "same" else _direction(side == "up", better)
    return _test(d[:n], word, points, down, up)


def _first_decision(d: np.ndarray, points: int, down: float, up: float) -> tuple[int, str] | None:
    """The first round whose look decides (its count and ``up``, ``down`` or ``same``),
    from every prefix's mean and standard error at once."""
    if len(d) < 2:
        return None
    n = np.arange(1, len(d) + 1, dtype=float)
    mean = np.cumsum(d) / n
    squares = np.cumsum((d - d[0]) ** 2)  # shifted: no cancellation in the variance
    spread = np.maximum(squares - n * (mean - d[0]) ** 2, 0.0)
    error = np.sqrt(spread[1:] / (n[1:] - 1) / n[1:])
    mean = mean[1:]
    calls = np.array([t_bound(int(k), points / ALPHA) for k in n[1:]]) * error
    sames = np.array([t_bound(int(k), 1 / ALPHA) for k in n[1:]]) * error
    above, below = mean - calls > up, mean + calls < down
    same = (down <= mean - sames) & (mean + sames <= up) & (up > down)
    decided = np.flatnonzero(above | below | same)
    if not len(decided):
        return None
    i = int(decided[0])
    return i + 2, "up" if above[i] else "down" if below[i] else "same"


def _direction(up: bool, better: str) -> str:
    if not better:
        return "higher" if up else "lower"
    return "faster" if up == (better == "higher") else "slower"


def _test(
    d: np.ndarray,
    word: str,
    points: int,
    down: float,
    up: float,
    reason: str = "",
    more: int | None = 0,
) -> SequentialTest:
    n = len(d)
    mean = float(np.mean(d)) if n else math.nan
    if n < 2:
        low = high = math.nan
    else:
        half = t_bound(n, 1 / ALPHA) * float(np.std(d, ddof=1)) / math.sqrt(n)
        low, high = math.exp(mean - half), math.exp(mean + half)
    edge = up if n and mean >= (up + down) / 2 else down
    p = min(1.0, 1 / evidence_at(d, edge)) if n >= 2 else 1.0
    return SequentialTest(word, math.exp(mean), low, high, p, min(1.0, points * p), n, reason, more)


def _undecided(d: np.ndarray, points: int, down: float, up: float) -> SequentialTest:
    n = len(d)
    if n < 2:
        return _test(d, "undecided", points, down, up, reason="need at least 2 rounds", more=None)
    mean, sd = float(np.mean(d)), float(np.std(d, ddof=1))
    ahead = rounds_to_decide(mean, sd, points, down, up)
    more = None if ahead is None else max(1, ahead - n)
    return _test(d, "undecided", points, down, up, _why(mean, sd, more, down, up), more)


def rounds_to_decide(mean: float, sd: float, points: int, down: float, up: float) -> int | None:
    """The round at which rounds like these (this mean log ratio, this noise) would be
    decided, or None past :data:`HORIZON`: what a plan and an undecided point's
    estimate both read. The bound shrinks as the rounds grow, so the first such round
    is found by bisection."""

    def decides(n: int) -> bool:
        error = sd / math.sqrt(n)
        call = t_bound(n, points / ALPHA) * error
        same = t_bound(n, 1 / ALPHA) * error
        return mean - call > up or mean + call < down or (down <= mean - same and mean + same <= up)

    if sd == 0 or not decides(HORIZON):
        return 2 if sd == 0 else None
    low, high = 2, HORIZON
    while low < high:
        middle = (low + high) // 2
        if decides(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _why(mean: float, sd: float, more: int | None, down: float, up: float) -> str:
    if more is None and down < mean < up and min(up - mean, mean - down) > (up - down) / 4:
        return (
            f"the ratio ({math.exp(mean):.3f}) is within the tolerance, but at this noise "
            f"(±{math.expm1(sd):.1%} a round) its interval would not narrow to it within "
            f"{HORIZON:,} rounds; allow a larger tolerance"
        )
    if more is None:
        return (
            f"the ratio ({math.exp(mean):.3f}) sits at the tolerance's edge: not decided "
            f"within {HORIZON:,} rounds at this noise; allow a larger tolerance"
        )
    return (
        f"the noise (±{math.expm1(sd):.1%} a round) needs about {more:,} more round(s) at "
        f"this ratio ({math.exp(mean):.3f})"
    )


def fewest_rounds(points: int) -> int:
    """The fewest rounds in which any point of ``points`` can be called at all, however
    large the difference: a 2x speed-up over 12 points takes 5 rounds.

    >>> fewest_rounds(12), fewest_rounds(1)
    (5, 4)
    """
    return next(n for n in range(2, HORIZON) if t_bound(n, points / ALPHA) < math.inf)


def plan(
    noise: float, tolerance: float, points: int, differences: Sequence[float]
) -> list[tuple[float, int | None]]:
    """Before a run: for each ``difference`` (0.05: +5%), the round at which a
    comparison whose rounds' ratios vary by ``noise`` (their spread, as a fraction)
    would typically be decided, over ``points`` points at ``tolerance`` (None: not
    within :data:`HORIZON` rounds).

    >>> plan(0.03, 0.01, 12, [1.0])
    [(1.0, 5)]
    """
    down, up = _band(tolerance)
    sd = math.log1p(noise)
    return [
        (difference, rounds_to_decide(math.log1p(difference), sd, points, down, up))
        for difference in differences
    ]


__all__ = [
    "HORIZON",
    "MIXTURE_SPREAD",
    "SequentialTest",
    "evidence_at",
    "fewest_rounds",
    "plan",
    "rounds_to_decide",
    "sequential_test",
    "t_bound",
]
