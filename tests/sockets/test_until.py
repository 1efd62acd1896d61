"""``--until decided`` on real sockets: a run that compares two arms takes rounds until
each point is decided, leaves the decided points out of the rounds after, and says
how many rounds each took; an A/A stays undecided or same; settings with nothing to
decide are refused before anything starts, in the magic and the shell alike.

The difference decided is zero-copy against copy at 4 MiB, in samples of 0.1 s: the
copy of 4 MiB per message is the work zero-copy leaves out, and it stays a factor
however busy the machine (2.4-4.5 over 8 runs taken until decided beside a load of
13 on 2 cores, decided in 4-6 rounds). At 1 MB in samples of 0.02 s the same busy
machine needed 16-55 rounds, and a busy run has measured a ratio of 0.99: a margin a
neighbour can take away. How few rounds it takes depends on how busy the machine is,
so the rounds are the verdicts bench's figure (docs/benchmarks/verdicts.md), not a
bound here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import zmqbench_magic
from zmqbench_magic import run_throughput
from zmqbench_magic.params import TOLERANCE, FloodParams
from zmqbench_magic.results.statistics.sequential import fewest_rounds
from zmqbench_magic.results.words.planning import noise_from_floor
from zmqbench_magic.results.words.text import verdict_lines

QUICK = {"min_time": 0.02, "warmup": 0, "transport": "tcp"}
# Where zero-copy is a factor, not a few percent (above): samples long enough that one
# preempted moment does not make a round.
LARGE = {**QUICK, "min_time": 0.1}
# A band no A/A on this machine leans beyond in every round.
WIDE = 0.25


def test_zero_copy_at_4_mib_is_called_faster_and_its_rounds_end_there(no_leftovers):
    r = run_throughput(size=["4M"], copy=[True, False], until="decided", max_time=300, **LARGE)
    (row,) = r.versus("copy", True, False).to_dict("records")
    assert row["verdict"] == "faster", row
    assert row["n"] >= fewest_rounds(1) and row["ci_low"] > 1.01
    # Each arm was measured in exactly the rounds that decided it.
    assert (r.df.groupby("copy").size() == row["n"]).all()
    (notes,) = (meta["notes"] for meta in r.runs.values())
    assert f"every point decided after {row['n']} round(s)" in " ".join(notes)
    (line,) = verdict_lines(r)
    decided = f"decided round by round (±1.0% tolerance): faster at every point ({row['n']} rounds)"
    assert decided in line


def test_each_point_is_measured_in_exactly_the_rounds_that_decided_it(no_leftovers):
    """Two points decide in rounds of their own (the schedule's tests show one going on
    alone): each arm of each point has as many samples as its verdict's rounds."""
    r = run_throughput(size=[64, "1M"], copy=[True, False], until="decided", max_time=60, **QUICK)
    table = r.versus("copy", True, False).set_index("size")
    counts = r.df.groupby(["size", "copy"]).size()
    for size in (64, 1 << 20):
        assert counts[size, True] == counts[size, False] == table.loc[size, "n"]
    assert r.df["sample"].max() + 1 == table["n"].max()


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_a_paired_a_and_a_ends_where_its_rounds_decide_and_is_not_called_beyond_a_wide_band(
    no_leftovers,
):
    """Two copy thresholds that copy sends never look at. At the 1% band an A/A may be
    called in up to 5% of runs by design (the rate over many runs is measured in
    ``bench/bench_verdicts.py``), and a load that lands on one arm's samples twice in a
    row on a busy machine can call one here: so this asserts what every run must show.
    The run stops at the round that decides it, or at its time with the reason; its word
    follows its own interval; beyond ±25% every round would have to lean that far the
    same way."""
    r = run_throughput(
        size=["1k"], copy_threshold=[65536, 65537], until="decided", max_time=8, **QUICK
    )
    (row,) = r.versus("copy_threshold", 65536, 65537).to_dict("records")
    # Each arm was measured in exactly the rounds the verdict rests on.
    assert (r.df.groupby("copy_threshold").size() == row["n"]).all(), row
    (notes,) = (meta["notes"] for meta in r.runs.values())
    if row["verdict"] == "inconclusive":
        assert row["reason"].startswith(f"undecided after {row['n']} round(s): "), row
        assert "max-time (8 s) spent after" in " ".join(notes)
    elif row["verdict"] == "same":
        assert 1 - TOLERANCE.default <= row["ci_low"] <= row["ci_high"] <= 1 + TOLERANCE.default
    else:
        assert row["verdict"] in ("faster", "slower"), row
        outside = row["ci_low"] > 1 + TOLERANCE.default or row["ci_high"] < 1 - TOLERANCE.default
        assert outside, row
    wide = r.versus("copy_threshold", 65536, 65537, tolerance=WIDE)
    assert set(wide["verdict"]) <= {"same", "inconclusive"}, wide.to_dict("records")


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("--size 1k --until decided", r"--until decided compares two arms .* this run has none"),
        (
            "--copy true false --until decided --precision 5%",
            r"--until decided and --precision both add rounds",
        ),
    ],
)
def test_the_magic_refuses_a_run_with_nothing_to_decide(ip, line, named):
    with pytest.raises(UsageError, match=named):
        ip.run_line_magic("zmqthr", line)


def test_a_flood_refuses_to_decide_arms_measured_in_separate_blocks():
    with pytest.raises(ValueError, match=r"--backend's two values each take a cluster of"):
        FloodParams(backend=["ipyparallel", "dask"], until="decided")
    with pytest.raises(ValueError, match=r"--engines's two values"):
        FloodParams(engines=[1, 2], until="decided")
    assert FloodParams(view=["lb", "direct"], until="decided").compared_arms() == (
        "view",
        "lb",
        "direct",
    )


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_the_shell_decides_and_prints_each_point_s_rounds(tmp_path):
    zmqbench = Path(sys.executable).with_name("zmqbench")
    saved = tmp_path / "r.json"
    done = subprocess.run(
        [
            str(zmqbench),
            "thr",
            "--size",
            "4M",
            "--copy",
            "true",
            "false",
            "--until",
            "decided",
            "--max-time",
            "120",
            "--min-time",
            str(LARGE["min_time"]),
            "--warmup",
            "0",
            "--json",
            str(saved),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = zmqbench_magic.load(saved)
    (row,) = result.versus("copy", True, False).to_dict("records")
    assert f"faster at every point ({row['n']} rounds)" in " ".join(done.stdout.split())
    assert result.settings["until"] == "decided"


def test_a_plan_prints_the_rounds_each_difference_needs_and_asks_for_a_noise(tmp_path):
    zmqbench = Path(sys.executable).with_name("zmqbench")
    done = subprocess.run(
        [str(zmqbench), "plan", "--noise", "3%", "--points", "12"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "  +5%: about 15 rounds (faster or slower)" in done.stdout
    assert "  +100%: about 5 rounds (faster or slower); no fewer than 5" in done.stdout
    empty = subprocess.run(
        [str(zmqbench), "plan"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ZMQBENCH_NOISE_FILE": str(tmp_path / "none.json")},
    )
    assert empty.returncode == 2 and "give --noise, or measure it" in empty.stderr
    floors = {"a": {"within_run": 0.02}, "b": {"within_run": 0.05}}
    assert noise_from_floor(floors) == pytest.approx(0.05 * 2**0.5)
    assert noise_from_floor({}) is None


@pytest.mark.slow
def test_a_ci_gate_runs_until_decided_and_passes_an_a_and_a():
    """Two arms of this interpreter (fresh driver processes each round), gated on any
    call and on undecided: a ±50% tolerance decides their sameness within the time."""
    zmqbench = Path(sys.executable).with_name("zmqbench")
    done = subprocess.run(
        [str(zmqbench), "thr", "--size", "1k", "--python", "a=kernel", "b=kernel",
         "--until", "decided", "--tolerance", "50%", "--max-time", "240", "--min-time",
         "0.05", "--fail-on", "any", "inconclusive"],
        capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    out = " ".join(done.stdout.split())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "decided round by round (±50.0% tolerance): same at every point (" in out
    assert out.endswith("gate --fail-on any inconclusive: passed")
