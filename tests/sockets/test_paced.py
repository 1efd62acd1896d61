"""Latency under load (``%zmqlat --rate``): the open loop on real sockets over all three
transports and both loops; a far end frozen mid-sample shows in every message it
delayed (no coordinated omission); a rate the loop cannot hold is flagged; a killed far
end is named within a second; the knee, the chart, the magic and the panel."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest
from conftest import sampling
from far_ends import find_far_end, kill_later
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from zmqbench_magic import run_latency
from zmqbench_magic.charts import chart_to_vega, default_chart, load_chart
from zmqbench_magic.params import LatencyParams
from zmqbench_magic.params.sockets import HELD_FRACTION
from zmqbench_magic.params.units import format_rate, parse_rate
from zmqbench_magic.results.statistics.knee import load_knees
from zmqbench_magic.sockets.kernel.link import Link, PeerError
from zmqbench_magic.sockets.loops import paced
from zmqbench_magic.sockets.loops.paced import paced_sample
from zmqbench_magic.sockets.payload import Payload

BOTH = ["python", "native"]
# An open loop's sample is timed (0.05 s at least), one round.
QUICK = {"repeat": 1, "warmup": 0, "min_time": 0.05}


def test_rates_are_read_in_thousands_and_bad_ones_are_named():
    assert parse_rate("10k") == 10_000 and parse_rate("1.5M") == 1_500_000
    assert parse_rate("250/s") == 250 and format_rate(12_500) == "12.5k"
    assert LatencyParams(rate=["1k", 0]).rate == (1000.0, 0.0)
    allowed = r"rate must be 0 \(unpaced\) or from 10 msgs/s to 10M msgs/s"
    with pytest.raises(ValueError, match=allowed + ", got 5$"):
        LatencyParams(rate=5)
    with pytest.raises(ValueError, match=allowed + ", got 20M$"):
        LatencyParams(rate="20M")
    with pytest.raises(ValueError, match=r"rate: expected messages per second .* got 'fast'"):
        LatencyParams(rate="fast")
    with pytest.raises(ValueError, match=r"count must be 0 .* at least 2 with an offered rate"):
        LatencyParams(rate="1k", count=1)


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_an_offered_rate_is_held_on_each_transport_by_both_loops(transport, no_leftovers):
    # Samples of 0.3 s (600 messages), so that a healthy loop's rate is what it shows.
    quick = {**QUICK, "min_time": 0.3}
    result = run_latency(size=64, rate="2k", transport=transport, loop=BOTH, **quick)
    df = result.df
    assert sorted(df["loop"]) == sorted(BOTH) and set(df["rate"]) == {2000.0}
    # Held means answered at 95% of the rate or more; whether this machine keeps 2k
    # msgs/s while it is busy is a figure (bench_load.py), not a test's to assert.
    assert (df["held"] == (df["achieved_per_s"] >= HELD_FRACTION * 2000)).all()
    # Never more than offered: replies over first intended send to last reply.
    assert ((df["achieved_per_s"] > 0) & (df["achieved_per_s"] <= 2000)).all()
    assert (df["min_us"] > 0).all() and (df["sample_p50_us"] <= df["sample_p99_us"]).all()
    assert (df["sample_p99_us"] <= df["max_us"]).all() and (df["send_lag_p99_us"] >= 0).all()
    assert {d["loop"] for d in result.distributions} == set(BOTH)


def test_the_closed_loop_has_no_schedule_to_be_late_for(no_leftovers):
    df = run_latency(size=64, rate=[0, "1k"], count=200, repeat=1, warmup=0).df
    closed, paced = df[df["rate"] == 0].iloc[0], df[df["rate"] > 0].iloc[0]
    assert np.isnan(closed["send_lag_p99_us"]) and closed["held"]
    assert closed["achieved_per_s"] == pytest.approx(1e6 / closed["sample_mean_us"])
    assert paced["send_lag_p99_us"] >= 0


@pytest.mark.parametrize("loop", BOTH)
def test_a_frozen_far_end_shows_in_every_message_it_delayed(loop, monkeypatch, no_leftovers):
    """The far end is stopped for 0.2 s or more as a 1 s sample at 1k msgs/s begins.
    Timed from each message's intended send, every message meant for the stall waits
    until the far end is back, from the stall's length down to nothing: about 200, so
    p90 is near 0.1 s. A closed loop would count the stall once; an open loop timed
    from its actual sends would count only the 50 it could send before the queues
    (high-water mark 50) held it back: either would report a p90 of a round trip
    (~0.1 ms). The bounds are worked out from when the far end was really stopped and
    resumed, so a thread that wakes late on a busy machine moves them with it.

    The freezer's thread acts on the schedule's clock, which a busy machine can make it
    miss (its stop long before the schedule's first send, its resume after the last):
    the sample is taken again, up to 5 times, until a stall of at least 150 of its
    messages has ended within it, and only that one is judged."""
    began = threading.Event()
    paces: list[tuple[float, np.ndarray, np.ndarray]] = []
    name = "_pace" if loop == "python" else "_pace_native"
    pace = getattr(paced, name)

    def announced(*args: object) -> tuple[float, np.ndarray, np.ndarray]:
        began.set()
        paces.append(pace(*args))  # the schedule's start, and each send and reply
        return paces[-1]

    stall: list[float] = []

    def freeze(pid: int) -> None:
        if not began.wait(60):
            return
        os.kill(pid, signal.SIGSTOP)
        stall.append(time.perf_counter())  # stopped by now (the clock of the schedule)
        try:
            time.sleep(0.2)
        finally:
            stall.append(time.perf_counter())  # still stopped then
            os.kill(pid, signal.SIGCONT)

    staged = []  # each try's stall: its start and end, from the schedule's start (s)
    with Link("route", "tcp", "process", "127.0.0.1", 5.0, 50) as link:
        paced_sample(link, Payload.blank(64), 50, True, loop, rate=1000)  # connected, warm
        (pid,) = link.pids()
        monkeypatch.setattr(paced, name, announced)
        for _ in range(5):
            began.clear()
            stall.clear()
            freezer = threading.Thread(target=freeze, args=(pid,))
            freezer.start()
            try:
                row, _ = paced_sample(link, Payload.blank(64), 1000, True, loop, rate=1000)
            finally:
                began.set()
                freezer.join()
            stopped, resumed = stall
            start = paces[-1][0]
            staged.append((stopped - start, resumed - start))
            intended = start + np.arange(1000) / 1000
            # A message meant for the stall (2 ms in: the stop reaches the far end a
            # moment after the signal is sent) is answered only once the far end is back.
            frozen = (intended >= stopped + 2e-3) & (intended < resumed)
            if frozen.sum() >= 150 and resumed <= intended[-1]:
                break
    # The stall, 0.2 s or more, met the schedule and ended within it.
    assert frozen.sum() >= 150 and resumed <= intended[-1], f"stalls: {staged}"
    waited = np.where(frozen, resumed - intended, 0.0) * 1e6  # each one's least wait, µs
    assert row["max_us"] >= waited.max()
    assert row["sample_p90_us"] >= np.percentile(waited, 90) > 30_000, row
    # A message meant for after the stall does not carry it: each is charged its own
    # wait from its intended send, and the backlog went out at once (sends closer
    # together than the schedule's 1 ms), not a stall's length late each. How soon the
    # later ones are on time again is the machine's: with 2 cores busy five times over,
    # p50 has read 0.11-0.28 s after a stall of 0.2-0.25 s.
    _, sent_at, replied_at = paces[-1]
    own = (replied_at - intended) * 1e6
    assert row["sample_p50_us"] == pytest.approx(np.percentile(own, 50)), row
    backlog = np.flatnonzero(frozen)[60:]  # sent once the far end was back
    assert np.median(np.diff(sent_at[backlog])) < 1e-3, "the backlog was not sent at once"
    # The sender was held back, and says so: past the first 50 (the high-water mark)
    # sent into the stall, and a few more for replies already on their way as it
    # began, nothing more went out until the far end was back.
    held = frozen & (np.cumsum(frozen) > 50 + 10)
    lagged = np.where(held, resumed - intended, 0.0) * 1e6
    assert row["send_lag_p99_us"] >= np.percentile(lagged, 99) > 50_000, row


def test_a_rate_python_cannot_hold_is_flagged_never_reported_as_met(no_leftovers):
    result = run_latency(size=64, rate="5M", **QUICK)
    row = result.df.iloc[0]
    assert not row["held"] and row["achieved_per_s"] < 0.95 * 5e6
    assert any("rate not held in 1 of 1 sample(s)" in w for w in result.warnings)
    assert not result.summary()["held"].iloc[0]


@pytest.mark.parametrize("rate", ["20", "20k"])
@pytest.mark.parametrize("loop", BOTH)
def test_a_far_end_killed_mid_open_loop_is_named_with_how_it_ended(loop, rate, no_leftovers):
    """At 20k msgs/s replies are owed when it dies; at 20 msgs/s (50 ms apart) nothing
    is, and the sends fail once its connection is gone: both are noticed."""
    kill_later(find_far_end, sampling)
    with pytest.raises(PeerError, match=r"exited \(killed by signal 9 \(SIGKILL\)\)") as caught:
        run_latency(size=100, rate=rate, count=2_000_000, repeat=1, warmup=0, loop=loop, timeout=10)
    assert f"at {rate} msgs/s offered" in str(caught.value)


def _curve(p50s: list[float], held: list[bool], loop: str = "python") -> pd.DataFrame:
    rates = [1e3, 1e4, 1e5, 1e6][: len(p50s)]
    return pd.DataFrame(
        {
            "size": 1,
            "copy": True,
            "transport": "tcp",
            "peer": "process",
            "loop": loop,
            "copy_threshold": 65536,
            "rate": rates,
            "sample_p50_us": p50s,
            "sample_p99_us": [2 * p for p in p50s],
            "held": held,
        }
    )


def test_the_knee_is_the_first_rate_not_held_or_twice_the_best_median_below():
    # Spaced-out messages are slower (a wake-up each): the reference is the best below.
    knees = load_knees(_curve([200, 60, 110, 115], [True] * 4))
    assert knees["knee_per_s"].isna().all() and knees["held_up_to_per_s"].iloc[0] == 1e6
    knees = load_knees(_curve([60, 70, 150, 900], [True] * 4))
    assert knees["knee_per_s"].iloc[0] == 1e5 and knees["held_up_to_per_s"].iloc[0] == 1e4
    assert "2.5x the best below" in knees["knee_reason"].iloc[0]
    knees = load_knees(_curve([60, 70, 80, 90], [True, True, False, False]))
    assert knees["knee_per_s"].iloc[0] == 1e5 and knees["knee_reason"].iloc[0] == (
        "the rate was not held"
    )
    both = pd.concat(
        [_curve([60, 70, 150], [True] * 3), _curve([50, 55, 60], [True] * 3, "native")]
    )
    assert load_knees(both).set_index("loop")["knee_per_s"].isna().to_dict() == {
        "python": False,
        "native": True,
    }
    assert load_knees(_curve([60], [True]).assign(rate=0.0)).empty  # closed loop: no curve


def test_the_load_chart_marks_each_knee_and_names_it():
    df = pd.concat(
        [_curve([60, 70, 150, 900], [True] * 4), _curve([50, 55, 60, 70], [True] * 4, "native")]
    )
    df = df.assign(sample_p90_us=1.0, sample_p999_us=1.0, benchmark="lat")
    text = str(chart_to_vega(load_chart(df)))
    assert "knee at 100k msgs/s (python copy)" in text and "native copy" in text
    assert "round trip from intended send (µs)" in text
    one = chart_to_vega(default_chart("lat", df[df["loop"] == "python"]))
    assert "p99.9 round trip (µs)" in str(one) and "knee at 100k msgs/s" in str(one)
    flat = chart_to_vega(load_chart(df[df["loop"] == "native"]))
    assert "no knee up to the highest rate offered" in str(flat)


def test_the_magic_and_the_panel_offer_rates(ip, no_leftovers):
    with capture_output() as shown:
        result = ip.run_line_magic("zmqlat", "-o --no-chart -n 300 -r 1 --warmup 0 --rate 1k 5k")
    assert set(result.df["rate"]) == {1000.0, 5000.0}
    assert "at 5k msgs/s: mean" in shown.stdout and "achieved" in shown.stdout
    with pytest.raises(UsageError, match=r"rate must be 0 \(unpaced\) or from 10"):
        ip.run_line_magic("zmqlat", "--rate 2")
    # The cell's payload, multipart too, goes through the ROUTER and back.
    with capture_output():
        cell = ip.run_cell_magic(
            "zmqlat", "-q -o --no-chart -n 300 -r 1 --warmup 0 --rate 5k", '[b"head", b"x" * 1000]'
        )
    row = cell.df.iloc[0]
    assert (row["frames"], row["size"], row["rate"]) == (2, 1004, 5000.0)
    # Whether 5k msgs/s was held depends on the machine's load, not on the payload; what
    # it says must agree with the rate it measured.
    assert row["held"] == (row["achieved_per_s"] >= HELD_FRACTION * 5000), row
    assert 0 < row["achieved_per_s"] <= 5000
    summary = cell.summary().iloc[0]
    assert summary["p999_us"] <= summary["max_us"]
    from zmqbench_magic.widgets import LatencyPanel

    panel = LatencyPanel(rate="2k", size=64, count=200, repeat=1, warmup=0)
    assert panel.controls["rate"].value == 2000.0
    panel.run()
    panel.controls["rate"].value = 5000.0
    panel.run()
    assert sorted(panel.result.df["rate"]) == [2000.0, 5000.0]
    assert "DEALER/ROUTER" in str(chart_to_vega(panel.chart))
