"""The benchmark script still runs (its figures are for reading, not for asserting)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_zmq.py"
BENCH_FLOOD = BENCH.with_name("bench_flood.py")


def test_bench_quick_prints_a_ratio_per_figure_and_size():
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    rows = [
        ln.split() for ln in done.stdout.splitlines() if ln.startswith(("throughput", "latency"))
    ]
    assert len(rows) == 8  # 4 sizes x (throughput, latency)
    ratios = [float(row[-2]) for row in rows]
    assert all(ratio > 0 for ratio in ratios)


@pytest.mark.slow  # a real cluster
def test_flood_bench_quick_prints_its_figures_and_leaves_no_cluster():
    from conftest import cluster_processes

    done = subprocess.run(
        [sys.executable, str(BENCH_FLOOD), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    for figure in (
        "round trip (tasks/s)",
        "sent (ms)",
        "start 2 engines",
        "grow 2 -> 3",
        "shrink 3 -> 2",
    ):
        assert figure in done.stdout
    assert cluster_processes() == []


def test_panel_bench_quick_prints_its_figures():
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("bench_panel.py")), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    ratio = next(ln for ln in done.stdout.splitlines() if ln.startswith("run wall time"))
    assert float(ratio.split()[-1]) > 0
    assert "redraw, one run (ms)" in done.stdout and "redraw, ten runs (ms)" in done.stdout


@pytest.mark.slow  # three runs of two sweeps
def test_trust_bench_quick_prints_its_figures_per_benchmark():
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("bench_trust.py")), "--quick"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [ln.split() for ln in done.stdout.splitlines() if ln.startswith(("thr", "lat"))]
    assert [row[:2] for row in rows] == [["thr", "after"], ["lat", "after"]]  # no --before
    for row in rows:
        deviation, contained, same = (float(v.rstrip("%")) for v in (row[4], row[6], row[7]))
        assert deviation >= 0 and 0 <= contained <= 100 and 0 <= same <= 100


@pytest.mark.slow  # a real cluster among the runs
def test_soak_bench_quick_reports_its_state_and_leaves_nothing():
    from conftest import cluster_processes

    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("bench_soak.py")), "--quick"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for key in ("fds", "threads", "rss_mb", "children"):
        assert any(line.startswith(key) for line in done.stdout.splitlines())
    assert cluster_processes() == []


def test_chart_bench_quick_prints_the_three_ways():
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("bench_charts.py")), "--quick"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for way in ("vega5 + png + svg", "JupyterChart offline", "html inline"):
        assert way in done.stdout
    assert "ratio saved bytes, JupyterChart / ours:" in done.stdout
