"""A cluster in use: the client connected to it, and for a cluster the project started,
what it takes to resize and stop it (its engines, reaper, profile dir, tunnel)."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import ipyparallel as ipp

from ...params.units import plural
from .hosts import ON_THIS_MACHINE, Placement, remove_remote_profiles
from .reaper import end_cluster_processes, kill, process_trees, wait_or_kill
from .tunnel import Tunnel, tunnelled_client
from .watch import (
    HEARTBEAT_NOTE,
    ClusterLost,
    EngineLost,
    Schedulers,
    ask_pids,
    engine_exit,
    engine_processes,
    exited,
    has_exited,
)

# Hears each phase of a start or resize, in words (a progress display's phase).
Say = Callable[[str], None]


@dataclass
class ClusterHandle:
    """A cluster in use and the client connected to it."""

    client: ipp.Client
    scheme: str  # "unknown" for a cluster the project did not start
    cluster: ipp.Cluster | None = None  # None: not ours to resize or stop
    profile_dir: str | None = None
    reaper: subprocess.Popen[bytes] | None = None
    events: list[str] = field(default_factory=list)
    placement: Placement = ON_THIS_MACHINE
    tunnel: Tunnel | None = None  # the client's, when it goes through one
    # Engine ids by process id, for the engines started on this machine.
    engine_of_pid: dict[int, int] = field(default_factory=dict)
    # Idle and whole: False while it resizes, and after a sample that could not wait
    # out its aborted tasks (the next run must not inherit them).
    settled: bool = True
    schedulers: Schedulers = field(default_factory=Schedulers)
    task_db: str = "unknown"  # the controller's (--task-db), when the project started it

    @property
    def managed(self) -> bool:
        return self.cluster is not None

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts the engines were started on over SSH; none: this machine."""
        return self.placement.hosts

    def engine_ids(self) -> list[int]:
        return sorted(self.client.ids)

    def local_pids(self) -> list[int]:
        """The processes of this cluster on this machine that its launchers started
        (the controller, the engines or their nannies; their children are theirs), and
        its reaper: none for a cluster the project did not start."""
        reaper = [self.reaper.pid] if self.reaper is not None else []
        return self.controller_pids() + reaper + self.local_engine_pids()

    def controller_pids(self) -> list[int]:
        """The controller's process (its schedulers are its children), if the project
        started it."""
        pid = getattr(self.cluster.controller, "pid", None) if self.cluster else None
        return [pid] if isinstance(pid, int) and pid > 0 else []

    def local_engine_pids(self) -> list[int]:
        """The engines' processes (or their nannies) the project started on this machine."""
        if self.cluster is None or self.hosts:
            return []
        return engine_pids(self.cluster, list(self.cluster.engines))

    def resize(self, engines: int, timeout: float, say: Say | None = None) -> None:
        """Grow or shrink to ``engines`` by starting or stopping single-engine sets,
        saying how far it got (``say``)."""
        assert self.cluster is not None, "only clusters the project started are resized"
        if self._drop_exited():
            # Its controller unregisters it a moment later (its nanny tells it at once).
            live = len(engine_processes(self.cluster))
            wait_for_count(self.client, live, timeout, self.check_alive)
        have = len(self.engine_ids())
        if have == engines:
            return
        started, self.settled = time.monotonic(), False
        phase = f"resizing the cluster to {plural(engines, 'engine')}"
        if say is not None:
            say(phase)
        if engines > have:
            for _ in range(engines - have):
                self.cluster.start_engines_sync(1)
        else:
            doomed = list(self.cluster.engines)[engines - have :]
            leftovers = process_trees(engine_pids(self.cluster, doomed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for engine_set in doomed:
                    self.cluster.stop_engines_sync(engine_set)
            kill(leftovers)  # the engines' nannies, should they outlive them
        self.wait_for_engines(
            engines, timeout, "while the cluster was resized", say=say, phase=phase
        )
        self.settled = True
        self.events.append(
            f"resized the cluster from {have} to {plural(engines, 'engine')} in "
            f"{time.monotonic() - started:.1f} s"
        )

    def wait_for_engines(
        self,
        engines: int,
        timeout: float,
        when: str,
        learn: bool = True,
        say: Say | None = None,
        phase: str = "",
    ) -> None:
        """Wait until exactly ``engines`` are registered, naming any engine (or the
        controller) that exits meanwhile; then (``learn``) ask the engines started on
        this machine for their process ids, to name them by id should they exit."""

        def alive() -> None:
            try:
                self.check_alive()
            except (EngineLost, ClusterLost) as exc:
                raise type(exc)(f"{exc} ({when})", exc.noticed_at) from None

        wait_for_count(self.client, engines, timeout, alive, say, phase)
        if learn and self.cluster is not None and not self.hosts:
            self.engine_of_pid = ask_pids(self.client, self.engine_ids(), timeout)
            self.client.purge_local_results("all")
            self.client.history.clear()

    def check_alive(self, engine_ids: tuple[int, ...] | None = None) -> None:
        """Raise :class:`ClusterLost` if the controller or one of its schedulers has
        exited, :class:`EngineLost` if an engine process of a cluster the project
        started has, or if one of ``engine_ids`` is no longer registered."""
        if self.cluster is not None:
            controller = self.cluster.controller
            gone = exited(controller, f"the controller (pid {getattr(controller, 'pid', '?')})")
            if gone is not None:
                msg = (
                    f"{gone.words()}: nothing can register, resize or report engines any "
                    "more; the cluster was stopped (the next run starts a fresh one)"
                )
                raise ClusterLost(msg)
            gone = self.schedulers.exit(controller)
            if gone is not None:
                msg = (
                    f"{gone.words()}: the tasks it routes are never answered; the cluster "
                    "was stopped (the next run starts a fresh one)"
                )
                raise ClusterLost(msg)
            gone = engine_exit(self.cluster, self._engine_name)
            if gone is not None:
                raise EngineLost(gone.words())
        missing = sorted(set(engine_ids or ()) - set(self.client.ids))
        if missing:
            names = ", ".join(str(e) for e in missing)
            msg = f"engine {names} of {len(engine_ids or ())} unregistered from the controller"
            if self.cluster is None:
                msg += f" ({HEARTBEAT_NOTE})"
            raise EngineLost(msg)

    def farming_stopped(self) -> str | None:
        """Why the client sends no more tasks to a pure scheduler, if it does not.

        ipyparallel's client closes its task socket for good (with a RuntimeWarning)
        when an engine unregisters or the engine ids are not 0 to n-1, and refuses
        every task after it; the closed socket is the one sign of it the client leaves
        before a task is submitted."""
        if self.scheme != "pure" or getattr(self.client, "_task_socket", True) is not None:
            return None
        ids = ", ".join(str(e) for e in self.engine_ids())
        return (
            f"ipyparallel's client stopped sending tasks to the pure scheduler (engine ids "
            f"{ids}: it stops for good when an engine unregisters or the ids are not 0 to n-1)"
        )

    def _engine_name(self, pid: object, host: str) -> str:
        engine_id = self.engine_of_pid.get(pid) if isinstance(pid, int) else None
        who = f"engine {engine_id}" if engine_id is not None else "an engine"
        return f"{who} (pid {pid}, on {host})"

    def _drop_exited(self) -> int:
        """Forget engine sets whose processes have exited (an engine lost and being
        replaced): their launchers would otherwise be named again at every look."""
        assert self.cluster is not None
        dropped = 0
        for name, engine_set in list(self.cluster.engines.items()):
            if has_exited(engine_set):
                with contextlib.suppress(Exception), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    self.cluster.stop_engines_sync(name)
                self.cluster.engines.pop(name, None)
                dropped += 1
        return dropped

    def stop(self, hard: bool = False) -> None:
        """Stop a cluster the project started; only disconnect from any other.

        ``hard``: kill its processes at once, for a cluster that lost an engine or its
        controller (a polite stop waits on processes that may never answer)."""
        self._disconnect()
        if self.cluster is None:
            return
        if self.reaper is not None:
            self.reaper.send_signal(signal.SIGTERM)
            wait_or_kill(self.reaper)
        try:
            if hard and self.profile_dir:
                end_cluster_processes(self.profile_dir)
            with warnings.catch_warnings():
                # A pure-scheme client warns of every engine it sees go: here on purpose.
                warnings.simplefilter("ignore", RuntimeWarning)
                self.cluster.stop_cluster_sync()
        finally:
            # What ipyparallel's stop leaves: schedulers' processes, engines' nannies
            # (and, after a failed start, an engine that was still starting). Only with
            # a profile directory to find them by: without one, every process whose
            # environment lacks it would match.
            if self.profile_dir:
                end_cluster_processes(self.profile_dir)
                remove_remote_profiles(self.hosts, self.profile_dir)
                shutil.rmtree(self.profile_dir, ignore_errors=True)
            self.cluster = None

    def connect_client(self, timeout: float) -> None:
        """(Re)connect the client: directly, or through its placement's tunnel."""
        assert self.cluster is not None
        self._disconnect()
        if not self.placement.tunnel:
            self.client = self.cluster.connect_client_sync()
            return
        connection_file = (
            Path(self.cluster.profile_dir)
            / "security"
            / (f"ipcontroller-{self.cluster.cluster_id}-client.json")
        )
        self.client, self.tunnel = tunnelled_client(connection_file, self.placement.tunnel, timeout)

    def _disconnect(self) -> None:
        """Close the client, then its tunnel (the client's sockets go through it)."""
        with contextlib.suppress(Exception):
            self.client.close()
        if self.tunnel is not None:
            self.tunnel.close()
            self.tunnel = None


def wait_for_count(
    client: ipp.Client,
    engines: int,
    timeout: float,
    alive: Callable[[], None] = lambda: None,
    say: Say | None = None,
    phase: str = "",
) -> None:
    """Wait until exactly ``engines`` engines are registered, calling ``alive`` (which
    raises if a process of the cluster has exited) as it waits, and ``say`` with
    ``"{phase}: 1 of 2 engines registered"`` as the count changes. ``timeout`` bounds
    the wait for the next registration, not for all of them: a cluster of many engines
    that keeps registering them is not stuck."""
    count, changed = len(client.ids), time.monotonic()
    if say is not None and count != engines:
        say(f"{phase}: {count} of {plural(engines, 'engine')} registered")
    while count != engines:
        alive()
        if time.monotonic() - changed > timeout:
            msg = (
                f"the cluster has {plural(count, 'engine')} registered, not {engines}: "
                f"no engine registered or left for {timeout:g} s"
            )
            raise TimeoutError(msg)
        time.sleep(0.05)
        if len(client.ids) != count:
            count, changed = len(client.ids), time.monotonic()
            if say is not None:
                say(f"{phase}: {count} of {plural(engines, 'engine')} registered")


def engine_pids(cluster: ipp.Cluster, engine_sets: list[str]) -> list[int]:
    pids = []
    for name in engine_sets:
        launcher = cluster.engines[name]
        pids += [getattr(e, "pid", None) for e in getattr(launcher, "launchers", {}).values()]
    return [p for p in pids if isinstance(p, int) and p > 0]


class NoClient:
    """Stands in for a client that was never connected, so cleanup has one path."""

    ids: ClassVar[list[int]] = []

    def close(self) -> None:
        pass
