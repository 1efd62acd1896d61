"""The verdicts measured on synthetic samples with a known answer (no sockets): how
often a comparison calls a difference that is not there, how often it finds one
that is, that ``same`` is only said of an interval inside the tolerance, that a stall
shows in the pooled percentiles, and that --precision keeps its 95%.

The samples are :mod:`zmqbench_magic.results.synthetic`'s, with its noise model.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from rates import assert_rate_at_least, assert_rate_at_most

from zmqbench_magic.params import TOLERANCE
from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.statistics.compare import versus
from zmqbench_magic.results.statistics.histogram import LogHistogram
from zmqbench_magic.results.statistics.stats import (
    PRECISION_LEVEL,
    median_ci,
    paired_ratio_test,
    relative_halfwidth,
    unpaired_ratio_test,
)
from zmqbench_magic.results.statistics.verdict import judge
from zmqbench_magic.results.storage import noise_floor
from zmqbench_magic.results.synthetic import (
    OWN_NOISE,
    ROUND_NOISE,
    paired_arms,
    paired_sweep,
    unpaired_run,
)
from zmqbench_magic.results.words.summary_lines import summary_line


def _paired_verdicts(df: pd.DataFrame) -> pd.Series:
    return versus(df, "copy", True, False, "msgs_per_s", ["size"])["verdict"]


def _unpaired_sweep(rng: np.random.Generator, shift: float, n: int = 10) -> ResultSet:
    return unpaired_run(rng, 1 + shift, n)


def _any_call(verdicts: pd.Series) -> bool:
    return bool(verdicts.isin(["faster", "slower"]).any())


def _sweep_verdicts(rng: np.random.Generator, shift: float, paired: bool) -> list[str]:
    """A 12-point sweep's verdicts at 10 rounds, the tests called as versus() and
    compare() call them (without the frames: a thousand comparisons take seconds)."""
    tests = []
    for _ in range(12):
        if paired:
            tests.append(paired_ratio_test(*paired_arms(rng, shift, 10), TOLERANCE.default))
        else:
            spread = np.hypot(ROUND_NOISE, OWN_NOISE)
            base = 1000 * rng.lognormal(0, spread, 10)
            cand = 1000 * (1 + shift) * rng.lognormal(0, spread, 10)
            tests.append(unpaired_ratio_test(base, cand, TOLERANCE.default))
    return [v.word for v in judge(tests, "higher")]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("shift", "paired", "promised", "trials"),
    [(0.0, True, 0.01, 1000), (0.0, False, 0.05, 400), (TOLERANCE.default, True, 0.05, 400)],
    ids=["a-a-paired", "a-a-unpaired", "at-the-edge-paired"],
)
def test_false_calls_over_a_12_point_sweep_are_within_what_the_docs_promise(
    shift, paired, promised, trials
):
    """A sweep compared with itself in one run calls something in under 1% of
    comparisons; across two runs, and with a +1% difference at the ±1% band's edge
    (where faster is false), in at most 5%, Holm's guarantee (docs/comparing.md, "How
    sure"). A rule 2.5 times as bad fails the first with 91% probability, one twice as
    bad the other two with 92% (tests/rates.py)."""
    rng = np.random.default_rng(1)
    calls = sum(_any_call(pd.Series(_sweep_verdicts(rng, shift, paired))) for _ in range(trials))
    assert_rate_at_most(calls, trials, promised)


def test_a_5_percent_shift_is_called_in_paired_rounds():
    """Called at one point in 95% of 1,000 paired comparisons of 10 rounds; unpaired,
    the round's 5% swamps the same shift: pairing is what finds it."""
    rng = np.random.default_rng(2)
    called, trials = 0, 1000
    for _ in range(trials):
        arms = paired_arms(rng, 0.05, 10)
        (verdict,) = judge([paired_ratio_test(*arms, TOLERANCE.default)], "higher")
        called += verdict.word == "faster"
    assert_rate_at_least(called, trials, 0.95)
    unpaired = [
        _unpaired_sweep(rng, 0.0).compare(_unpaired_sweep(rng, 0.05)).loc[0, "verdict"] == "faster"
        for _ in range(100)
    ]
    assert np.mean(unpaired) < called / trials - 0.3


@pytest.mark.slow
def test_runs_that_drift_call_falsely_at_a_1_percent_tolerance_and_not_at_their_floor(
    tmp_path, monkeypatch
):
    """Separate runs each off by its own 3%: at the 1% tolerance over a fifth of A/A
    comparisons call something; at a noise floor measured from 5 such runs, at most
    5% of 200 do (docs/comparing.md, "How sure"). 200 fail a rule 2.5 times as bad with
    at least 92% probability (6% called at the tolerance, 12.5% at the floor)."""
    monkeypatch.setenv(noise_floor.STORE_ENV, str(tmp_path / "noise.json"))
    rng = np.random.default_rng(8)

    def drifting() -> ResultSet:
        return unpaired_run(rng, rng.lognormal(0, 0.03), 10)

    trials, at_tolerance, at_floor = 200, 0, 0
    for _ in range(trials):
        a, b = drifting(), drifting()
        at_tolerance += _any_call(a.compare(b, tolerance=TOLERANCE.default)["verdict"])
        noise_floor.save([drifting() for _ in range(5)])
        at_floor += _any_call(a.compare(b)["verdict"])
    assert_rate_at_least(at_tolerance, trials, 0.15)
    assert_rate_at_most(at_floor, trials, 0.05)


def test_same_only_inside_the_tolerance_and_calls_only_beyond_it():
    rng = np.random.default_rng(3)
    tolerance = TOLERANCE.default
    tables = [
        versus(paired_sweep(rng, shift, rounds=12), "copy", True, False, "msgs_per_s", ["size"])
        for shift in (0.0, 0.005, 0.01, 0.02, 0.05) * 6
    ]
    table = pd.concat(tables, ignore_index=True)
    same = table[table["verdict"] == "same"]
    assert len(same) > 0
    assert (same["ci_low"] >= 1 - tolerance).all() and (same["ci_high"] <= 1 + tolerance).all()
    assert (same["ci_level"] >= 0.95).all()
    faster = table[table["verdict"] == "faster"]
    assert len(faster) > 0 and (faster["ci_low"] > 1 + tolerance).all()
    assert (faster["p_adjusted"] < 0.05).all()
    rest = table[table["verdict"] == "inconclusive"]
    assert (rest["reason"].str.len() > 0).all()
    assert set(table["verdict"]) <= {"faster", "slower", "same", "inconclusive"}


def test_three_samples_a_side_are_inconclusive_and_say_what_is_missing():
    base = [100.0, 101.0, 99.0]
    cand = [150.0, 151.0, 149.0]  # +50%, every time
    (paired,) = judge([paired_ratio_test(base, cand)], "higher")
    assert paired.word == "inconclusive"
    assert paired.reason.startswith("need at least 6 pairs of samples (rounds)")
    table = ResultSet("thr", _unpaired_sweep(np.random.default_rng(4), 0).rows[:3]).compare(
        ResultSet(
            "thr",
            [
                {**r, "msgs_per_s": r["msgs_per_s"] * 1.5}
                for r in _unpaired_sweep(np.random.default_rng(5), 0).rows[:3]
            ],
        )
    )
    assert list(table["verdict"]) == ["inconclusive"]
    assert table.loc[0, "reason"].startswith("need at least 4 samples a side")


@pytest.mark.parametrize(("points", "fewest"), [(1, 6), (3, 7), (6, 8), (12, 9)])
def test_the_rounds_a_comparison_of_m_points_can_be_called_in(points, fewest):
    """docs/comparing.md, "How many rounds": a +50% difference every round, as large as
    any, is called at every point from ``fewest`` rounds and at none with one fewer
    (Holm's first step asks for p < 0.05 / m)."""

    def verdicts(rounds: int) -> list:
        base = [100.0 + i for i in range(rounds)]
        tests = [
            paired_ratio_test(base, [1.5 * b + 0.01 * i for i, b in enumerate(base)], 0.01)
            for _ in range(points)
        ]
        return judge(tests, "higher", 0.01)

    assert [v.word for v in verdicts(fewest)] == ["faster"] * points
    short = verdicts(fewest - 1)
    assert [v.word for v in short] == ["inconclusive"] * points
    assert short[0].reason.startswith(f"need at least {fewest} pairs of samples (rounds)")


def test_one_stalled_sample_moves_the_pooled_p99():
    """Ten samples of 2,000 round trips near 80 µs; one has 300 of about 5 ms."""
    rng = np.random.default_rng(6)
    samples = [rng.lognormal(np.log(80), 0.15, 2000) for _ in range(10)]
    samples[4] = np.concatenate([samples[4][:1700], rng.normal(5000, 200, 300)])
    rows, distributions = [], []
    for i, rtt in enumerate(samples):
        point = {
            "size": 64,
            "copy": True,
            "transport": "tcp",
            "peer": "process",
            "loop": "python",
            "copy_threshold": 65536,
            "curve": False,
            "rate": 0.0,
        }
        p50, p90, p99, p999 = np.percentile(rtt, [50, 90, 99, 99.9])
        rows.append(
            {
                **point,
                "frames": 1,
                "sample": i,
                "run": "r",
                "round_trips": len(rtt),
                "sample_mean_us": rtt.mean(),
                "sample_p50_us": p50,
                "sample_p90_us": p90,
                "sample_p99_us": p99,
                "sample_p999_us": p999,
                "max_us": rtt.max(),
                "min_us": rtt.min(),
            }
        )
        distributions.append(
            {
                **point,
                "frames": 1,
                "sample": i,
                "run": "r",
                "rtt_hist": LogHistogram.of(rtt).to_json(),
            }
        )
    (point,) = ResultSet("lat", rows, distributions=distributions).summary().to_dict("records")
    every = np.concatenate(samples)
    assert point["sample_p99_us"] < 200  # the median of the samples' p99s hides it
    assert point["p99_us"] == pytest.approx(
        np.percentile(every, 99, method="inverted_cdf"), rel=0.01
    )
    assert point["p99_us"] > 4000 and point["round_trips"] == 20_000
    assert point["mean_us"] == pytest.approx(every.mean())
    assert point["mean_us"] > 1.5 * point["sample_mean_us"]
    # The line's headline is the statistic its interval belongs to, not the pooled mean
    # the stall dragged outside it; the pooled figures are named as such.
    line = summary_line("lat", point)
    found = re.search(
        r"mean ([\d.,]+) µs \(n=10, \d+% CI ([\d.,]+) to ([\d.,]+)\); pooled p50", line
    )
    assert found, line
    mean, low, high = (float(g.replace(",", "")) for g in found.groups())
    assert low <= mean <= high and mean == pytest.approx(point["sample_mean_us"], rel=0.01)


@pytest.mark.slow
def test_precision_stops_on_a_99_percent_interval_and_keeps_its_95_percent():
    """Stopping at the first narrow 95% interval covered 0.92 here; checking at 99%
    and reporting the 95% interval keeps its 95% over 1,000 runs."""
    rng = np.random.default_rng(7)
    hits, trials = 0, 1000
    for _ in range(trials):
        values = list(rng.lognormal(0, 0.1, 10))  # true median 1
        while relative_halfwidth(values, PRECISION_LEVEL) > 0.03 and len(values) < 400:
            values.append(rng.lognormal(0, 0.1))
        low, high, level = median_ci(values)
        hits += low <= 1 <= high
        assert level >= 0.95
    assert_rate_at_least(hits, trials, 0.95)
