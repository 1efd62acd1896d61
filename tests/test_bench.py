"""The benchmark scripts still run (their figures are for reading, not for asserting)."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Each runs a whole bench script (a few seconds to a minute): the slow set.
pytestmark = pytest.mark.slow

BENCH_DIR = Path(__file__).resolve().parent.parent / "bench"


def _run_bench(name: str, *args: str, timeout: int = 300, env: dict[str, str] | None = None) -> str:
    """``bench/<name> ARGS --quick`` in a fresh interpreter: its stdout, once it exited 0."""
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / name), *args, "--quick"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bench_quick_prints_a_ratio_per_figure_and_size():
    out = _run_bench("bench_zmq.py")
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("throughput", "latency"))]
    assert len(rows) == 8  # 4 sizes x (throughput, latency)
    headers = [ln.split() for ln in out.splitlines() if ln.startswith("figure")]
    # With no reference given: the project (driven from this process, and from one of
    # its own) against the bare loop, fresh, with the kernel's imports and on a thread
    # of its own, and its asyncio loop against a bare asyncio one; then the spread.
    ratios_named = ["/bare", "driver/bare", "/+pandas", "/thread", "async", "spread"]
    assert [header[-6:] for header in headers] == [ratios_named] * 2
    ratios = [float(cell) for row in rows for cell in row[-6:-1]]
    assert len(ratios) == 40
    assert all(ratio > 0 for ratio in ratios)
    # The native loop at 64 KiB, a short sample beside the table's.
    lengths = out.split("sample length at 64k")[1].splitlines()[1:]
    assert [line.split()[1] for line in lengths] == ["messages:"] * 2
    assert all("native copy=False" in line for line in lengths)


def test_flood_bench_quick_prints_its_figures_and_leaves_no_cluster():
    from conftest import cluster_processes

    out = _run_bench("bench_flood.py")
    for figure in (
        "round trip (tasks/s)",
        "sent (ms)",
        "start 2 engines",
        "grow 2 -> 3",
        "shrink 3 -> 2",
    ):
        assert figure in out
    assert cluster_processes() == []


def test_panel_bench_quick_prints_its_figures():
    out = _run_bench("bench_panel.py")
    ratio = next(ln for ln in out.splitlines() if ln.startswith("run wall time"))
    assert float(ratio.split()[-1]) > 0
    assert "redraw, one run (ms)" in out and "redraw, ten runs (ms)" in out


def test_trust_bench_quick_prints_its_figures_per_benchmark():
    out = _run_bench("bench_trust.py", timeout=600)
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("thr", "lat"))]
    assert [row[:2] for row in rows] == [["thr", "after"], ["lat", "after"]]  # no --before
    for row in rows:
        deviation, contained, same = (float(v.rstrip("%")) for v in (row[4], row[6], row[7]))
        assert deviation >= 0 and 0 <= contained <= 100 and 0 <= same <= 100


def test_soak_bench_quick_reports_its_state_and_leaves_nothing():
    from conftest import cluster_processes

    out = _run_bench("bench_soak.py", timeout=600)
    for key in ("fds", "threads", "rss_mb", "children"):
        assert any(line.startswith(key) for line in out.splitlines())
    assert cluster_processes() == []


def test_chart_bench_quick_prints_the_three_ways():
    out = _run_bench("bench_charts.py")
    for way in ("vega5 + png + svg", "JupyterChart offline", "html inline"):
        assert way in out
    assert "ratio saved bytes, JupyterChart / ours:" in out


def test_load_bench_quick_prints_both_loops_their_ratio_and_knees():
    out = _run_bench("bench_load.py")
    for line in ("1k python", "20k native", "Python / native, median p50", "knees", "python: knee"):
        assert line in out
    assert "answered at most: python" in out
    # A paced sender of each loop, offered the same rates: what each sent and delivered.
    assert "throughput at an offered rate" in out and "sent at most: python" in out
    rows = [ln.split() for ln in out.splitlines() if ln.split()[1:2] in (["python"], ["native"])]
    assert {(row[0], row[1]) for row in rows if len(row) == 7} >= {("100k", "native")}


def test_verdicts_bench_quick_prints_its_rates_and_the_real_a_and_a(tmp_path):
    out = _run_bench("bench_verdicts.py", env={**os.environ, "ZMQBENCH_REPORT_DIR": str(tmp_path)})
    fixed, _, decided = out.partition("\nlooked at after every round (--until decided)")
    rows = [ln.split() for ln in fixed.splitlines() if ln.startswith(("A/A", "+"))]
    assert len(rows) == 40  # 8 cases x 4 designs, and 8 of runs that drift
    for row in rows:
        case, rounds = " ".join(row[:-6]), int(row[-6])
        any_call, called, same, inconclusive = (float(v) for v in row[-4:])
        # Shares of 5 comparisons (--quick), and of their points, that add up.
        assert round(any_call * 5, 6) == round(any_call * 5), row
        if case.startswith("A/A"):
            assert math.isnan(called), row
            if not any_call:  # no comparison called a point: each is same or inconclusive
                assert same + inconclusive == pytest.approx(1, abs=0.01), row
        else:
            assert called + same + inconclusive <= 1.01, row
            assert bool(called) <= bool(any_call), row  # a point called is a call
        # Known answers. Five pairs cannot reach p < 0.05 (their smallest p is 0.0625).
        if case.endswith(", paired") and rounds == 5:
            assert any_call == 0, row
        # A 10% shift on 2% of noise a sample is found at every point from 10 pairs on.
        if case == "+10%, paired" and rounds >= 10:
            assert called == 1, row
    # Three rounds (--quick) can call nothing, paired or not (smallest p: 0.25 and 0.1),
    # nor claim the same (their intervals reach 75% and 90%, not 95%).
    assert "paired (one run, two identical arms): 0 of 1 comparisons" in out
    assert "unpaired (two runs): 0 of 1 comparisons" in out
    assert "unpaired at the host's noise floor (measured first): 0 of 1 comparisons" in out
    assert "verdicts over all points: paired inconclusive 1, unpaired inconclusive 1" in out
    _check_decided_tables(decided)
    # What the docs' benchmarks page includes: the same output, with what made it.
    written = (tmp_path / "verdicts.md").read_text()
    assert written.startswith("Written by `python bench/bench_verdicts.py --quick` in one run")
    assert "UTC, at commit " in written and ", pyzmq " in written and "cores" in written
    assert out.strip() in written


def _check_decided_tables(out: str) -> None:
    """The sequential part of the verdicts bench: 7 cases, each point's verdict shares
    adding up; a 2x difference decided in the fewest rounds the test can pass, the
    twins called nowhere; a plan for 5 noise levels whose rounds grow with the noise
    and shrink with the difference; the real runs' lines."""
    table = out.split("\ncase ")[1].split("\n\n")[0].splitlines()[1:]
    # Each row: the case's words, then 9 columns (own noise ... fixed design's rounds).
    rows = {" ".join(r[:-9]): r[-9:] for r in (line.split() for line in table)}
    assert len(rows) == 7 and {"A/A", "+5%", "2x"} <= set(rows), rows
    for row in rows.values():
        called, same, undecided = (float(v) for v in row[3:6])
        assert (0 if math.isnan(called) else called) + same + undecided == pytest.approx(1), row
    assert float(rows["A/A"][2]) == 0 and rows["2x"][6] == rows["2x"][7] == "5"
    plan = [ln.split() for ln in out.split("the plan (zmqbench plan)")[1].splitlines()[2:7]]
    for row in plan:
        needed = [int(v) for v in row[1:] if v != "never"]
        assert needed == sorted(needed, reverse=True), row
    assert [int(row[1]) for row in plan] == sorted(int(row[1]) for row in plan)
    # The real run's verdict is the machine's to give (a busy one has measured zero-copy
    # at 1 MB 0.99 of copy); that the line reports a verdict and its rounds is the script's.
    verdicts = "(faster|slower|same|inconclusive)"
    real = rf"zero-copy vs copy at 1 MB: {verdicts}; rounds \d+ \(median \d+; the fewest"
    assert re.search(real, out), out
    # Likewise the real A/A's: its two arms are one setting, so a call is a false
    # positive, which the sequential test allows at its level (and drift on a busy
    # machine adds to); how often it happens is the full run's figure, not one run's.
    a_and_a = r"A/A at 1 kB \(two copy thresholds\): [01] of 1 called, [01] undecided"
    assert re.search(a_and_a, out), out


def test_history_bench_quick_prints_its_rates_and_a_real_history():
    out = _run_bench("bench_history.py")
    rows = [ln.split() for ln in out.splitlines() if ln[:5].strip().isdigit()]
    assert len(rows) == 12  # 3 lengths x 4 noises
    assert all(0 <= float(row[2]) <= 1 for row in rows)  # the false-step share
    assert "real: 3 runs, then 3 with a busy loop on each core beside them" in out
    assert "steps called within one run of the change (run 3): " in out


def test_pinning_bench_quick_prints_each_configuration_and_its_spreads():
    out = _run_bench("bench_pinning.py")
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("thr ", "lat "))]
    assert len(rows) == 6  # (thr 1k, lat 64) x (not pinned, split, one CPU)
    assert all(row[-1].endswith("%") and row[-2].endswith("%") for row in rows)
    assert "split narrower than not pinned (within): at " in out


def test_flood_soak_bench_quick_prints_memory_per_flood_and_leaves_no_cluster():
    from conftest import cluster_processes

    out = _run_bench("bench_flood_soak.py")
    rows = [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert [row[0] for row in rows[1:]] == ["1", "2", "3"]  # after the title line
    assert "resident memory" in out and "of flood 1's" in out
    assert cluster_processes() == []


def test_environments_bench_quick_prints_an_a_and_a_per_release_and_the_a_and_b():
    out = _run_bench("bench_environments.py", "kernel", sys.executable)
    assert out.count("against itself") == 2 and "A/B, " in out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("thr ", "lat "))]
    assert len(rows) == 6  # 3 comparisons x 2 benchmarks x 1 size
    for row in rows:
        ratio, level, interval, n, verdict = row[-5:]
        low, high = (float(v) for v in interval.split("-"))
        assert low <= float(ratio) <= high, row  # the estimate lies in its own interval
        # Three pairs (--quick): their widest interval is 75% (1 - 2/8), and they can
        # neither call a difference (smallest p 0.25) nor claim the same (95% needed).
        assert (level, n, verdict) == ("75%", "3", "inconclusive"), row
    assert out.count("verdicts: inconclusive 2") == 3
    assert "A/A false calls (faster/slower): 0" in out


def test_engines_bench_quick_prints_a_ratio_per_backend_and_leaves_nothing():
    from conftest import cluster_processes, tagged_processes

    out = _run_bench("bench_engines.py")
    rows = [
        ln.split()
        for ln in out.splitlines()
        if ln.startswith(("ipyparallel", "dask", "ray", "processpool"))
    ]
    assert [row[0] for row in rows] == [
        "ipyparallel",
        "dask",
        "ray",
        "processpool",
        "processpool-wait",
    ]
    assert all(float(row[3]) > 0 for row in rows)
    assert cluster_processes() == [] and tagged_processes() == []


def test_kernel_messages_bench_quick_prints_the_ratio_to_a_bare_loop_and_the_hop():
    out = _run_bench("bench_kernel_messages.py")
    ratio = re.search(r"median tool/bare: (\d+\.\d+)", out)
    assert ratio is not None and float(ratio.group(1)) > 0
    assert "a ZeroMQ REQ/REP round trip of 700 B" in out
    assert "jupyter_client #266" in out and "kernel_info round trip" in out
    assert "at once (TCP_QUICKACK)" in out and "server " in out
