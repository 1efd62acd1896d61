"""A soak: many consecutive short runs of all three magics, over every transport, in
one IPython shell, as a long notebook session would. Nothing may pile up.

It prints open file descriptors, threads, resident memory and child processes at the
start (after a first round, so one-time set-up such as the cluster is counted there)
and at the end, and the slowest run against the median run of each kind.

    python bench/bench_soak.py              # 1,000 runs, about a minute on 2 cores
    python bench/bench_soak.py --quick      # 30 runs; checks the script
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import threading
import time

import psutil
from IPython.testing.globalipapp import start_ipython
from report import report

RUNS = (
    ("zmqthr", "-q --no-chart -n 200 -r 1 --warmup 0 -t tcp"),
    ("zmqthr", "-q --no-chart -n 200 -r 1 --warmup 0 -t ipc"),
    ("zmqthr", "-q --no-chart -n 200 -r 1 --warmup 0 -t inproc"),
    ("zmqlat", "-q --no-chart -n 50 -r 1 --warmup 0 -t tcp"),
    ("zmqlat", "-q --no-chart -n 50 -r 1 --warmup 0 -t ipc"),
    ("zmqlat", "-q --no-chart -n 50 -r 1 --warmup 0 -t inproc"),
    ("taskflood", "-q --no-chart -n 8 -e 1 -r 1 --warmup 0"),
)


def _name(magic: str, line: str) -> str:
    """``zmqthr tcp``; a flood's is ``taskflood cluster``."""
    words = line.split()
    return f"{magic} {words[words.index('-t') + 1] if '-t' in words else 'cluster'}"


def state() -> dict[str, float]:
    me = psutil.Process()
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
        "rss_mb": me.memory_info().rss / 2**20,
        "children": len(me.children(recursive=True)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="30 runs")
    args = parser.parse_args(argv)
    total = 30 if args.quick else args.runs
    ip = start_ipython()
    ip.run_line_magic("load_ext", "zmqbench_magic")
    for magic, line in RUNS:  # a first round: imports, the cluster, caches
        ip.run_line_magic(magic, line)
    before = state()
    times: dict[str, list[float]] = {_name(m, line): [] for m, line in RUNS}
    for (magic, line), _ in zip(itertools.cycle(RUNS), range(total), strict=False):
        started = time.perf_counter()
        ip.run_line_magic(magic, line)
        times[_name(magic, line)].append(time.perf_counter() - started)
    after = state()
    ip.run_line_magic("taskflood", "--stop")
    print(f"{total} runs after a first round of {len(RUNS)}")
    print(f"{'':<10}{'start':>10}{'end':>10}{'change':>10}")
    for key in before:
        change = after[key] - before[key]
        print(f"{key:<10}{before[key]:>10.1f}{after[key]:>10.1f}{change:>+10.1f}")
    print(f"{'run':<20}{'n':>5}{'median s':>10}{'slowest s':>11}{'ratio':>7}")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:<20}{len(values):>5}{median:>10.3f}{max(values):>11.3f}"
            f"{max(values) / median:>7.1f}"
        )
    return 0


if __name__ == "__main__":
    with report("soak"):
        status = main()
    sys.exit(status)
