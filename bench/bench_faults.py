"""How fast each fault is named, and how a flood ends when asked to: the times in the
documentation's "when things fail" table.

A ZeroMQ run's far end is SIGKILLed mid-sample (throughput and latency, the Python
and the native loop) and the seconds to the run's error are printed.

Each fault is caused on purpose, several times, on the project's own 2-engine
cluster: an engine SIGKILLed mid-submission of a 20,000-task flood, while the
cluster starts and while it grows; the controller SIGKILLed mid-flood; Ctrl-C (a
SIGINT to the main thread) and ``--max-time`` mid-flood. It prints the seconds from
the kill (or the interrupt, or the deadline) to the error (or the result) reaching
the caller, median and worst, and after Ctrl-C the first sample's rate against a
sample taken before it.

    python bench/bench_faults.py             # 5 trials of each: about 5 min on 2 cores
    python bench/bench_faults.py --quick     # 1 trial of each; checks the script
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import threading
import time
from collections.abc import Callable

import psutil
from report import report

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.method.schedule import Interrupted
from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.clusters.reaper import processes_of
from zmqbench_magic.parallel.flood import run_taskflood

QUICK = {"repeat": 1, "warmup": 0}


def _cluster_process(kind: str, besides: set[int]) -> psutil.Process | None:
    """An engine or the controller (not a nanny) of the project's cluster, whichever
    profile folder it has, that is not in ``besides``."""
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or []).split(" --")[0].rstrip()
        if command.endswith(f"-m ipyparallel.{kind}") and process.pid not in besides:
            try:
                if "zmqbench-ipp-" in process.environ().get("IPP_PROFILE_DIR", ""):
                    return process
            except psutil.Error:
                continue
    return None


def _when(condition: Callable[[], object], timeout: float = 120) -> object:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError("the moment to act never came")
        time.sleep(0.005)
    return found


def _mid_submission() -> bool:
    handle = own_cluster.current()
    return handle is not None and len(handle.client.outstanding) > 1000


def _act_later(act: Callable[[], None]) -> list[float]:
    """Run ``act`` in a thread; the moment it acted is appended to the list."""
    acted: list[float] = []

    def run() -> None:
        act()
        acted.append(time.monotonic())

    threading.Thread(target=run, daemon=True).start()
    return acted


def _named_after(start: Callable[[], None], act: Callable[[], None]) -> float:
    """Seconds from ``act`` (in a thread) to ``start`` raising."""
    acted = _act_later(act)
    try:
        start()
    except (RuntimeError, KeyboardInterrupt):
        return time.monotonic() - acted[0]
    raise AssertionError("the fault was not named")


def engine_mid_flood() -> float:
    run_taskflood(tasks=16, engines=2, **QUICK)
    victim = next(iter(own_cluster.current().engine_of_pid))

    def kill() -> None:
        _when(_mid_submission)
        os.kill(victim, signal.SIGKILL)

    return _named_after(lambda: run_taskflood(tasks=20_000, engines=2, **QUICK), kill)


def engine_at(phase: str) -> Callable[[], float]:
    def trial() -> float:
        own_cluster.stop()
        before: set[int] = set()
        if phase == "resize":
            run_taskflood(tasks=4, engines=1, **QUICK)
            handle = own_cluster.current()
            before = {p.pid for p in processes_of(handle.profile_dir)}

        def kill() -> None:
            victim = _when(lambda: _cluster_process("engine", before))
            victim.kill()  # type: ignore[attr-defined]

        return _named_after(lambda: run_taskflood(tasks=4, engines=2, **QUICK), kill)

    return trial


def controller_mid_flood() -> float:
    run_taskflood(tasks=16, engines=2, **QUICK)

    def kill() -> None:
        victim = _when(lambda: _cluster_process("controller", set()))
        _when(_mid_submission)
        victim.kill()  # type: ignore[attr-defined]

    return _named_after(lambda: run_taskflood(tasks=20_000, engines=2, **QUICK), kill)


def interrupt_mid_flood(ratios: list[float]) -> Callable[[], float]:
    def trial() -> float:
        before = run_taskflood(tasks=256, engines=2, **QUICK)
        main = threading.main_thread().ident

        def interrupt() -> None:
            _when(_mid_submission)
            signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]

        acted = _act_later(interrupt)
        try:
            run_taskflood(tasks=20_000, engines=2, **QUICK)
        except Interrupted:
            took = time.monotonic() - acted[0]
        else:
            raise AssertionError("the interrupt was not seen")
        after = run_taskflood(tasks=256, engines=2, **QUICK)
        ratios.append(after.df["tasks_per_s"].iloc[0] / before.df["tasks_per_s"].iloc[0])
        return took

    return trial


def max_time_mid_flood() -> float:
    run_taskflood(tasks=16, engines=2, **QUICK)
    started = time.monotonic()
    run_taskflood(tasks=50_000, engines=2, max_time=2, **QUICK)
    return time.monotonic() - started - 2


def _busy_far_end() -> psutil.Process | None:
    """This run's far end, once it is in its sample's loop (busy on the CPU)."""
    for child in psutil.Process().children():
        try:
            if "zmqbench_magic.sockets.far_ends.peer" in " ".join(child.cmdline()):
                return child if child.cpu_percent(interval=0.05) > 20 else None
        except psutil.Error:
            continue
    return None


def far_end_mid_sample(run: Callable[..., object], loop: str) -> Callable[[], float]:
    def trial() -> float:
        def kill() -> None:
            victim = _when(_busy_far_end)
            assert isinstance(victim, psutil.Process)
            victim.kill()

        return _named_after(
            lambda: run(size=100, count=20_000_000, repeat=1, warmup=0, timeout=10, loop=loop),
            kill,
        )

    return trial


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1 trial of each")
    args = parser.parse_args(argv)
    trials = 1 if args.quick else args.trials
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a kernel
    ratios: list[float] = []
    faults = (
        *(
            (f"far end killed mid-sample, {name}, {loop}", "error", far_end_mid_sample(run, loop))
            for name, run in (("thr", run_throughput), ("lat", run_latency))
            for loop in ("python", "native")
        ),
        ("engine killed mid-submission, 20k tasks", "error", engine_mid_flood),
        ("engine killed while the cluster starts", "error", engine_at("start")),
        ("engine killed while the cluster grows", "error", engine_at("resize")),
        ("controller killed mid-flood, 20k tasks", "error", controller_mid_flood),
        ("Ctrl-C mid-submission, 20k tasks", "result", interrupt_mid_flood(ratios)),
        ("--max-time 2 in a 50k-task flood", "result", max_time_mid_flood),
    )
    print(f"{trials} trial(s) of each; the cluster's on the project's 2-engine cluster")
    print(f"{'fault':<42}{'to the':>8}{'median s':>10}{'worst s':>9}")
    try:
        for name, outcome, trial in faults:
            times = [trial() for _ in range(trials)]
            print(f"{name:<42}{outcome:>8}{statistics.median(times):>10.2f}{max(times):>9.2f}")
    finally:
        own_cluster.stop()
    print(
        "(from the kill, the interrupt or the deadline to the error or the result "
        "reaching the caller; the cluster was stopped after each error)"
    )
    print(
        f"after Ctrl-C, the next 256-task sample ran at {statistics.median(ratios):.2f}x "
        "the rate of one taken before the flood (median)"
    )
    return 0


if __name__ == "__main__":
    with report("faults"):
        status = main()
    sys.exit(status)
