"""What the words say of a run: each inconclusive point keeps its own reason."""

from __future__ import annotations

import re

import numpy as np
import pytest
import zmq

from zmqbench_magic.params import KINDS
from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.words.text import socket_where, versus_line


def _two_undecided_sizes() -> ResultSet:
    """Zero-copy against copy at two sizes, neither decidable: at 100 B the arms are
    twins measured in too few rounds for a signed-rank test, at 1 MB they are too noisy
    for the ±1% band. Their reasons differ, and each must be printed with its size."""
    rng = np.random.default_rng(7)
    rows = []
    for size, rounds, noise in ((100, 3, 0.001), (1 << 20, 12, 0.3)):
        for sample in range(rounds):
            shared = rng.lognormal(0, noise)
            for copy in (True, False):
                rows.append(
                    {
                        "size": size,
                        "copy": copy,
                        "transport": "tcp",
                        "run": "r",
                        "sample": sample,
                        "msgs_per_s": 1000 * shared * rng.lognormal(0, noise),
                    }
                )
    return ResultSet("thr", tuple(rows))


def test_each_inconclusive_point_is_printed_with_its_own_reason():
    result = _two_undecided_sizes()
    table = result.versus("copy", True, False)
    assert list(table["verdict"]) == ["inconclusive", "inconclusive"], table
    small, large = table["reason"]
    assert small != large
    line = versus_line(result, "copy", True, False)
    assert f"inconclusive at 100 B ({small}), 1M B ({large})" in line, line


def test_points_that_share_a_reason_are_listed_once_before_it():
    rng = np.random.default_rng(3)
    rows = [
        {
            "size": size,
            "copy": copy,
            "run": "r",
            "sample": sample,
            "msgs_per_s": 1000 * rng.lognormal(0, 0.001),
        }
        for size in (100, 1024)
        for sample in range(3)
        for copy in (True, False)
    ]
    result = ResultSet("thr", tuple(rows))
    table = result.versus("copy", True, False)
    (reason,) = set(table["reason"])
    assert versus_line(result, "copy", True, False).endswith(
        f"inconclusive at 100 B, 1k B ({reason})"
    )


_UNIT = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
# A headline figure and the interval printed beside it: ``56.4 tasks/s ... (n=8, 88% CI
# 56.3 to 57)``, ``mean 93.6 µs (n=10, 98% CI 75.3 to 103)``.
_HEADLINE = {
    "thr": re.compile(r"^(?P<value>[\d,.]+[kMG]?) msgs/s delivered"),
    "lat": re.compile(r"mean (?P<value>[\d,.]+[kMG]?) µs"),
    "flood": re.compile(r" (?P<value>[\d,.]+[kMG]?) tasks/s"),
}
_INTERVAL = re.compile(r"\(n=\d+, \d+% CI (?P<low>[\d,.]+[kMG]?) to (?P<high>[\d,.]+[kMG]?)\)")


def _read(printed: str) -> float:
    number, unit = re.fullmatch(r"([\d,.]+)([kMG]?)", printed).groups()
    return float(number.replace(",", "")) * _UNIT[unit]


def _point(kind: str, value: float, low: float, high: float) -> dict:
    interval = {"n": 8, "ci_low": low, "ci_high": high, "ci_level": 0.93}
    if kind == "thr":
        return interval | {
            "msgs_per_s": value,
            "mbit_per_s": value * 8e-4,
            "send_msgs_per_s": value,
        }
    if kind == "lat":
        quantiles = {f"{q}_us": value for q in ("p50", "p99", "p999", "max")}
        return interval | quantiles | {"sample_mean_us": value}
    return interval | {"sent_s": 1 / value, "roundtrip_s": 2 / value, "tasks_per_s": value}


@pytest.mark.parametrize("kind", ["thr", "lat", "flood"])
def test_every_printed_figure_lies_inside_its_printed_interval(kind):
    """At every magnitude, for intervals as narrow as the figure's own last digit: the
    headline a summary line prints lies within the bounds printed beside it."""
    figures = KINDS[kind].module.figures
    rng = np.random.default_rng(11)
    values = np.concatenate([10 ** rng.uniform(-2, 8, 3000), [56.4, 65.2, 999.7, 99_951.0]])
    for value in values:
        below, above = rng.choice([0.0, 1e-4, 3e-3, 0.02, 0.3], 2)
        line = figures(_point(kind, value, value * (1 - below), value * (1 + above)))
        shown, interval = _HEADLINE[kind].search(line), _INTERVAL.search(line)
        assert shown and interval, line
        low, high = _read(interval["low"]), _read(interval["high"])
        assert low <= _read(shown["value"]) <= high, line


def test_a_point_names_its_copy_threshold_where_it_is_not_pyzmqs_default():
    """01's crossover sweep runs zero-copy at threshold 0 beside pyzmq's default: the
    two points must not read alike."""
    point = {"transport": "tcp", "size": 100, "copy": False, "pattern": "pipeline"}
    assert socket_where({**point, "copy_threshold": 0})[-1] == "copy threshold 0 B"
    assert socket_where({**point, "copy_threshold": zmq.COPY_THRESHOLD})[-1] == ""
    assert socket_where(point)[-1] == ""  # a file from before the column


def test_a_send_only_rate_below_delivered_says_what_it_timed():
    """Send-only times the first sends, the sender's own queue's worth: where that
    reads below the delivered rate, the line says so, and nowhere else."""
    from zmqbench_magic.results.words.text import throughput_figures

    point = {
        "msgs_per_s": 7_100_000.0,
        "send_msgs_per_s": 3_800_000.0,
        "send_only_count": 1000,
        "mbit_per_s": 5680.0,
        "lost": 0,
        "n": 1,
    }
    below = throughput_figures(point)
    assert below.startswith("7,100,000 msgs/s delivered, 3.8M sent, 5.68 Gbit/s ("), below
    assert below.endswith(
        "; sent reads below delivered: it times only the first 1,000 sends (what the "
        "sender's own queue holds), not the whole sample"
    ), below
    above = throughput_figures({**point, "send_msgs_per_s": 9_000_000.0})
    assert "below delivered" not in above, above
