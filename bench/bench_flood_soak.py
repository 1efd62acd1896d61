"""A flood soak: 20 consecutive floods of 10,000 tasks on the project's 2-engine
cluster, in one process, as a long notebook session would run them. After each
sample the client's per-task records (results, metadata, history) are purged and the
outstanding tasks waited out: nothing may pile up.

It prints, after each flood, its time and rate, and the process's resident memory,
open file descriptors, threads and child processes; then the change from the first
flood (one-time set-up, such as the cluster and its first peak, is counted there).

Then the memory forecast checked: floods of 128 to 32,768 tasks in a fresh process,
from which the advisor (``r.advice()``) forecasts a flood of 100,000 (the floods
closest to it see most of what grows with a flood: see docs/benchmarks/flood_soak.md);
last, one flood of 100,000 tasks in another fresh process, its peak memory, and the
forecast beside what it measured: the kernel's heap, read as the forecast's floods read
it (once every task's output was in), and the rise of this kernel's and the
controller's peaks in a process that ran no flood before, so none of its memory was
reused, which is what the flood needed, its outputs still unread at the last reply
included.

    python bench/bench_flood_soak.py            # about 30 min on 2 cores
    python bench/bench_flood_soak.py --floods 0 # the forecast and the 100,000: ~15 min
    python bench/bench_flood_soak.py --quick    # 3 floods of 300; checks the script
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from report import report

from zmqbench_magic.method.heap import held_bytes
from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.results import ResultSet, load
from zmqbench_magic.results.words.advice import forecasts

TARGET_MB = 20  # the promise: resident memory within this of the first flood's
# The forecast's floods (tasks, samples of each), and how close to the measured flood
# its figure is meant to come.
FORECAST_FROM = (128, 512, 2048, 8192, 32_768)
FORECAST_REPEAT = 3
WITHIN = 0.3


def state() -> dict[str, float]:
    me = psutil.Process()
    gc.collect()  # the heap's figure is then what is alive, not garbage yet to collect
    return {
        "rss_mb": me.memory_info().rss / 2**20,
        # What is alive, whatever the allocators keep resident around it.
        "heap_mb": held_bytes() / 2**20,
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
    parser.add_argument(
        "--forecast-from",
        type=int,
        nargs="*",
        default=list(FORECAST_FROM),
        help="tasks of the floods the memory forecast for --big is made from; none: no forecast",
    )
    parser.add_argument("--quick", action="store_true", help="3 floods of 300 tasks")
    args = parser.parse_args(argv)
    # Quick: what the test of the script needs, every line printed (a task costs every
    # process of the cluster CPU: more only slows the tests beside it).
    floods, tasks = (3, 300) if args.quick else (args.floods, args.tasks)
    if floods:
        _soak(floods, tasks)
    big = 500 if args.quick else args.big
    if not big:
        return 0
    sizes = [50, 100] if args.quick else args.forecast_from
    forecast = _forecast(sizes, 1 if args.quick else FORECAST_REPEAT, big) if sizes else None
    measured = _one_big_flood(big)
    if forecast is not None:
        _compare(forecast, measured, big)
    return 0


def _soak(floods: int, tasks: int) -> None:
    """``floods`` floods of ``tasks`` in this process, and how its resources changed."""
    states = []
    print(f"{floods} floods of {tasks:,} tasks on 2 engines, one sample each, in one process")
    heads = (
        ("flood", 5),
        ("s", 8),
        ("tasks/s", 9),
        ("RSS MB", 9),
        ("heap MB", 9),
        ("fds", 6),
        ("threads", 9),
    )
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
                f"{number:>5}{took:>8.1f}{rate:>9.0f}{now['rss_mb']:>9.1f}{now['heap_mb']:>9.1f}"
                f"{now['fds']:>6.0f}"
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
    alive = last["heap_mb"] - first["heap_mb"]
    verdict = "within" if alive <= TARGET_MB else "NOT within"
    print(
        f"the heap (what is alive) {verdict} {TARGET_MB} MB of flood 1's ({alive:+.1f} MB): "
        f"{'a leak' if alive > TARGET_MB else 'no leak'}; the rest of the resident change is "
        "memory freed and kept by the allocators"
    )


def _flood(tasks: list[int], repeat: int, warmup: int) -> tuple[ResultSet, float, float]:
    """Floods of ``tasks`` in a fresh process (through the CLI): their result, the time
    taken in all (cluster start included) and the process's peak resident memory as
    polled from outside, bytes."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "flood.json"
        command = [
            sys.executable,
            "-m",
            "zmqbench_magic.cli",
            "flood",
            "-n",
            *(str(n) for n in tasks),
            "-e",
            "2",
            "-r",
            str(repeat),
            "--warmup",
            str(warmup),
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
        return load(out), took, peak


def _forecast(sizes: list[int], repeat: int, big: int) -> dict[str, dict[str, Any]]:
    """The advisor's forecast for a flood of ``big`` from floods of ``sizes``, per role
    (:func:`forecasts`' columns), its sentence printed."""
    result, took, _ = _flood(sizes, repeat, 1)
    spelled = ", ".join(f"{n:,}" for n in sizes)
    print(
        f"\nthe memory forecast: floods of {spelled} tasks, {repeat} sample(s) each after a "
        f"warm-up, in a fresh process ({took:.0f} s in all)"
    )
    print(
        "| tasks | samples | kernel heap kB/task | kernel peak kB/task | controller peak kB/task "
        "| outputs unread at the last reply |"
    )
    print("|---|---|---|---|---|---|")
    columns = ["client_held_kb_per_task", "client_kb_per_task", "controller_kb_per_task"]
    medians = result.df.groupby("tasks")[[*columns, "outputs_unread"]].median()
    for tasks, row in medians.iterrows():
        count = int((result.df["tasks"] == tasks).sum())
        figures = " | ".join(f"{row[c]:.1f}" for c in columns)
        print(f"| {tasks:,} | {count} | {figures} | {row['outputs_unread']:.1%} |")
    (advice,) = [a for a in result.advice() if "in flight" in a]
    print(f"advice: {advice}")
    return forecasts(result, big).set_index("role").to_dict("index")


def _compare(forecast: dict[str, dict[str, Any]], measured: dict[str, float], big: int) -> None:
    """The forecast beside what the flood measured, with their ratios: like for like
    (the kernel's heap beside its heap, both read once every output was in; the
    controller's peak beside its peak), and the kernel's forecast beside its peak's
    rise, what the machine had to provide, unread outputs and all."""
    print(f"\nthe forecast for {big:,} tasks (from the floods above) beside the flood measured")
    print("| read in | grew as | advice prints | measured | measured / advice |")
    print("|---|---|---|---|---|")
    checks = [
        ("this kernel's heap", forecast["client"], measured["client_held"]),
        ("this kernel's peak", forecast["client"], measured["client"]),
        ("the controller's peak", forecast["controller"], measured["controller"]),
    ]
    for where, fit, rise in checks:
        low, high = fit["low"], fit["high"]
        if math.isnan(low):  # a peak's rise: the advice gives it a task, and no forecast
            print(f"| {where} | (not forecast) | – | {_mb(rise)} | – |")
            continue
        figure, ratio = _mb(low), f"{rise / low:.2f}"
        if math.isinf(high):
            figure = f"at least {_mb(low)}"
        elif low != high:
            figure, ratio = f"{_mb(low)} to {_mb(high)}", f"{rise / low:.2f} to {rise / high:.2f}"
        shape = f"tasks^{fit['exponent']:.2f}" if math.isfinite(fit["exponent"]) else "(one size)"
        print(f"| {where} | {shape} | {figure} | {_mb(rise)} | {ratio} |")
    for where, fit, rise in checks:
        if math.isnan(fit["low"]):
            print(
                f"{where}: not forecast; each task as at the largest flood would have read "
                f"{_mb(fit['linear'])}"
            )
            continue
        inside = fit["low"] <= rise <= fit["high"]
        if math.isinf(fit["high"]):
            print(
                f"{where}: the lower bound ({_mb(fit['low'])}) is "
                f"{'below' if inside else 'ABOVE'} the measured rise"
            )
            continue
        # The forecast's error, as a share of what was measured.
        off = fit["fitted"] / rise - 1
        # One figure printed (the floods reach that far) has no range to fall in.
        ranged = (
            f"; the measured rise is {'inside' if inside else 'OUTSIDE'} the range the advice "
            "prints"
            if fit["low"] != fit["high"]
            else ""
        )
        print(
            f"{where}: the fitted figure ({_mb(fit['fitted'])}) is "
            f"{'within' if abs(off) <= WITHIN else 'NOT within'} {WITHIN:.0%} of the measured "
            f"rise ({off:+.1%} of it){ranged}"
        )


def _mb(amount: float) -> str:
    return f"{amount / 1e6:,.0f} MB"


def _one_big_flood(tasks: int) -> dict[str, float]:
    """One flood of ``tasks`` in a fresh process: its time, rate and peak resident
    memory, which is the client's futures for every task in flight; and each role's
    peak's rise (bytes): in a fresh process, what the flood needed."""
    result, took, peak = _flood([tasks], 1, 0)
    (row,) = result.rows
    print(
        f"\none flood of {tasks:,} tasks in a fresh process: {took:.0f} s in all (cluster "
        f"start included), {row['tasks_per_s']:.0f} tasks/s, sent in {row['sent_s']:.0f} s; "
        f"peak RSS {peak / 2**20:,.0f} MB, {peak / tasks / 1024:.0f} kB per task; the "
        f"kernel's heap held {row['client_held_kb_per_task']:.1f} kB a task more once every "
        f"output was read ({row['outputs_unread']:.1%} of them were unread at the last "
        f"reply), its peak rose {row['client_kb_per_task']:.1f} kB a task"
    )
    rises = {role: row[f"{role}_kb_per_task"] * 1e3 * tasks for role in ("client", "controller")}
    return {**rises, "client_held": row["client_held_kb_per_task"] * 1e3 * tasks}


if __name__ == "__main__":
    with report("flood_soak"):
        status = main()
    sys.exit(status)
