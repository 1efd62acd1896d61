"""``%zmqlat --idle``: each round trip after a pause, against back to back, in one run
with a paired verdict; only where asked for, only in a closed Python loop."""

from __future__ import annotations

import math

import pytest
from IPython.core.error import UsageError

from zmqbench_magic import run_latency
from zmqbench_magic.params import LatencyParams

PAUSE = 0.05


@pytest.mark.parametrize("driver", ["kernel", "process"])
def test_round_trips_after_a_pause_are_timed_one_by_one_beside_back_to_back(driver, no_leftovers):
    result = run_latency(
        size=[64], idle=[0, PAUSE], repeat=3, warmup=0, driver=driver, min_time=0.2
    )
    paused = result.df[result.df["idle"] == PAUSE]
    # As many pauses as fill min-time: each sample sat through all of them.
    assert set(paused["count"]) == {math.ceil(0.2 / PAUSE)}
    assert (paused["elapsed_s"] >= paused["count"] * PAUSE).all()
    assert (paused["round_trips"] == paused["count"]).all()
    text = str(result)
    assert "tcp 64 B copy after 50ms idle: mean " in text
    assert "after 50ms idle vs back to back, sample_mean_us paired by round" in text


def test_without_idle_there_is_no_idle_column():
    result = run_latency(size=[64], count=50, repeat=1, warmup=0)
    assert "idle" not in result.df.columns


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"idle": [0.1], "rate": [100]}, "--idle pauses a closed loop: leave out --rate"),
        ({"idle": [0.1], "loop": ["native"]}, "the native loop runs back to back"),
        ({"idle": [5], "timeout": 2}, "idle 5s: the far end waits at most --timeout 2"),
        ({"idle": [120]}, r"idle must be 0 \(back to back\) or from 1ms to 60s, got 120"),
    ],
)
def test_a_pause_the_loop_cannot_take_is_refused_naming_why(settings, words, ip):
    with pytest.raises(ValueError, match=words):
        LatencyParams(**settings)


def test_the_magic_takes_idle_and_names_a_bad_one(ip):
    with pytest.raises(UsageError, match=r"idle must be 0 \(back to back\) or from 1ms"):
        ip.run_line_magic("zmqlat", "--idle 0 90s")
