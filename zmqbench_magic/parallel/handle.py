"""A cluster in use: the client connected to it, and for a cluster the project started,
what it takes to resize and stop it (its engines, reaper, profile dir, tunnel)."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import ipyparallel as ipp

from ..params.units import plural
from .hosts import ON_THIS_MACHINE, Placement, remove_remote_profiles
from .reaper import end_cluster_processes, kill, process_trees
from .tunnel import Tunnel, tunnelled_client


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

    @property
    def managed(self) -> bool:
        return self.cluster is not None

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts the engines were started on over SSH; none: this machine."""
        return self.placement.hosts

    def engine_ids(self) -> list[int]:
        return sorted(self.client.ids)

    def resize(self, engines: int, timeout: float) -> None:
        """Grow or shrink to ``engines`` by starting or stopping single-engine sets."""
        assert self.cluster is not None, "only clusters the project started are resized"
        have = len(self.engine_ids())
        if have == engines:
            return
        started = time.monotonic()
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
        wait_for_count(self.client, engines, timeout)
        self.events.append(
            f"resized the cluster from {have} to {plural(engines, 'engine')} in "
            f"{time.monotonic() - started:.1f} s"
        )

    def stop(self) -> None:
        """Stop a cluster the project started; only disconnect from any other."""
        self._disconnect()
        if self.cluster is None:
            return
        if self.reaper is not None:
            self.reaper.send_signal(signal.SIGTERM)
            wait_or_kill(self.reaper)
        try:
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


def wait_for_count(client: ipp.Client, engines: int, timeout: float) -> None:
    """Wait until exactly ``engines`` engines are registered."""
    deadline = time.monotonic() + timeout
    while len(client.ids) != engines:
        if time.monotonic() > deadline:
            msg = (
                f"the cluster has {plural(len(client.ids), 'engine')} registered, not {engines}, "
                f"after {timeout:g} s"
            )
            raise TimeoutError(msg)
        time.sleep(0.05)


def wait_or_kill(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)


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
