"""ipyparallel clusters for the task-flood benchmarks: started, reused, resized, stopped.

A cluster the project starts lives in a private profile directory (no files left in
``~/.ipython``), has a fast heartbeat (250 ms, as ipyparallel's own tests use, with
10 s of misses allowed) and no
task database unless ``--task-db`` asks for one (ipyparallel's default in-memory one
grew the hub past 1 GB in an array-echo run; a flood's memory columns show what each
costs), runs one engine set per engine so it can shrink one engine at a time, and has
a reaper process beside it that stops it if the kernel is killed. It is reused across
calls and stopped by :func:`stop`, on error, and at interpreter exit.

Engines on other hosts (``--ssh-hosts``) are started by ipyparallel's SSH engine
launcher (:mod:`.hosts`), with the cluster, and stopped with it; the client may reach
the controller through an SSH tunnel (``--ssh-tunnel``, :mod:`.tunnel`). A running
cluster the user names (profile, cluster id or url file) is only ever connected to
(:mod:`.existing`): never resized, never stopped. :mod:`.handle` holds a cluster in use.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import tempfile
import threading
import time
import warnings

import ipyparallel as ipp
from traitlets.config import Config

from ...method.spawn import child_env, module_command
from ...params.taskflood import TASK_DB
from ...params.units import plural
from .handle import ClusterHandle, NoClient, Say
from .hosts import ON_THIS_MACHINE, Placement, engine_config, prepare_remote_profiles
from .reaper import end_cluster_processes
from .watch import ClusterLost

_PING_MS = 250
# Misses an engine may have before the hub unregisters it: 10 s at that ping. On a
# busy machine an engine starting beside other work missed ipyparallel's 10 (2.5 s
# here) and was dropped from a healthy cluster; an engine that exits is seen at once
# all the same (:mod:`.watch`), only a hung one takes the 10 s.
_MISSES = 40
# ipcontroller's flag for each --task-db choice.
_DATABASE_FLAGS = {"none": "--nodb", "dict": "--dictdb", "sqlite": "--sqlitedb"}
_STARTING = "while the cluster started"


_current: ClusterHandle | None = None
_teardowns: list[threading.Thread] = []  # broken clusters still being put away


def _finish_teardowns() -> None:
    while _teardowns:
        _teardowns.pop().join()


def current() -> ClusterHandle | None:
    """The cluster the project started and keeps for reuse, if any."""
    return _current


def managed(
    engines: int,
    scheme: str,
    timeout: float,
    placement: Placement = ON_THIS_MACHINE,
    say: Say | None = None,
    task_db: str = TASK_DB.default,
) -> ClusterHandle:
    """The project's cluster with ``engines`` engines (on each of the placement's hosts,
    when given), this scheduler scheme and this task database: reused, resized, or (for
    another scheme, database or placement) restarted; ``say`` hears each phase
    ("starting the cluster: 1 of 2 engines registered")."""
    global _current
    reason = None
    hosts = placement.hosts
    total = placement.engine_count(engines)  # --engines counts per host, with hosts
    if _current is not None and _current.placement != placement:
        reason = (
            "engines on other hosts and the client's tunnel are set up with the cluster: "
            "started it anew"
        )
    elif _current is not None and hosts and len(_current.engine_ids()) != total:
        reason = "engines on other hosts are not resized: started the cluster anew"
    elif _current is not None and _current.scheme != scheme:
        reason = f"scheme {scheme} needs a new controller: stopped the {_current.scheme} cluster"
    elif _current is not None and _current.task_db != task_db:
        reason = (
            f"task database {task_db} needs a new controller: stopped the cluster with "
            f"task database {_current.task_db}"
        )
    elif _current is not None and scheme == "pure" and len(_current.engine_ids()) != total:
        # The pure scheduler cannot handle engines going away, and ids of engines
        # added after one went away are not contiguous, which it cannot handle either.
        reason = "the pure scheduler cannot be resized: stopped the cluster to start anew"
    if reason is not None:
        stop()
        handle = start(engines, scheme, timeout, placement, say, task_db)
        handle.events.insert(0, reason)
        _current = handle
    elif _current is None:
        _current = start(engines, scheme, timeout, placement, say, task_db)
    else:
        _current.resize(engines, timeout, say)
    return _current


def engine_count() -> int | None:
    """Engines of the project's running cluster; None when none is running."""
    return None if _current is None else len(_current.engine_ids())


def resize(engines: int, timeout: float, say: Say | None = None) -> str:
    """Resize the project's running cluster to ``engines`` (same controller, same
    scheme; a pure-scheme cluster is restarted) and say what was done.

    This is what the magic does between two points of an engine sweep and what the
    flood panel's engines slider does. A resize that fails stops the cluster: a
    half-resized one is of no use to the next run.
    """
    if _current is None:
        msg = "no cluster of the project's is running: a run starts one"
        raise ValueError(msg)
    try:
        current = _current
        handle = managed(engines, current.scheme, timeout, current.placement, say, current.task_db)
    except BaseException:
        stop()
        raise
    return handle.events[-1] if handle.events else f"the cluster has {plural(engines, 'engine')}"


class _NotFarming(ClusterLost):
    """A pure-scheme cluster whose client stopped sending tasks as it started."""


def start(
    engines: int,
    scheme: str,
    timeout: float,
    placement: Placement = ON_THIS_MACHINE,
    say: Say | None = None,
    task_db: str = TASK_DB.default,
) -> ClusterHandle:
    """Start a local cluster of ``engines`` single-engine sets (or, with hosts, one
    SSH engine set of ``engines`` on each host); quiet, fast, reaped."""
    try:
        return _start(engines, scheme, timeout, placement, say, task_db)
    except _NotFarming as exc:
        # Engine ids are the hub's to give: a fresh controller gives 0 to n-1 again.
        handle = _start(engines, scheme, timeout, placement, say, task_db)
        handle.events.insert(0, f"{exc}: started the cluster anew")
        return handle


def _start(
    engines: int,
    scheme: str,
    timeout: float,
    placement: Placement,
    say: Say | None,
    task_db: str,
) -> ClusterHandle:
    _finish_teardowns()
    # --engines counts per host where the engines run on other hosts: ``total`` is all.
    total = placement.engine_count(engines)
    started = time.monotonic()
    profile_dir = tempfile.mkdtemp(prefix="zmqbench-ipp-")
    quiet_engines = Config()
    # Engines log every task they run at their default level: a log file growing per
    # task, which ipyparallel prints into the cell when the engine stops.
    quiet_engines.EngineLauncher.engine_args = [f"--Application.log_level={logging.WARNING}"]
    hosts, launcher, listen = placement.hosts, "local", placement.controller_ip()
    if hosts:
        engine_config(quiet_engines, hosts, engines, placement.python, profile_dir)
        launcher = "ssh"
    cluster = ipp.Cluster(
        n=0,
        profile_dir=profile_dir,
        controller_ip=listen,
        engine_launcher_class=launcher,
        controller_args=[
            f"--ping={_PING_MS}",
            f"--HeartMonitor.max_heartmonitor_misses={_MISSES}",
            _DATABASE_FLAGS[task_db],
            f"--scheme={scheme}",
        ],
        config=quiet_engines,
        # An engine stopped on purpose exits non-zero, which ipyparallel reports at
        # WARNING with the engine's whole output: only real errors may reach the cell.
        log_level=logging.ERROR,
        # This module's own atexit stops it: ipyparallel's would run first, and its
        # stop leaves the engines' nannies and the schedulers' processes running.
        shutdown_atexit=False,
    )
    handle = ClusterHandle(
        NoClient(), scheme, cluster, profile_dir, placement=placement, task_db=task_db
    )
    phase = "starting the cluster"
    if say is not None:
        say(f"{phase}: the controller")
    try:
        cluster.start_controller_sync()
        handle.reaper = _start_reaper(cluster.cluster_file, profile_dir, hosts)
        if hosts:
            prepare_remote_profiles(hosts, profile_dir)
            cluster.start_engines_sync(total)
        for _ in range(0 if hosts else engines):
            cluster.start_engines_sync(1)
        with warnings.catch_warnings():
            # A pure-scheme client warns (and stops farming tasks for good) when engine
            # ids reach it out of order; this first one is only for waiting.
            warnings.simplefilter("ignore", RuntimeWarning)
            handle.connect_client(timeout)
            handle.wait_for_engines(
                total, timeout, _STARTING, learn=scheme != "pure", say=say, phase=phase
            )
            if scheme == "pure":
                # One connected now sees all engines at once, in order.
                handle.connect_client(timeout)
                handle.wait_for_engines(total, timeout, _STARTING)
                stopped = handle.farming_stopped()
                if stopped is not None:
                    raise _NotFarming(f"{stopped} {_STARTING}")
    except BaseException:
        handle.stop()
        raise
    where = f"{placement.describe()} (controller on {listen})" if listen != "127.0.0.1" else ""
    handle.events.append(
        f"started a {scheme} cluster{_with_database(task_db)} of "
        f"{plural(total, 'engine')}{where} in "
        f"{time.monotonic() - started:.1f} s"
    )
    return handle


def _with_database(task_db: str) -> str:
    return "" if task_db == TASK_DB.default else f" with task database {task_db}"


def stop(hard: bool = False) -> str:
    """Stop the cluster the project started, if any (``%taskflood --stop``); say what
    was stopped, or that there was nothing to stop. ``hard``: kill its processes at
    once (it lost an engine or its controller)."""
    global _current
    _finish_teardowns()
    handle, _current = _current, None
    if handle is None or handle.cluster is None:  # only clusters it started are kept
        return "no cluster started by zmqbench_magic is running: nothing to stop"
    engines, cluster_id = len(handle.engine_ids()), handle.cluster.cluster_id
    if hard and handle.profile_dir:
        # Broken already: its processes are killed now, and the rest (the client, with
        # the messages it still has queued, and the files) is put away in the
        # background, so the error naming the loss reaches the user at once. The next
        # start, stop or exit waits for it.
        end_cluster_processes(handle.profile_dir)
        teardown = threading.Thread(
            target=handle.stop, args=(True,), name="zmqbench-cluster-teardown", daemon=True
        )
        teardown.start()
        _teardowns.append(teardown)
    else:
        handle.stop(hard)
    return (
        f"stopped the cluster zmqbench_magic started (cluster id {cluster_id}, scheme "
        f"{handle.scheme}): its controller and {plural(engines, 'engine')}"
    )


def _start_reaper(
    cluster_file: str, profile_dir: str, hosts: tuple[str, ...]
) -> subprocess.Popen[bytes]:
    command = module_command(
        "zmqbench_magic.parallel.clusters.reaper",
        "--parent",
        str(os.getpid()),
        "--cluster-file",
        cluster_file,
        "--profile-dir",
        profile_dir,
        *(["--hosts", *hosts] if hosts else []),
    )
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
        start_new_session=True,
    )


atexit.register(stop)

__all__ = [
    "ClusterHandle",
    "current",
    "engine_count",
    "managed",
    "resize",
    "start",
    "stop",
]
