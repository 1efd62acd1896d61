"""Task-flood, array-echo and map measurements over an ipyparallel cluster.

The classic IPython-parallel "Performance" study: submit many tiny tasks as fast as
possible, and time **sent** (first submit to the last submit returning) and
**roundtrip** (first submit to the last result received). ``echo`` sends numpy arrays
there and back; ``map`` runs ``map_async(time.sleep, ...)`` and reports how close to
the ideal parallel time it gets. The samples themselves are in :mod:`.samples`.

Points that run on the same cluster (one scheme, one engine count) are sampled in
interleaved rounds (:mod:`..method.schedule`); engine counts and schemes are measured
one block after the other, since a resize costs about a second and a new scheme a
new controller.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...method.assembly import RunAssembly
from ...method.control import Deadline, Progress, StopFlag, say_phase
from ...method.pinning import Pinning, pinned
from ...method.schedule import Interrupted
from ...params import PRECISION, REPEAT, FloodParams
from ...params.backends import BACKENDS
from ...params.columns import Row
from ...params.flood_tests import CELL_TEST, FLOOD_TESTS, FloodTest
from ...params.taskflood import TASKS, FloodPoint
from ...results import ResultSet
from ..celltask import UserTask
from ..clusters import existing as existing_cluster
from ..clusters import own as own_cluster
from ..clusters.handle import ClusterHandle
from ..clusters.watch import HEARTBEAT_NOTE, ClusterLost, EngineLost
from ..engines import SESSIONS, session_for
from ..engines.futures import FuturesSession
from .session import ClusterSession, describe, managed

_MORE_SAMPLES = f"more {REPEAT.option}, more {TASKS.option} or {PRECISION.option} narrow them"


def run_taskflood(
    params: FloodParams | None = None,
    *,
    task: str | None = None,
    namespace: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    stop: StopFlag | None = None,
    **values: Any,
) -> ResultSet:
    """Flood a cluster with tasks over every point of the sweep.

    ``task`` is Python source to run as each task instead of an echo (the cell form):
    the names it reads from ``namespace`` are sent to the engines once per point,
    before timing, and each task's own run time is measured on its engine.

    Without ``profile``/``cluster_id``/``url_file`` the project's own cluster is
    started (or reused, resized, or restarted for another scheme); it stays up for
    the next call until :func:`zmqbench_magic.cluster.stop`, an error or an interrupt.
    ``progress`` and ``stop`` are as for :func:`zmqbench_magic.run_throughput`; a stopped
    run leaves the cluster idle and ready for the next.

    Example
    -------
    >>> r = run_taskflood(tasks=[16, 256], engines=[1, 2])  # doctest: +SKIP
    >>> r.summary()[["tasks", "engines", "tasks_per_s"]]      # doctest: +SKIP
    """
    params = params or FloodParams(**values)
    cell = UserTask.of(task, namespace or {}, "test" in values) if task is not None else None
    run = _FloodRun(params, CELL_TEST if cell else FLOOD_TESTS[params.test], cell)
    existing = existing_cluster.connect_for(params) if params.existing else None
    try:
        with pinned(params.cpu) as run.pinning:
            run.measure(existing, Deadline(stop, params.max_time), progress)
    except Interrupted as interrupt:
        interrupt.result = run.result()
        _after_interrupt(existing)
        raise
    except BaseException as exc:
        if existing is None:
            # After an error the cluster's state is unknown: stop it rather than hand
            # it, half-busy, to the next call (at once, when it is broken already).
            lost = isinstance(exc.__cause__, (EngineLost, ClusterLost))
            own_cluster.stop(hard=lost)
        raise
    finally:
        if existing is not None:
            existing.stop()  # disconnects only: the cluster is not ours
    return run.result()


def _after_interrupt(existing: ClusterHandle | None) -> None:
    """After Ctrl-C the sample in progress has aborted its tasks and waited them out:
    the project's cluster stays up for the next run, unless that did not work (or the
    interrupt came while the cluster started or resized)."""
    handle = own_cluster.current()
    if existing is None and handle is not None and not handle.settled:
        own_cluster.stop()


@dataclass
class _FloodRun:
    params: FloodParams
    test: FloodTest
    cell: UserTask | None
    rows: list[Row] = field(default_factory=list)
    # One visiting-order seed and one clock for every block of the run.
    assembly: RunAssembly = field(init=False)
    pinning: Pinning = field(default_factory=lambda: Pinning(None))

    def __post_init__(self) -> None:
        self.assembly = RunAssembly(self.params)

    @property
    def notes(self) -> list[str]:
        return self.assembly.notes

    def measure(
        self,
        existing: ClusterHandle | None,
        stop: StopFlag | None,
        progress: Progress | None,
    ) -> None:
        points = list(self.params.points())

        # One block per cluster (or pool) configuration, in the params' order.
        def configuration(point: FloodPoint) -> tuple[Any, ...]:
            return point.backend, point.scheme, point.task_db, point.engines

        if progress is not None:  # a display knows the total before the first sample
            progress(0, self.params.repeat * len(points))
        blocks = itertools.groupby(points, key=configuration)
        for number, (_configuration, grouped) in enumerate(blocks):
            block = list(grouped)
            session = self._session(block[0], existing, stop, progress)
            done = len(self.rows)
            schedule = self.assembly.schedule(block, group_of=lambda _p: 0)
            try:
                # Every group of a block is sampled on the block's one cluster (or pool).
                total = self.params.repeat * len(points)
                with schedule.whole_rounds(stop):
                    for turn in schedule.turns(stop, _offset(progress, done, total)):
                        for point in turn:
                            turn.keep(point, session.sample(point))
            finally:
                # A block's rounds are its own: arms in two blocks were not measured
                # side by side, and a paired comparison must not pair them.
                self.rows += [{**row, "block": number} for row in schedule.kept]
                self.notes.extend(schedule.notes)
                if isinstance(session, FuturesSession):
                    session.close()
            if stop is not None and stop.is_set():
                return  # stopped: the cluster is idle, kept for the next run

    def _session(
        self,
        first: FloodPoint,
        existing: ClusterHandle | None,
        stop: StopFlag | None,
        progress: Progress | None,
    ) -> ClusterSession | FuturesSession:
        """A block's one cluster (or pool), started, resized or reached as its first
        point says, its processes pinned where ``--cpu`` asks."""
        backend, engines = BACKENDS[first.backend], first.engines
        if backend in SESSIONS:
            phase = f"starting {backend.title}: {backend.workers(engines)}"
            if self.params.address:
                phase = f"connecting to {backend.title} at {self.params.address}"
            say_phase(progress, phase)
            futures = session_for(
                backend,
                workers=engines,
                timeout=self.params.timeout,
                test=self.test,
                warmup=self.params.warmup,
                cell=self.cell,
                address=self.params.address,
                connect_timeout=self.params.connect_timeout,
            )
            self.notes.extend(n for n in futures.notes if n not in self.notes)
            self.pinning.pin_new()  # workers its own threads started
            return futures
        handle = existing or managed(self.params, engines, first.scheme, progress, first.task_db)
        # Started (or kept from an earlier run) by ipyparallel's own threads.
        self.pinning.pin_tree(handle.local_pids())
        self.notes.extend(_take_events(handle))
        if existing is not None and HEARTBEAT_NOTE not in self.notes:
            self.notes.append(HEARTBEAT_NOTE)
        return ClusterSession(self, handle, stop, progress)

    def result(self) -> ResultSet:
        return self.assembly.result(
            self.rows,
            list(self.params.points()),
            lambda point: describe(point, self.test),
            "on, as in any session: a flood's garbage is part of what it costs",
            advice=_MORE_SAMPLES,
        )


def _offset(progress: Progress | None, before: int, total: int) -> Progress | None:
    """Progress of one block, as progress of the whole run."""
    if progress is None:
        return None
    return lambda done, _block_total: progress(before + done, max(total, before + done))


def _take_events(handle: ClusterHandle) -> list[str]:
    events, handle.events[:] = list(handle.events), []
    return events
