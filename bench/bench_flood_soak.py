"""A flood soak: 20 consecutive floods of 10,000 tasks on the project's 2-engine
cluster, in one process, as a long notebook session would run them. After each
sample the client's per-task records (results, metadata, history) are purged and the
outstanding tasks waited out: nothing may pile up.

It prints, after each flood, its time and rate, and the process's resident memory,
open file descriptors, threads and child processes; then the change from the first
flood (one-time set-up, such as the cluster and its first peak, is counted there).
Last, one flood of 100,000 tasks in a fresh process, and its peak memory.

    python bench/bench_flood_soak.py            # about 15 min on 2 cores
    python bench/bench_flood_soak.py --quick    # 3 floods of 300; checks the script
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from report import report

from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.flood import run_taskflood

TARGET_MB = 20  # the promise: resident memory within this of the first flood's


def state() -> dict[str, float]:
    me = psutil.Process()
    return {
        "rss_mb": me.memory_info().rss / 2**20,
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
        "children": len(me.children(recursive=True)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floods", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument(
        "--big",
        type=int,
        default=100_000,
        help="tasks of one last flood in a fresh process; 0: none",
    )
    parser.add_argument("--quick", action="store_true", help="3 floods of 300 tasks")
    args = parser.parse_args(argv)
    # Quick: what the test of the script needs, every line printed (a task costs every
    # process of the cluster CPU: more only slows the tests beside it).
    floods, tasks = (3, 300) if args.quick else (args.floods, args.tasks)
    states = []
    print(f"{floods} floods of {tasks:,} tasks on 2 engines, one sample each, in one process")
    heads = ("flood", 5), ("s", 8), ("tasks/s", 9), ("RSS MB", 9), ("fds", 6), ("threads", 9)
    print("".join(f"{head:>{width}}" for head, width in heads) + f"{'children':>10}")
    try:
        for number in range(1, floods + 1):
            started = time.perf_counter()
            result = run_taskflood(tasks=tasks, engines=2, repeat=1, warmup=0)
            took = time.perf_counter() - started
            now = state()
            states.append(now)
            rate = result.df["tasks_per_s"].iloc[0]
            print(
                f"{number:>5}{took:>8.1f}{rate:>9.0f}{now['rss_mb']:>9.1f}{now['fds']:>6.0f}"
                f"{now['threads']:>9.0f}{now['children']:>10.0f}"
            )
    finally:
        own_cluster.stop()
    first, last = states[0], states[-1]
    print(f"\nfrom flood 1 to flood {floods}")
    print(f"{'':<10}{'flood 1':>10}{'last':>10}{'change':>10}")
    for key in first:
        print(f"{key:<10}{first[key]:>10.1f}{last[key]:>10.1f}{last[key] - first[key]:>+10.1f}")
    grown = last["rss_mb"] - first["rss_mb"]
    verdict = "within" if grown <= TARGET_MB else "NOT within"
    print(f"resident memory {verdict} {TARGET_MB} MB of flood 1's ({grown:+.1f} MB)")
    big = 500 if args.quick else args.big
    if big:
        _one_big_flood(big)
    return 0


def _one_big_flood(tasks: int) -> None:
    """One flood of ``tasks`` in a fresh process (through the CLI): its time, rate and
    peak resident memory, which is the client's futures for every task in flight."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "flood.json"
        command = [
            sys.executable,
            "-m",
            "zmqbench_magic.cli",
            "flood",
            "-n",
            str(tasks),
            "-e",
            "2",
            "-r",
            "1",
            "--warmup",
            "0",
            "-q",
            "--json",
            str(out),
        ]
        started = time.perf_counter()
        child = psutil.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        peak = 0
        while child.poll() is None:
            with contextlib.suppress(psutil.Error):
                peak = max(peak, child.memory_info().rss)
            time.sleep(0.2)
        took = time.perf_counter() - started
        _, stderr = child.communicate()
        if child.returncode:
            raise RuntimeError(stderr.decode())
        (row,) = json.loads(out.read_text())["rows"]
    print(
        f"\none flood of {tasks:,} tasks in a fresh process: {took:.0f} s in all (cluster "
        f"start included), {row['tasks_per_s']:.0f} tasks/s, sent in {row['sent_s']:.0f} s; "
        f"peak RSS {peak / 2**20:,.0f} MB, {peak / tasks / 1024:.0f} kB per task"
    )


if __name__ == "__main__":
    with report("flood_soak"):
        status = main()
    sys.exit(status)
