"""``--cpu``: the driver's side and the far end's side on the CPUs asked for while the
run measures (seen from the run's own progress calls, in the processes' and threads'
affinity), and everything on its own CPUs again after."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psutil
import pytest
from conftest import FLOOD_QUICK, TINY
from IPython.core.error import UsageError

from zmqbench_magic import run_taskflood, run_throughput
from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.params import FloodParams, ThroughputParams

USABLE = sorted(os.sched_getaffinity(0))
DRIVER, FAR = USABLE[0], USABLE[-1]  # two CPUs apart where there are two
PLAN = f"{DRIVER}/{FAR}"


class _Seen:
    """What the run's processes (by module) and far-end threads ran on, at each
    progress call, i.e. between samples, while every far end of the run is up."""

    def __init__(self) -> None:
        self.processes: dict[str, set[tuple[int, ...]]] = {}
        self.threads: set[tuple[int, ...]] = set()

    def __call__(self, _done: int, _total: int) -> None:
        for process in psutil.Process().children(recursive=True):
            try:
                module = next(_role(arg) for arg in process.cmdline() if _role(arg))
                affinity = tuple(process.cpu_affinity())
            except (psutil.Error, StopIteration):
                continue
            self.processes.setdefault(module, set()).add(affinity)
        for thread in threading.enumerate():
            if thread.name == "zmqbench-peer" and thread.native_id is not None:
                status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
                allowed = next(ln for ln in status.splitlines() if ln.startswith("Cpus_allowed_"))
                self.threads.add(_cpus(allowed.split()[-1]))


def _role(arg: str) -> str:
    """The module a process runs (``-m`` or a process pool's ``-c``), or ""."""
    if arg.startswith(("zmqbench", "ipyparallel")):
        return arg
    # A pool's workers, not multiprocessing's resource tracker (the process's own, for
    # its lifetime: not the run's).
    pooled = arg.startswith("from multiprocessing") and "resource_tracker" not in arg
    return "pool worker" if pooled else ""


def _cpus(text: str) -> tuple[int, ...]:
    cpus: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus += range(int(low), int(high or low) + 1)
    return tuple(cpus)


@pytest.mark.parametrize("driver", ["kernel", "process"])
def test_a_zeromq_run_pins_the_driver_and_the_far_end_and_lets_go(driver, no_leftovers):
    seen = _Seen()
    result = run_throughput(
        size=[100], transport=["tcp"], driver=driver, cpu=PLAN, progress=seen, **TINY
    )
    assert seen.processes["zmqbench_magic.sockets.far_ends.peer"] == {(FAR,)}
    if driver == "process":
        assert seen.processes["zmqbench_magic.sockets.far_ends.worker"] == {(DRIVER,)}
    assert sorted(os.sched_getaffinity(0)) == USABLE  # the kernel's thread let go
    assert result.settings["cpu"] == PLAN


def test_a_far_end_thread_pins_itself():
    seen = _Seen()
    run_throughput(size=[100], transport=["inproc"], cpu=PLAN, progress=seen, **TINY)
    assert seen.threads == {(FAR,)}
    assert sorted(os.sched_getaffinity(0)) == USABLE


@pytest.mark.slow  # a cluster of its own
def test_a_flood_pins_its_cluster_and_gives_a_kept_cluster_its_cpus_back():
    assert own_cluster.current() is None
    seen = _Seen()
    try:
        run_taskflood(tasks=[8], engines=2, cpu=PLAN, progress=seen, **FLOOD_QUICK)
        for module in ("ipyparallel.controller", "ipyparallel.engine"):
            assert seen.processes[module] == {(FAR,)}, seen.processes
        handle = own_cluster.current()
        assert handle is not None  # kept for the next run, on every CPU again
        for pid in handle.local_pids():
            assert psutil.Process(pid).cpu_affinity() == USABLE
    finally:
        own_cluster.stop()


def test_a_process_pools_workers_are_pinned_as_its_far_end():
    seen = _Seen()
    run_taskflood(
        backend="processpool", tasks=[8], engines=2, cpu=PLAN, progress=seen, **FLOOD_QUICK
    )
    assert seen.processes["pool worker"] == {(FAR,)}, seen.processes
    assert sorted(os.sched_getaffinity(0)) == USABLE


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("4096", "CPU 4096 is not one this process may use"),
        ("3-1", "the range '3-1' runs backwards"),
        ("one", "'one' is not a CPU number or a range of them"),
        ("0/0/0", "has more than two sides"),
        (f"{DRIVER}/", "leaves a side without CPUs"),
    ],
)
def test_a_bad_cpu_list_is_named_with_what_is_allowed(value, words, ip):
    with pytest.raises(ValueError, match=words) as raised:
        ThroughputParams(cpu=value)
    assert "allowed: a list of this machine's usable CPUs" in str(raised.value)
    with pytest.raises(UsageError, match=words):
        ip.run_line_magic("zmqthr", f"--cpu {value}")


def test_someone_elses_cluster_is_not_pinned():
    with pytest.raises(ValueError, match="cpu 0: pins the processes a run starts on this host"):
        FloodParams(cpu="0", url_file="/somewhere/ipcontroller-client.json")
