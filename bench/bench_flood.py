"""%taskflood vs a bare ipyparallel loop, and the cost of starting and resizing.

In one run, on one 2-engine cluster the project starts:

* the flood figure (256 tiny tasks, load-balanced, leastload) measured by the
  project and by a bare ipyparallel loop at the same settings (the same task, the
  same client, one untimed warm-up flood each, results purged after each), in
  alternating runs: medians and the ratio project / bare, for the round trip and
  for *sent*; and the same bare loop with the garbage collector off while it is
  timed, as the project times;
* for both, from ipyparallel's own stamps: the share of replies received while the
  client was still submitting, and the queue and return stages; and, over every
  sample of both, *sent* with few replies arriving during it against *sent* with
  many (what makes *sent* bimodal);
* how long the project takes to start a 2-engine cluster, against ipyparallel's
  defaults (3 s heartbeat, in-memory task database);
* how long growing 2 -> 3 engines and shrinking 3 -> 2 takes.

    python bench/bench_flood.py            # ~2 minutes on 2 cores
    python bench/bench_flood.py --quick    # checks the script, not the figures
"""

from __future__ import annotations

import argparse
import gc
import logging
import math
import shutil
import statistics
import sys
import tempfile
import time

import ipyparallel as ipp
from report import report

from zmqbench_magic.parallel.anatomy import reply_overlap, stage_times, stamps
from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.clusters.reaper import end_cluster_processes
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.parallel.tasks import echo

TASKS = 256
TIMEOUT = 120.0
# A sample's figures: tasks/s, sent (s), replies while sending, queue (s), return (s).
Figures = tuple[float, float, float, float, float]
# Few replies during submission, or many: the split the bimodal *sent* follows.
OVERLAP_SPLIT = 0.1


def project_flood(tasks: int) -> Figures:
    df = run_taskflood(tasks=tasks, engines=2, repeat=1, warmup=1, timeout=TIMEOUT).df
    row = df.iloc[0]
    return (
        float(row["tasks_per_s"]),
        float(row["sent_s"]),
        float(row["reply_overlap"]),
        float(row["queue_s"]),
        float(row["return_s"]),
    )


def bare_flood(tasks: int, gc_off: bool = False) -> Figures:
    """The loop a user would write, on the same cluster and client; its stages are read
    from ipyparallel's stamps afterwards (the loop itself reads no clock per task).
    ``gc_off``: with the garbage collector off while it is timed, as the project's."""
    client = own_cluster.current().client
    view = client.load_balanced_view()
    for _ in range(2):  # the first flood is an untimed warm-up, as the project's
        if gc_off:
            gc.disable()
        try:
            start = time.perf_counter()
            results = [view.apply_async(echo, "") for _ in range(tasks)]
            sent = time.perf_counter() - start
            sent_at = time.time()
            for result in results:
                result.get(timeout=TIMEOUT)
            roundtrip = time.perf_counter() - start
        finally:
            gc.enable()
        times = stamps([math.nan] * tasks, results)
        client.purge_local_results("all")
        client.history.clear()
    stages = stage_times(times)
    return (
        tasks / roundtrip,
        sent,
        reply_overlap(times, sent_at),
        stages["queue_s"],
        stages["return_s"],
    )


def default_start_seconds() -> float:
    """A 2-engine cluster with ipyparallel's defaults, until both engines are ready."""
    profile_dir = tempfile.mkdtemp(prefix="zmqbench-ipp-default-")
    started = time.perf_counter()
    default = ipp.Cluster(
        n=2, profile_dir=profile_dir, log_level=logging.ERROR, shutdown_atexit=False
    )
    try:
        client = default.start_and_connect_sync()
        client.wait_for_engines(2, timeout=TIMEOUT, interactive=False)
        elapsed = time.perf_counter() - started
        client.close()
    finally:
        default.stop_cluster_sync()
        # ipyparallel's stop leaves the engines' nannies to notice on their own.
        end_cluster_processes(profile_dir)
        shutil.rmtree(profile_dir, ignore_errors=True)
    return elapsed


def project_start_seconds() -> float:
    own_cluster.stop()
    started = time.perf_counter()
    own_cluster.managed(2, "leastload", TIMEOUT)
    return time.perf_counter() - started


def resize_seconds(engines: int) -> float:
    started = time.perf_counter()
    own_cluster.managed(engines, "leastload", TIMEOUT)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="alternating runs per figure")
    parser.add_argument("--quick", action="store_true", help="16 tasks, 1 round")
    args = parser.parse_args(argv)
    rounds, tasks = (1, 16) if args.quick else (args.rounds, TASKS)
    try:
        starts = [(project_start_seconds(), default_start_seconds()) for _ in range(min(rounds, 3))]
        resizes = [(resize_seconds(3), resize_seconds(2)) for _ in range(min(rounds, 3))]
        ours, bare, bare_gc_off = [], [], []
        for _ in range(rounds):
            ours.append(project_flood(tasks))
            bare.append(bare_flood(tasks))
            bare_gc_off.append(bare_flood(tasks, gc_off=True))
    finally:
        own_cluster.stop()
    median = statistics.median
    print(
        f"ipyparallel {ipp.__version__}, 2 engines, {tasks} tasks, load-balanced, leastload, "
        f"medians of {rounds} alternating runs"
    )
    print(
        f"{'figure':<30}{'project':>10}{'bare ipp':>10}{'ratio':>7}{'bare, GC off':>14}{'ratio':>7}"
    )
    for name, index, scale in (
        ("round trip (tasks/s)", 0, 1),
        ("sent (ms)", 1, 1e3),
        ("replies while sending (%)", 2, 100),
        ("queue stage (ms)", 3, 1e3),
        ("return stage (ms)", 4, 1e3),
    ):
        a, b, c = (median(r[index] for r in runs) * scale for runs in (ours, bare, bare_gc_off))
        print(
            f"{name:<30}{a:>10,.1f}{b:>10,.1f}{_ratio(a, b):>7.2f}{c:>14,.1f}{_ratio(a, c):>7.2f}"
        )
    for who, runs in (("project", ours), ("bare ipp", bare), ("bare, GC off", bare_gc_off)):
        few = [r[1] * 1e3 for r in runs if r[2] < OVERLAP_SPLIT]
        many = [r[1] * 1e3 for r in runs if r[2] >= OVERLAP_SPLIT]
        print(
            f"sent (ms), {who}: {_median_of(few)} with under {OVERLAP_SPLIT:.0%} of replies "
            f"during it, {_median_of(many)} with more"
        )
    project, default = median(s[0] for s in starts), median(s[1] for s in starts)
    print(
        f"{'start 2 engines (s)':<30}{project:>12.2f}{default:>12.2f}{project / default:>8.2f}"
        "   (bare = ipyparallel defaults)"
    )
    print(f"{'grow 2 -> 3 engines (s)':<30}{median(r[0] for r in resizes):>12.2f}")
    print(f"{'shrink 3 -> 2 engines (s)':<30}{median(r[1] for r in resizes):>12.2f}")
    return 0


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def _median_of(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} (n={len(values)})" if values else "none (n=0)"


if __name__ == "__main__":
    with report("flood"):
        status = main()
    sys.exit(status)
