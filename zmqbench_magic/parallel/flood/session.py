"""The cluster of one block of a flood: one kept sample of a point at a time on it,
the point's set-up (a cell's names, warm-up samples) done before its first; a lost
engine named, or (``--on-engine-loss continue``) replaced and the sample taken again."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

import ipyparallel as ipp

from ...method.control import Progress, StopFlag, say_phase
from ...method.resident import flood_meter
from ...params import FloodParams
from ...params.backends import BACKENDS
from ...params.columns import Row
from ...params.flood_tests import FloodTest
from ...params.taskflood import ON_ENGINE_LOSS, TASK_DB, FloodPoint
from ...params.units import format_duration, format_size
from ..anatomy import OTHER_HOSTS_NOTE
from ..celltask import UserTask
from ..clusters import own as own_cluster
from ..clusters.handle import ClusterHandle
from ..clusters.hosts import Placement
from ..clusters.reaper import processes_of
from ..clusters.watch import ClusterLost, EngineLost
from .samples import Sample, Wait, bounded, sampler, settle


class FloodRun(Protocol):
    """What a session reads of the run it belongs to."""

    params: FloodParams
    test: FloodTest
    cell: UserTask | None

    @property
    def notes(self) -> list[str]: ...


@dataclass
class ClusterSession:
    """The cluster of one block: one kept sample of a point at a time, the point's
    set-up (a cell's names, warm-up samples) done before its first."""

    run: FloodRun
    handle: ClusterHandle
    stop: StopFlag | None = None
    progress: Progress | None = None
    prepared: dict[FloodPoint, tuple[Sample, Wait]] = field(default_factory=dict)
    # The cluster's own processes are not "other" load (unknown for someone else's).
    helper_pids: list[int] = field(default_factory=list)
    elsewhere: bool | None = None  # engines on other hosts; None: not asked yet

    def __post_init__(self) -> None:
        self._find_helpers()

    def _find_helpers(self) -> None:
        if self.handle.profile_dir:
            self.helper_pids = [p.pid for p in processes_of(self.handle.profile_dir)]

    def sample(self, point: FloodPoint) -> Row:
        test = self.run.test
        try:
            return self._sample(point)
        except EngineLost as exc:
            if self.run.params.on_engine_loss != "continue" or not self.handle.managed:
                raise RuntimeError(f"{describe(point, test)}: {exc}; {self._after(exc)}") from exc
            settle(self.handle, self.run.params.timeout)
            self._replace_lost_engines(point, exc)
            return self._sample(point)  # the lost sample, taken again on the full cluster
        except ClusterLost as exc:
            raise RuntimeError(f"{describe(point, test)}: {exc}") from exc
        except TimeoutError as exc:
            raise TimeoutError(f"{describe(point, test)}: {exc}") from None
        except ipp.error.RemoteError as exc:
            msg = f"{describe(point, test)}: a task failed on an engine: {exc}"
            raise RuntimeError(msg) from exc

    def _sample(self, point: FloodPoint) -> Row:
        if point not in self.prepared:
            self.prepared[point] = self._prepare(point)
        sample, wait = self.prepared[point]
        meter = flood_meter(self.handle.controller_pids, self.handle.local_engine_pids)

        def with_memory(wait: Wait) -> Row:
            return meter.around(partial(sample, wait), point.tasks)

        measured = bounded(self.handle, with_memory, wait, self.helper_pids)
        scheme = point.scheme if self.handle.managed else "unknown"
        return {
            "scheme": scheme,
            "benchmark": FloodParams.benchmark,
            "test": self.run.test.name,
            **measured,
        }

    def _after(self, exc: EngineLost) -> str:
        if self.handle.managed:
            return (
                "the cluster was stopped (the next run starts a fresh one); "
                f"{ON_ENGINE_LOSS.option} continue replaces the engine and goes on"
            )
        return "the cluster is not the project's: it was left as it is, with the engines left"

    def _replace_lost_engines(self, point: FloodPoint, exc: EngineLost) -> None:
        """Start engines to make up the count again (same controller), and note it."""
        started = time.monotonic()
        params = self.run.params
        self.handle = managed(params, point.engines, point.scheme, task_db=self.handle.task_db)
        self.prepared.clear()  # engine ids changed: views and names must be set up again
        self._find_helpers()
        self.run.notes.append(
            f"{describe(point, self.run.test)}: {exc}; replaced it and took the sample again "
            f"({time.monotonic() - started:.1f} s)"
        )

    def _prepare(self, point: FloodPoint) -> tuple[Sample, Wait]:
        # --engines counts per host when the engines run on other hosts.
        engine_ids = self.handle.engine_ids()[: self.handle.placement.engine_count(point.engines)]
        if self.run.cell is not None:
            self.run.cell.send_to(self.handle.client, engine_ids)
        sample = sampler(self.handle, self.run.test, point, engine_ids)
        wait = Wait(
            self.run.params.timeout,
            self.handle,
            tuple(engine_ids),
            self._engines_elsewhere(),
            self.stop,
            self.progress,
        )
        for done in range(self.run.params.warmup):
            say_phase(
                self.progress, f"warm-up sample {done + 1} of {self.run.params.warmup} (not kept)"
            )
            bounded(self.handle, sample, wait)
        return sample, wait

    def _engines_elsewhere(self) -> bool:
        """Whether the engines' clocks are other hosts' (asked once per cluster, said
        once in the notes)."""
        if self.elsewhere is None:
            if self.handle.managed:
                self.elsewhere = bool(self.handle.hosts)
            else:  # someone else's cluster: ask its engines where they run
                names = self.handle.client[:].apply_sync(socket.gethostname)
                self.elsewhere = any(name != socket.gethostname() for name in names)
            if self.elsewhere and OTHER_HOSTS_NOTE not in self.run.notes:
                self.run.notes.append(OTHER_HOSTS_NOTE)
        return self.elsewhere


def managed(
    params: FloodParams,
    engines: int,
    scheme: str,
    progress: Progress | None = None,
    task_db: str = TASK_DB.default,
) -> ClusterHandle:
    """The project's cluster for a block: started, reused or resized, each phase told
    to ``progress``; an engine or the controller that exits meanwhile is named, and
    the cluster stopped."""
    say = None if progress is None else partial(say_phase, progress)
    try:
        return own_cluster.managed(
            engines, scheme, params.timeout, _placement(params), say, task_db
        )
    except EngineLost as exc:
        msg = f"{exc}; the cluster was stopped (the next run starts a fresh one)"
        raise RuntimeError(msg) from exc
    except ClusterLost as exc:
        raise RuntimeError(str(exc)) from exc


def _placement(params: FloodParams) -> Placement:
    return Placement(params.hosts, params.remote_python, params.ssh_tunnel)


def describe(point: FloodPoint, test: FloodTest) -> str:
    """``flood 256 tasks, 2 engines, lb/leastload`` (``2 workers, dask`` on another
    backend, which has no views or schemes): a point, in words."""
    extra = ""
    if "size" in point:  # where the test reads it
        extra = f", {format_size(point.size)} B arrays"
    if "duration" in point:
        extra = f", {format_duration(point.duration)} sleeps"
    backend = BACKENDS[point.backend]
    where = f"{backend.workers(point.engines)}, {point.view}/{point.scheme}"
    if not backend.views:
        where = f"{backend.workers(point.engines)}, {backend.name}"
    return f"{test.name} {point.tasks} tasks, {where}{extra}"
