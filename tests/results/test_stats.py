"""Intervals, comparisons and derived findings on fake samples (no sockets)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.statistics.analysis import (
    map_efficiency_threshold,
    zero_copy_threshold,
)
from zmqbench_magic.results.statistics.histogram import RELATIVE_ERROR, LogHistogram
from zmqbench_magic.results.statistics.stats import (
    RatioTest,
    _rank_sum_p,
    _signed_rank_p,
    holm,
    median_ci,
    paired_ratio_test,
    smallest_p,
    unpaired_ratio_test,
)
from zmqbench_magic.results.statistics.verdict import judge


def test_median_interval_is_the_binomial_order_statistics():
    # n = 10: [x(2), x(9)] holds the median with probability 1 - 2 * 11/1024.
    low, high, level = median_ci(list(range(10, 0, -1)))
    assert (low, high) == (2.0, 9.0) and level == pytest.approx(1 - 22 / 1024)
    # n = 5 cannot reach 95%: the widest interval, and the level it really has.
    assert median_ci([3, 1, 2, 5, 4]) == (1.0, 5.0, pytest.approx(1 - 2 / 32))
    assert median_ci([7.0])[2] == 0.0


def test_median_interval_covers_the_true_median_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(2000):
        low, high, _ = median_ci(rng.lognormal(0, 1, 10))  # true median: 1
        hits += low <= 1 <= high
    assert 0.95 <= hits / 2000 <= 1.0


def test_the_median_interval_is_scipys_binomial_order_statistics():
    # The interval [x(j), x(n+1-j)] misses the median when at most j-1 samples lie
    # on one side of it: twice a Binomial(n, 1/2) tail, as scipy computes it.
    for n in range(2, 40):
        low, high, level = median_ci(list(range(n)))
        j = int(low) + 1
        assert level == pytest.approx(1 - 2 * scipy_stats.binom.cdf(j - 1, n, 0.5))
        assert high == n - j and (level >= 0.95 or j == 1)


def test_the_ratio_tests_give_scipys_p_values_on_the_logs():
    rng = np.random.default_rng(11)
    for n in (3, 6, 10, 25, 60):
        base, cand = rng.lognormal(0, 0.05, n), rng.lognormal(0.02, 0.05, n)
        paired = paired_ratio_test(base, cand)
        expected = scipy_stats.wilcoxon(np.log(cand) - np.log(base)).pvalue
        assert paired.p_value == pytest.approx(expected, rel=1e-12) and paired.paired
        unpaired = unpaired_ratio_test(base, cand)
        expected = scipy_stats.mannwhitneyu(np.log(cand), np.log(base)).pvalue
        assert unpaired.p_value == pytest.approx(expected, rel=1e-12) and not unpaired.paired
    # The smallest p-values, as scipy gives them for a total separation.
    assert smallest_p(5, paired=True) == pytest.approx(2 / 32)
    assert smallest_p(3, paired=False) == pytest.approx(0.1)
    assert unpaired_ratio_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]).p_value == pytest.approx(2 / 252)


def test_the_signed_rank_count_is_scipys_exact_test_and_scipy_answers_the_rest():
    """The p-values the module counts itself (tie-free, no zero, at most 50 pairs) are
    scipy's to the last bits, each way, at every size; differences with ties or zeros
    (scipy's permutation test up to 13, then its normal one), or more than 50 (normal),
    are scipy's own. Known answers: 5 of 5 positive, P(T+ >= 15) = 1/32; of ranks 1..3
    with 3 positive, P(T+ >= 3) = 5/8 and with 1 positive, P(T+ <= 1) = 2/8."""
    rng = np.random.default_rng(12)
    cases = [rng.normal(shift, 1, n) for n in [*range(2, 51), 51, 60] for shift in (0.0, 0.5)]
    # Ties, and now and then a zero (scipy's permutation test is slow: a few sizes).
    cases += [np.round(rng.normal(0.3, 1, n), 1) for n in (2, 5, 9, 13, 14, 30, 51)]
    for differences in cases:
        for alternative in ("greater", "less"):
            expected = scipy_stats.wilcoxon(differences, alternative=alternative).pvalue
            got = _signed_rank_p(differences, alternative)
            assert got == pytest.approx(expected, rel=1e-12), (differences, alternative)
    assert _signed_rank_p(np.arange(1.0, 6.0), "greater") == 1 / 32
    assert _signed_rank_p(np.array([-1.0, -2.0, 3.0]), "greater") == 5 / 8
    assert _signed_rank_p(np.array([1.0, -2.0, -3.0]), "less") == 2 / 8


def test_the_rank_sum_normal_test_is_scipys_and_scipy_answers_the_rest():
    """The Mann-Whitney p-values the module computes itself (more than 8 samples a
    side, or ties: scipy's normal approximation) are scipy's to the last bits; the
    rest (scipy's exact test) are scipy's own. Known answer: 10 against 10, all above,
    U = 100, z = (100 - 50 - 0.5) / sqrt(100 * 21 / 12)."""
    rng = np.random.default_rng(13)
    sizes = [(m, n) for m in (2, 5, 8, 9, 12, 30) for n in (3, 8, 9, 10, 25)]
    cases = [(rng.normal(0.3, 1, m), rng.normal(0, 1, n)) for m, n in sizes]
    cases += [(np.round(a, 1), np.round(b, 1)) for a, b in cases]  # with ties
    for candidate, baseline in cases:
        for alternative in ("greater", "less"):
            expected = scipy_stats.mannwhitneyu(candidate, baseline, alternative=alternative)
            got = _rank_sum_p(candidate, baseline, alternative)
            assert got == pytest.approx(expected.pvalue, rel=1e-12), (candidate, baseline)
    above = _rank_sum_p(np.arange(10.0) + 100, np.arange(10.0), "greater")
    assert above == pytest.approx(scipy_stats.norm.sf(49.5 / math.sqrt(175)), rel=1e-12)


def test_an_interval_excludes_1_exactly_when_the_test_rejects():
    # The interval is the test inverted: the two never disagree (exact sizes).
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(6, 30))
        base, cand = rng.lognormal(0, 0.05, n), rng.lognormal(0.03, 0.05, n)
        for test in (paired_ratio_test(base, cand), unpaired_ratio_test(base, cand[: n // 2 + 3])):
            assert test.level >= 0.95 and test.low <= test.ratio <= test.high
            assert (test.low > 1 or test.high < 1) == (test.p_value < 0.05)


def test_the_tolerance_moves_the_tested_edge():
    base = [100, 101, 99, 100, 102, 98, 100, 101, 99, 100]
    cand = [v * 1.03 for v in base]  # exactly 3% faster in every round
    assert paired_ratio_test(base, cand, tolerance=0.02).p_value < 0.01
    assert paired_ratio_test(base, cand, tolerance=0.05).p_value == 1.0
    with pytest.raises(ValueError, match="tolerance must be a fraction from 0 up"):
        paired_ratio_test(base, cand, tolerance=-0.5)
    # A user's own tolerance is held to its declaration (a noise floor may be wider).
    one = ResultSet("thr", [{"size": 1, "sample": i, "msgs_per_s": v} for i, v in enumerate(base)])
    with pytest.raises(ValueError, match=r"tolerance must be from 0 to 0\.5, got 1\.5"):
        one.compare(one, tolerance=1.5)
    arms = ResultSet(
        "thr",
        [
            {"size": 1, "copy": c, "sample": i, "msgs_per_s": v}
            for c in (True, False)
            for i, v in enumerate(base)
        ],
    )
    with pytest.raises(ValueError, match=r"tolerance must be from 0 to 0\.5, got 0\.7"):
        arms.versus("copy", True, False, tolerance=0.7)
    with pytest.raises(ValueError, match="'nope' is not a column of this result"):
        arms.versus("nope", True, False)
    with pytest.raises(ValueError, match="paired samples need equal counts"):
        paired_ratio_test(base, cand[:-1])


def test_holm_against_its_definition_and_scipys_benjamini_hochberg():
    p = [0.01, 0.04, 0.03, 0.005]
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, then running maxima.
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(2)
    for _ in range(200):
        values = rng.uniform(0, 0.2, 12)
        # Holm never calls a point that Benjamini-Hochberg would not.
        assert (holm(values) >= scipy_stats.false_discovery_control(values) - 1e-12).all()
    assert np.isnan(holm([0.01, float("nan")])[1])


def test_histogram_reads_back_within_one_percent():
    values = np.random.default_rng(0).lognormal(4, 1.2, 50_000)
    histogram = LogHistogram.of(values)
    for q in (50, 90, 99, 99.9):
        exact = np.percentile(values, q, method="inverted_cdf")  # a measured value
        assert histogram.percentile(q) == pytest.approx(exact, rel=RELATIVE_ERROR)
    assert RELATIVE_ERROR < 0.01 and histogram.total == len(values)
    merged = LogHistogram.of(values[:10]) + LogHistogram.of(values[10:])
    assert merged == histogram
    assert LogHistogram.from_json(histogram.to_json()) == histogram


def _thr_rows(rates: dict[tuple[int, bool], list[float]], run: str = "r") -> list[dict]:
    rows = []
    for (size, copy), values in rates.items():
        for sample, value in enumerate(values):
            rows.append(
                {
                    "size": size,
                    "copy": copy,
                    "transport": "tcp",
                    "peer": "process",
                    "copy_threshold": 65536,
                    "frames": 1,
                    "count": 100,
                    "sample": sample,
                    "msgs_per_s": value,
                    "send_msgs_per_s": math.nan,
                    "mbit_per_s": 1.0,
                    "run": run,
                }
            )
    return rows


def _noisy(center: float, n: int = 8, spread: float = 0.02, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(center * (1 + rng.uniform(-spread, spread, n)))


def test_summary_gives_n_the_interval_and_the_true_extremes():
    rows = _thr_rows({(100, True): [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]})
    (point,) = ResultSet("thr", rows).summary().to_dict("records")
    assert point["n"] == 10 and point["msgs_per_s"] == 14.5
    assert (point["ci_low"], point["ci_high"]) == (11, 18)
    lat = [
        {
            "size": 1,
            "copy": True,
            "transport": "tcp",
            "peer": "process",
            "copy_threshold": 65536,
            "frames": 1,
            "sample_mean_us": 10.0,
            "sample_p50_us": 10.0,
            "sample_p90_us": 11.0,
            "sample_p99_us": 12.0,
            "sample_p999_us": 13.0,
            "max_us": m,
            "min_us": m / 10,
        }
        for m in (20.0, 900.0, 30.0)
    ]
    (point,) = ResultSet("lat", lat).summary().to_dict("records")
    assert point["max_us"] == 900.0 and point["min_us"] == 2.0  # not medians of samples


def test_compare_gives_verdicts_from_the_metric_direction():
    base = ResultSet(
        "thr",
        _thr_rows(
            {
                (100, True): _noisy(1000, seed=1),
                (1024, True): _noisy(500, seed=2),
                (4096, True): _noisy(200, seed=3),
            },
            "monday",
        ),
    )
    cand = ResultSet(
        "thr",
        _thr_rows(
            {
                (100, True): _noisy(1300, seed=4),
                (1024, True): _noisy(400, seed=5),
                (4096, True): _noisy(200, seed=6),
            },
            "tuesday",
        ),
    )
    table = base.compare(cand)
    # The third point did not move, but ±2% noise and 8 samples a side cannot show it
    # within the ±1% tolerance: inconclusive, and why. Within ±5% it is the same.
    assert list(table["verdict"]) == ["faster", "slower", "inconclusive"]
    assert "wider than the ±1.0% tolerance" in table.loc[2, "reason"]
    assert table.loc[2, "ci_low"] < 1.0 < table.loc[2, "ci_high"]
    assert base.compare(cand, tolerance=0.05).loc[2, "verdict"] == "same"
    # The tolerance the reason names takes the interval whole: "same" there.
    reach = float(re.search(r"a tolerance of ±([\d.]+)%", table.loc[2, "reason"])[1]) / 100
    assert base.compare(cand, tolerance=reach + 0.001).loc[2, "verdict"] == "same"
    assert table.loc[0, "ratio"] == pytest.approx(1.3, rel=0.03)
    assert (table["ci_low"] <= table["ratio"]).all() and (table["ratio"] <= table["ci_high"]).all()
    assert table.loc[0, "p_value"] < 0.01 and table.loc[2, "p_value"] > 0.05
    # A round trip is better lower: the same numbers as latency read the other way.
    lat = ResultSet("lat", [{**r, "sample_mean_us": r.pop("msgs_per_s")} for r in base.rows])
    lat2 = ResultSet("lat", [{**r, "sample_mean_us": r.pop("msgs_per_s")} for r in cand.rows])
    assert list(lat.compare(lat2)["verdict"]) == ["slower", "faster", "inconclusive"]


def test_compare_matches_on_the_columns_asked_for():
    tcp = ResultSet("thr", _thr_rows({(100, True): _noisy(1000)}))
    inproc_rows = [{**r, "transport": "inproc", "peer": "thread"} for r in tcp.rows]
    inproc = ResultSet("thr", [{**r, "msgs_per_s": r["msgs_per_s"] * 3} for r in inproc_rows])
    assert tcp.compare(inproc).empty  # no point is the same point
    table = tcp.compare(inproc, match=["size", "copy"])
    assert list(table["verdict"]) == ["faster"] and table.loc[0, "ratio"] == pytest.approx(3)
    with pytest.raises(ValueError, match="match: colour not in both results"):
        tcp.compare(inproc, match=["colour"])


def test_joined_runs_keep_each_identity_and_environment():
    a = ResultSet(
        "thr",
        _thr_rows({(100, True): [1.0, 2.0]}, "a"),
        metadata={"run": "a", "run_id": "id-a", "host": "left"},
    )
    b = ResultSet(
        "thr",
        _thr_rows({(100, True): [5.0, 6.0]}, "a"),
        metadata={"run": "a", "run_id": "id-b", "host": "right"},
    )
    joined = a + b
    assert set(joined.df["run"]) == {"a", "a#2"}  # same label, two runs
    assert {m["host"] for m in joined.runs.values()} == {"left", "right"}
    summary = joined.summary()
    assert list(summary["run"]) == ["a", "a#2"] and list(summary["msgs_per_s"]) == [1.5, 5.5]


def _speedup_rows(ratios: dict[int, float], spread: float = 0.02) -> pd.DataFrame:
    rates = {}
    for i, (size, ratio) in enumerate(ratios.items()):
        rates[(size, True)] = _noisy(1000, spread=spread, seed=2 * i)
        rates[(size, False)] = _noisy(1000 * ratio, spread=spread, seed=2 * i + 1)
    return pd.DataFrame(_thr_rows(rates))


def test_a_crossover_is_reported_only_where_every_larger_size_agrees():
    found = zero_copy_threshold(_speedup_rows({1000: 0.6, 10000: 0.9, 100000: 1.5, 10**6: 2.0}))
    assert found.stable and (found.low, found.high) == (10000, 100000)
    assert 10000 < found.estimate < 100000
    # Zero-copy ahead at 64k but behind again at 1M: no stable crossover.
    fallback = zero_copy_threshold(_speedup_rows({1000: 0.6, 65536: 1.4, 10**6: 0.83}))
    assert not fallback.stable and fallback.estimate is None
    assert fallback.message.startswith(
        "no stable zero-copy crossover in the measured range: "
        "at the largest size (1000000 B), that zero-copy"
    )
    # Too noisy at the largest size to tell: no claim either.
    noisy = zero_copy_threshold(_speedup_rows({1000: 0.6, 10**6: 1.05}, spread=0.3))
    assert not noisy.stable


def test_map_efficiency_threshold_is_interpolated_between_stable_durations():
    durations = [0.001] * 6 + [0.01] * 6 + [0.1] * 6
    efficiencies = _noisy(0.2, 6) + _noisy(0.6, 6) + _noisy(0.95, 6)
    df = pd.DataFrame({"duration": durations, "efficiency": efficiencies})
    found = map_efficiency_threshold(df)
    assert found.stable and (found.low, found.high) == (0.001, 0.01)
    assert found.estimate == pytest.approx(10 ** (-3 + 0.75), rel=0.05)


def test_a_tolerance_and_a_common_shift_are_named():
    points = {(s, True): _noisy(1000, seed=s) for s in (100, 1024, 4096, 65536)}
    base = ResultSet("thr", _thr_rows(points))
    slower = {k: [v * 0.87 for v in values] for k, values in points.items()}
    table = base.compare(ResultSet("thr", _thr_rows(slower)))
    assert set(table["verdict"]) == {"slower"}
    # Every point down by the same 13%: the finding, as the verdicts say, with the
    # caution that across two runs the machine's own speed can do this.
    shift = table.attrs["shift"]
    assert shift.startswith("every point moved the same way, by about -13.0% (verdicts: 4 slower")
    assert "measure both arms in one run" in shift
    lenient = base.compare(ResultSet("thr", _thr_rows(slower)), tolerance=0.15)
    assert set(lenient["verdict"]) == {"same"}
    mixed = {
        k: [v * (0.87 if k[0] < 4096 else 1.2) for v in values] for k, values in points.items()
    }
    assert base.compare(ResultSet("thr", _thr_rows(mixed))).attrs["shift"] == ""


def test_the_statistics_docstring_examples_hold():
    import doctest

    from zmqbench_magic.results.statistics import stats, verdict

    for module in (stats, verdict):
        assert doctest.testmod(module).failed == 0, module.__name__


@pytest.mark.parametrize("floor", [0.99, 1.0, 1.27])
def test_a_noise_floor_of_100_percent_or_more_tells_no_decrease_from_noise(floor):
    """A busy host's runs can land twice apart: the band then reaches zero, and only a
    rise beyond it is called (a floor this wide once stopped a comparison with an
    error)."""
    rng = np.random.default_rng(7)
    base = 100 * rng.lognormal(0, 0.05, 10)
    for test in (paired_ratio_test, unpaired_ratio_test):
        lower = judge([test(base, base * 0.3, floor)], "higher")[0].word
        higher = judge([test(base, base * 3.0, floor)], "higher")[0].word
        assert (lower, higher) == ("inconclusive", "faster"), test.__name__
    with pytest.raises(ValueError, match="tolerance must be a fraction from 0 up"):
        unpaired_ratio_test(base, base, -0.1)


def test_an_interval_wholly_on_one_side_of_1_is_not_told_to_widen_the_band():
    """1.005 to 1.080 with a ±1% band: no tolerance calls it faster, and only one of
    8% would take it as the same; more rounds are what it needs."""
    test = RatioTest(1.04, 1.005, 1.08, 0.95, 0.2, 8, 0.004, True)
    (verdict,) = judge([test], "higher", 0.01)
    assert verdict.word == "inconclusive"
    assert verdict.reason.endswith("wholly above 1 and into the band: more rounds narrow it")
    below = RatioTest(0.96, 0.92, 0.995, 0.95, 0.2, 8, 0.004, True)
    assert "wholly below 1" in judge([below], "higher", 0.01)[0].reason


def test_an_interval_reaching_past_twice_or_zero_is_told_only_rounds_help():
    """0.4 to 2.3 around 1: a tolerance that took it whole would be ±130%, a band that
    takes in a ratio of zero; the reason names rounds alone. 0.9 to 1.2 names both."""
    wide = RatioTest(1.1, 0.4, 2.3, 0.95, 0.5, 8, 0.004, True)
    (verdict,) = judge([wide], "higher", 0.01)
    assert verdict.reason.endswith(": only more rounds narrow it"), verdict.reason
    narrow = RatioTest(1.05, 0.9, 1.2, 0.95, 0.5, 8, 0.004, True)
    (verdict,) = judge([narrow], "higher", 0.01)
    assert verdict.reason.endswith("or a tolerance of ±20.0% would take it as a whole")
