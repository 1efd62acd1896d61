"""tests/rates.py held to known answers: where its binomial test draws the line, the
exact chance that the trial counts the tests use fail a rule worse than its promise,
and draws from a fixed seed at three times the promised rate failing."""

from __future__ import annotations

import numpy as np
import pytest
from rates import (
    AS_BAD,
    POWER,
    assert_rate_at_least,
    assert_rate_at_most,
    detectable,
    power,
    worse,
)
from scipy import stats

# Each (trials, promised rate, at most?) the statistics tests assert, the factor of a
# rule those trials fail with 90% probability (worked out once, exactly, here), and
# where they use it.
DESIGNS = [
    (1000, 0.01, True, 2.47, "test_verdicts: a-a-paired"),
    (400, 0.05, True, 1.96, "test_verdicts: a-a-unpaired, at-the-edge-paired"),
    (1000, 0.95, False, 1.57, "test_verdicts: +5% called; --precision coverage"),
    (200, 0.15, False, 2.18, "test_verdicts: drift at the 1% tolerance"),
    (200, 0.05, True, 2.44, "test_verdicts: drift at the noise floor"),
    (1000, 0.05, True, 1.57, "test_sequential: false calls; the sequence's coverage"),
    (400, 0.05, True, 1.96, "test_sequential: a shared drift"),
    (360, 0.95, False, 1.99, "test_sequential: twins decided same"),
]
IDS = [d[-1] for d in DESIGNS]


def test_the_line_falls_where_the_binomial_test_puts_it():
    """At 1% over 1,000 trials 18 false calls pass and 19 fail; at 95% over 1,000, 933
    detections pass and 932 fail."""
    assert_rate_at_most(18, 1000, 0.01)
    with pytest.raises(AssertionError, match=r"19 of 1000 \(1.90%\) is above 1.0%"):
        assert_rate_at_most(19, 1000, 0.01)
    assert_rate_at_least(933, 1000, 0.95)
    with pytest.raises(AssertionError, match=r"932 of 1000 \(93.20%\) is below 95.0%"):
        assert_rate_at_least(932, 1000, 0.95)


def test_a_rule_n_times_as_bad_is_read_on_the_side_that_is_worse():
    assert worse(0.01, True, 2) == pytest.approx(0.02)
    assert worse(0.95, False, 2) == pytest.approx(0.90)  # the 5% missed, doubled
    assert worse(0.15, False, 2.5) == pytest.approx(0.06)  # 85% x 2.5 is over 100%: 15% / 2.5


def test_power_is_the_binomial_mass_the_test_rejects():
    """The closed form against the sum over every hit count of binomtest's own verdict."""
    for trials, rate, at_most, *_ in DESIGNS[:5]:
        alternative = "greater" if at_most else "less"
        rejected = [
            k
            for k in range(trials + 1)
            if stats.binomtest(k, trials, rate, alternative=alternative).pvalue < 0.01
        ]
        true = worse(rate, at_most, 2)
        exact = stats.binom.pmf(rejected, trials, true).sum()
        assert power(trials, rate, at_most, 2) == pytest.approx(exact, abs=1e-12)


def test_a_promised_1_percent_over_1000_trials_misses_2_percent_often():
    """Why the claim is 2.5 times, not twice: a 2% rule passes 38% of the time."""
    assert power(1000, 0.01, True, 2) == pytest.approx(0.620, abs=0.001)
    assert power(1000, 0.01, True, 2.5) == pytest.approx(0.911, abs=0.001)


@pytest.mark.parametrize(("trials", "rate", "at_most", "factor", "where"), DESIGNS, ids=IDS)
def test_each_design_fails_a_rule_as_bad_as_the_docs_say(trials, rate, at_most, factor, where):
    assert detectable(trials, rate, at_most) == factor, where
    assert factor <= AS_BAD and power(trials, rate, at_most) >= POWER
    # Twice as bad is detected by all but the three named in docs/comparing.md.
    weaker = where.endswith(("a-a-paired", "tolerance", "floor"))
    assert (power(trials, rate, at_most, 2) >= POWER) != weaker


@pytest.mark.parametrize(("trials", "rate", "at_most", "factor", "where"), DESIGNS, ids=IDS)
def test_a_sample_drawn_three_times_as_bad_fails_and_one_at_the_promise_passes(
    trials, rate, at_most, factor, where
):
    """Drawn from a fixed seed: the outcome is the same every run. At three times as
    bad each design fails with probability 0.98 or more (exactly)."""
    assert power(trials, rate, at_most, 3) >= 0.98
    check = assert_rate_at_most if at_most else assert_rate_at_least
    rng = np.random.default_rng(3)
    bad = int(rng.binomial(trials, worse(rate, at_most, 3)))
    with pytest.raises(AssertionError, match=r"is (above|below)"):
        check(bad, trials, rate)
    check(int(rng.binomial(trials, rate)), trials, rate)


def test_too_few_trials_are_refused_before_anything_is_judged():
    with pytest.raises(AssertionError, match=r"100 trials fail a rule 2.5 times as bad as 1.0%"):
        assert_rate_at_most(0, 100, 0.01)
    with pytest.raises(AssertionError, match=r"would say little"):
        assert_rate_at_least(50, 50, 0.95)
