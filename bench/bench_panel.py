"""What a panel adds to a run: the Run button's path against the core function.

In one run, alternating, the same throughput sweep (tcp, 1k to 64k, copy, a fixed
count) is measured by ``run_throughput()`` directly and by ``ThroughputPanel.run()``
(a worker thread, progress updates, the chart's Vega spec, PNG and SVG made and
swapped in place):
medians of the wall time and the ratio panel / direct. Then how long the redraw
alone takes (chart + its display bundle, as the panel does it) for one run's result and for ten runs
accumulated.

    python bench/bench_panel.py            # ~20 s on 2 cores
    python bench/bench_panel.py --quick    # checks the script, not the figures
"""

from __future__ import annotations

import argparse
import statistics
import time

from report import report

from zmqbench_magic import run_throughput
from zmqbench_magic.charts import chart_bundle, default_chart
from zmqbench_magic.widgets import ThroughputPanel

SWEEP = {"size": ["1k", "64k"], "count": 2000, "repeat": 2, "warmup": 0}


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def redraw_seconds(result, rounds: int) -> float:
    return statistics.median(
        timed(lambda: chart_bundle(default_chart(result.benchmark, result.df)))
        for _ in range(rounds)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="alternating rounds (odd)")
    parser.add_argument("--quick", action="store_true", help="1 round, to check the script")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    sweep = {**SWEEP, "size": ["1k", "4k"]} if args.quick else SWEEP

    panel = ThroughputPanel(**sweep)
    # The sweep the panel's controls show (its size range is every size from 1k to
    # 64k), so that both measure the same points.
    params = panel.params()
    direct, through_panel = [], []
    for _ in range(rounds):
        direct.append(timed(lambda: run_throughput(params)))
        panel.clear()  # each panel run draws one run's result, as the direct run has
        through_panel.append(timed(panel.run))
    one_run = panel.result
    ten_runs = sum([one_run] * 9, one_run)

    d, p = statistics.median(direct), statistics.median(through_panel)
    points = one_run.df["size"].nunique()
    print(f"# {rounds} alternating rounds, {points} sizes, medians")
    print(f"run wall time (s)          direct {d:7.3f}   panel {p:7.3f}   ratio {p / d:5.2f}")
    print(f"redraw, one run (ms)       {redraw_seconds(one_run, rounds) * 1e3:7.1f}")
    print(f"redraw, ten runs (ms)      {redraw_seconds(ten_runs, rounds) * 1e3:7.1f}")


if __name__ == "__main__":
    with report("panel"):
        main()
