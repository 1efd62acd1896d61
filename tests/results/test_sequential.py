"""The comparison taken until decided, measured where the answer is known: the rates
the docs promise (docs/comparing.md, "Until decided"), each asserted on enough
synthetic comparisons to fail a rule twice as bad with 90% probability or more
(tests/rates.py works it out).

Each comparison is looked at after every round, and a point stops at its first
decision, as a run with ``--until decided`` does; the samples follow
:mod:`zmqbench_magic.results.synthetic`'s noise model (the rounds' shared 5% cancels in
a paired ratio, which keeps 2% of each arm's own).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from rates import assert_rate_at_least, assert_rate_at_most

from zmqbench_magic.params import TOLERANCE
from zmqbench_magic.results.statistics.compare import undecided_points, versus
from zmqbench_magic.results.statistics.sequential import (
    fewest_rounds,
    plan,
    sequential_test,
    t_bound,
)
from zmqbench_magic.results.statistics.stats import paired_ratio_test
from zmqbench_magic.results.statistics.verdict import judge
from zmqbench_magic.results.synthetic import OWN_NOISE, paired_arms, paired_sweep

POINTS, LOOKS = 12, 40  # a sweep of 12 points, looked at after each of up to 40 rounds


def _arms(rng: np.random.Generator, shift: float, rounds: int, tails: str = "normal"):
    return paired_arms(rng, shift, rounds, tails=tails)


def _sweep(rng, shift, tails="normal", tolerance=TOLERANCE.default):
    """Each point's verdict and the round that decided it (40 when none did)."""
    tests = [
        sequential_test(*_arms(rng, shift, LOOKS, tails), POINTS, "higher", tolerance)
        for _ in range(POINTS)
    ]
    return [(t.word, t.n) for t in tests]


def _false_calls(rng, shift, trials, tails="normal"):
    """Comparisons with any faster or slower call, where none is true (the ratio within
    the band, its edge included)."""
    return sum(
        any(word in ("faster", "slower") for word, _ in _sweep(rng, shift, tails))
        for _ in range(trials)
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("shift", "tails"),
    [(0.0, "normal"), (0.0, "heavy"), (TOLERANCE.default, "normal")],
    ids=["twins", "twins-heavy-tails", "at-the-edge"],
)
def test_looked_at_after_every_round_false_calls_stay_at_most_5_percent(shift, tails):
    """Twins, twins with heavy tails, and a +1% difference at the ±1% band's edge
    (where faster is still false): at most 5% of 12-point comparisons make any call,
    over 1,000 comparisons each looked at after every one of 40 rounds."""
    trials = 1000
    calls = _false_calls(np.random.default_rng(11), shift, trials, tails)
    assert_rate_at_most(calls, trials, 0.05)


def test_a_shared_drift_through_the_rounds_is_not_a_difference():
    """The machine slowing by 3% over the run, both arms alike: it cancels in each
    round's ratio, and no call is made (fewer trials than the twins' above: 400 fail a
    rule twice as bad with 92% probability)."""
    rng, trials, calls = np.random.default_rng(12), 400, 0
    drift = np.linspace(1.0, 0.97, LOOKS)
    for _ in range(trials):
        words = []
        for _ in range(POINTS):
            base, cand = _arms(rng, 0.0, LOOKS)
            words.append(sequential_test(base * drift, cand * drift, POINTS, "higher", 0.01).word)
        calls += any(w in ("faster", "slower") for w in words)
    assert_rate_at_most(calls, trials, 0.05)


def _fixed_power(rng: np.random.Generator, shift: float, rounds: int, trials: int) -> float:
    """The fixed design's share of points called faster, at ``rounds`` rounds over 12
    points (Wilcoxon's test, Holm across the points)."""
    called = 0
    for _ in range(trials):
        tests = [
            paired_ratio_test(*_arms(rng, shift, rounds), tolerance=TOLERANCE.default)
            for _ in range(POINTS)
        ]
        called += sum(v.word == "faster" for v in judge(tests, "higher"))
    return called / (trials * POINTS)


@pytest.mark.slow
def test_plus_5_percent_is_decided_in_no_more_rounds_than_the_fixed_design_needs():
    """+5% at 5% noise a round (2% of each arm's own): the median point is decided in
    no more rounds than a fixed design needs for the power the sequential one reaches
    within its 40 rounds; there, the fixed design calls fewer points."""
    rng, trials = np.random.default_rng(13), 300
    decided = [pair for _ in range(trials) for pair in _sweep(rng, 0.05)]
    power = np.mean([word == "faster" for word, _ in decided])
    median = int(np.median([n for _, n in decided]))
    assert power >= 0.99, power
    assert _fixed_power(rng, 0.05, median, 100) < power


def test_a_2x_difference_is_decided_in_the_fewest_rounds_the_test_can_ever_pass():
    rng = np.random.default_rng(14)
    rounds = [n for _ in range(100) for word, n in _sweep(rng, 1.0) if word == "faster"]
    assert len(rounds) == 100 * POINTS
    assert set(rounds) == {fewest_rounds(POINTS)} == {5}
    assert math.isinf(t_bound(fewest_rounds(POINTS) - 1, POINTS / 0.05))


@pytest.mark.slow
def test_the_95_percent_interval_holds_at_every_round_at_once():
    """The interval reported is a confidence sequence: over 1,000 points of 40 rounds,
    those whose interval missed the true ratio at any round are at most 5%."""
    rng, trials, missed = np.random.default_rng(15), 1000, 0
    for _ in range(trials):
        base, cand = _arms(rng, 0.05, LOOKS)
        for n in range(2, LOOKS + 1):
            test = sequential_test(base[:n], cand[:n], POINTS, "higher", 0.0)
            if not test.low <= 1.05 <= test.high:
                missed += 1
                break
    assert_rate_at_most(missed, trials, 0.05)


def test_twins_are_decided_same_and_an_edge_difference_says_why_it_is_not():
    """Twins are same within ±3% in 40 rounds (within ±1% they need about 100: the
    plan says how many)."""
    rng = np.random.default_rng(16)
    twins = [word for _ in range(30) for word, _ in _sweep(rng, 0.0, tolerance=0.03)]
    assert_rate_at_least(twins.count("same"), len(twins), 0.95)
    assert 80 < plan(OWN_NOISE * math.sqrt(2), 0.01, POINTS, [0.0])[0][1] < 200
    base, cand = _arms(rng, TOLERANCE.default, 30)
    edge = sequential_test(base, cand, POINTS, "higher", TOLERANCE.default)
    assert edge.word == "undecided"
    assert "tolerance's edge" in edge.reason or "more round" in edge.reason
    noisy = sequential_test([100.0, 130, 80, 120], [140.0, 150, 110, 170], 1, "higher", 0.01)
    assert noisy.word == "undecided" and noisy.more == 1
    assert noisy.reason.startswith("the noise (±10.1% a round) needs about 1 more round")


def test_the_table_of_a_run_taken_until_decided_is_the_sequence_it_was_taken_by():
    """versus() on a run's rows gives each point the round that decided it, and
    undecided_points() leaves out exactly the decided ones."""
    rng = np.random.default_rng(17)
    big = paired_sweep(rng, 1.0, rounds=8, points=3)
    small = paired_sweep(rng, 0.0, rounds=8, points=3).assign(size=lambda d: d["size"] + 1)
    rows = pd.concat([big, small], ignore_index=True)
    table = versus(rows, "copy", True, False, "msgs_per_s", ["size"], 0.01, "decided")
    assert table.attrs["until"] == "decided" and table.attrs["family"] == 6
    called = table[table["verdict"] == "faster"]
    assert set(called["size"]) == set(big["size"]) and (called["n"] < 8).all()
    assert (called["ci_low"] > 1.01).all() and (called["p_adjusted"] < 0.05).all()
    points = [{"size": s, "copy": c} for s in sorted(set(rows["size"])) for c in (True, False)]
    pending = undecided_points(
        rows.to_dict("records"), points, ("copy", True, False), "msgs_per_s", 0.01, 6
    )
    open_sizes = set(table.loc[table["verdict"] == "inconclusive", "size"])
    assert {p["size"] for p in pending} == open_sizes and len(pending) == 2 * len(open_sizes)


def test_a_plan_gives_the_rounds_each_difference_needs():
    rows = plan(0.03, 0.01, 12, [0.01, 0.05, 1.0])
    assert rows[0] == (0.01, None)  # at the band's edge: never
    assert rows[1][1] > rows[2][1] == fewest_rounds(12)
    # A noisier host needs more rounds for the same difference; so does a wider band,
    # which leaves less of the difference beyond its edge.
    assert plan(0.06, 0.01, 12, [0.05])[0][1] > rows[1][1]
    assert plan(0.03, 0.02, 12, [0.05])[0][1] > rows[1][1]
