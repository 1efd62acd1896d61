"""Stops a cluster the project started once the process that started it is gone.

ipyparallel starts its controller and every engine in a session of their own, so a
killed kernel (SIGKILL skips every cleanup) would leave them all running. The
project starts this small watcher beside each cluster, in a session of its own too:

    python -m zmqbench_magic.parallel.clusters.reaper --parent PID --cluster-file F --profile-dir D

When PID is gone it stops the cluster, kills whatever of its processes still runs,
and removes the cluster's private profile directory. A normal stop ends the watcher
first (SIGTERM), then stops the cluster itself.

Dask's and Ray's workers are watched the same way, by a tag the kernel puts in their
environment as it starts them (every process they start inherits it):

    python -m zmqbench_magic.parallel.clusters.reaper --parent PID --tag T [--remove DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Any

_PARENT_POLL_S = 0.2
_STOP_GRACE_S = 10.0


# The environment variable that tags the processes of a Dask or Ray engine the
# project started (the value is that engine's own token).
TAG_VARIABLE = "ZMQBENCH_ENGINE_TAG"


def processes_of(profile_dir: str) -> list[Any]:
    """Every process of the cluster in ``profile_dir``: ipyparallel starts each of them
    (controller, schedulers, engines, the engines' nannies) with ``IPP_PROFILE_DIR`` in
    its environment, and the project gives each cluster a private profile directory."""
    return processes_with("IPP_PROFILE_DIR", profile_dir)


def processes_with(variable: str, value: str) -> list[Any]:
    """Every process (but this one) whose environment has ``variable`` set to ``value``."""
    import psutil

    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.pid != os.getpid() and process.environ().get(variable) == value:
                found.append(process)
    return found


def end_tagged(tag: str, rounds: int = 5) -> None:
    """Kill every process tagged ``tag``, again until none is left (a process being
    started can start another while the first pass kills it)."""
    for _ in range(rounds):
        found = processes_with(TAG_VARIABLE, tag)
        if not found:
            return
        kill(found)


def end_cluster_processes(profile_dir: str, rounds: int = 5) -> None:
    """Kill every process of the cluster in ``profile_dir``, again until none is left:
    an engine still starting can fork its nanny while the first pass kills it."""
    for _ in range(rounds):
        found = processes_of(profile_dir)
        if not found:
            return
        kill(found)


def process_trees(pids: list[int]) -> list[Any]:
    """Each pid and all its descendants, taken now: an engine's nanny is reparented
    once the engine is gone, and could not be found from the engine afterwards."""
    import psutil

    found = []
    for pid in pids:
        try:
            root = psutil.Process(pid)
            found += [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
    return found


def kill(processes: list[Any]) -> None:
    """SIGKILL whatever of ``processes`` still runs, and wait until none runs: a zombie
    has ended (its memory and sockets are freed) and only waits for its parent, or
    init, to collect it, which can take a second that nobody needs to wait."""
    import psutil

    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    deadline = time.monotonic() + _STOP_GRACE_S
    running = list(processes)
    while running and time.monotonic() < deadline:
        running = [p for p in running if _running(p)]
        if running:
            time.sleep(0.01)


def wait_or_kill(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """Wait ``grace`` seconds for ``process`` to end, then kill it."""
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)


def _running(process: Any) -> bool:
    import psutil

    try:
        return bool(process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def reap(cluster_file: str, profile_dir: str, hosts: tuple[str, ...] = ()) -> None:
    """Stop the cluster politely (ipyparallel stops engines on other hosts over SSH),
    then make sure, then remove its files, here and on those hosts."""
    try:
        import ipyparallel as ipp

        cluster = ipp.Cluster.from_file(cluster_file)
        # Stopping rewrites the cluster file as each part stops, creating the folders
        # on its way (os.makedirs): a temp folder removed meanwhile (a test run's, or
        # the machine's clean-up) came back, empty once the profile is removed below.
        # The profile goes whole, so nothing needs to be written into it.
        cluster.cluster_file = ""
        cluster.stop_cluster_sync()
    except Exception:  # noqa: BLE001 - whatever failed, the kill below still runs
        pass
    end_cluster_processes(profile_dir)
    if hosts:
        from .hosts import remove_remote_profiles

        remove_remote_profiles(hosts, profile_dir)
    shutil.rmtree(profile_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--cluster-file")
    parser.add_argument("--profile-dir")
    parser.add_argument("--hosts", nargs="+", default=(), help="engine hosts (over SSH)")
    parser.add_argument("--tag", help="a Dask or Ray engine's tag (its processes' environment)")
    parser.add_argument("--remove", help="a folder of that engine's to remove")
    args = parser.parse_args(argv)
    if not args.tag and not (args.cluster_file and args.profile_dir):
        parser.error("give --tag, or --cluster-file and --profile-dir")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while _alive(args.parent):
        time.sleep(_PARENT_POLL_S)
    if args.tag:
        end_tagged(args.tag)
        if args.remove:
            shutil.rmtree(args.remove, ignore_errors=True)
    else:
        reap(args.cluster_file, args.profile_dir, tuple(args.hosts))
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A killed parent can linger as a zombie until its own parent reaps it.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


if __name__ == "__main__":
    sys.exit(main())
