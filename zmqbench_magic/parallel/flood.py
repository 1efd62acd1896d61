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

import contextlib
import itertools
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import ipyparallel as ipp

from ..method.assembly import RunAssembly
from ..method.control import Progress, StopFlag
from ..method.schedule import Interrupted
from ..params import PRECISION, REPEAT, FloodParams
from ..params.flood import ON_ENGINE_LOSS, TASKS
from ..params.units import format_duration, format_size, plural
from ..results import ResultSet
from . import cluster as clusters
from . import existing as existing_cluster
from .anatomy import OTHER_HOSTS_NOTE
from .celltask import CELL_TEST, UserTask
from .hosts import Placement
from .pool import PoolSession
from .reaper import processes_of
from .samples import ClusterLost, EngineLost, Sample, Wait, bounded, sampler

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
    if task is not None and "processpool" in params.backend:
        msg = "backend processpool: the cell form runs its task on ipyparallel engines only"
        raise ValueError(msg)
    cell = UserTask.of(task, namespace or {}, "test" in values) if task is not None else None
    run = _FloodRun(params, CELL_TEST if cell else params.test, cell)
    existing = existing_cluster.connect_for(params) if params.existing else None
    try:
        run.measure(existing, stop, progress)
    except Interrupted as interrupt:
        interrupt.result = run.result()
        _after_error(existing)
        raise
    except BaseException:
        _after_error(existing)
        raise
    finally:
        if existing is not None:
            existing.stop()  # disconnects only: the cluster is not ours
    return run.result()


def _after_error(existing: clusters.ClusterHandle | None) -> None:
    if existing is None:
        # After an error or a kernel interrupt the cluster's state is unknown: stop it
        # rather than hand it, half-busy, to the next call.
        clusters.stop()


@dataclass
class _FloodRun:
    params: FloodParams
    test: str
    cell: UserTask | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    # One visiting-order seed and one clock for every block of the run.
    assembly: RunAssembly = field(init=False)

    def __post_init__(self) -> None:
        self.assembly = RunAssembly(self.params)

    @property
    def notes(self) -> list[str]:
        return self.assembly.notes

    def measure(
        self,
        existing: clusters.ClusterHandle | None,
        stop: StopFlag | None,
        progress: Progress | None,
    ) -> None:
        points = list(self.params.points())

        # One block per cluster (or pool) configuration, in the params' order.
        def configuration(point: Mapping[str, Any]) -> tuple[Any, ...]:
            return point["backend"], point["scheme"], point["engines"]

        blocks = itertools.groupby(points, key=configuration)
        for number, ((backend, scheme, engines), grouped) in enumerate(blocks):
            block = list(grouped)
            session: _ClusterSession | PoolSession
            if backend == "processpool":
                session = PoolSession(engines, self.params.timeout, self.test, self.params.warmup)
            else:
                handle = existing or clusters.managed(
                    engines, scheme, self.params.timeout, _placement(self.params)
                )
                self.notes.extend(_take_events(handle))
                session = _ClusterSession(self, handle)
            done = len(self.rows)
            schedule = self.assembly.schedule(block, group_of=lambda _p: 0)
            try:
                schedule.run(
                    partial(_same, session), stop,
                    _offset(progress, done, self.params.repeat * len(points)),
                )  # fmt: skip
            finally:
                # A block's rounds are its own: arms in two blocks were not measured
                # side by side, and a paired comparison must not pair them.
                self.rows += [{**row, "block": number} for row in schedule.kept]
                self.notes.extend(schedule.notes)
                if isinstance(session, PoolSession):
                    session.close()
            if stop is not None and stop.is_set():
                return  # stopped: the cluster is idle, kept for the next run

    def result(self) -> ResultSet:
        return self.assembly.result(
            self.rows, list(self.params.points()), lambda point: describe(point, self.test),
            "off in the timed loops (client)", advice=_MORE_SAMPLES,
        )  # fmt: skip


@dataclass
class _ClusterSession:
    """The cluster of one block: one kept sample of a point at a time, the point's
    set-up (a cell's names, warm-up samples) done before its first."""

    run: _FloodRun
    handle: clusters.ClusterHandle
    prepared: dict[tuple[Any, ...], tuple[Sample, Wait]] = field(default_factory=dict)
    # The cluster's own processes are not "other" load (unknown for someone else's).
    helper_pids: list[int] = field(default_factory=list)
    elsewhere: bool | None = None  # engines on other hosts; None: not asked yet

    def __post_init__(self) -> None:
        self._find_helpers()

    def _find_helpers(self) -> None:
        if self.handle.profile_dir:
            self.helper_pids = [p.pid for p in processes_of(self.handle.profile_dir)]

    def sample(self, point: Mapping[str, Any]) -> dict[str, Any]:
        test = self.run.test
        try:
            return self._sample(point)
        except EngineLost as exc:
            if self.run.params.on_engine_loss != "continue" or not self.handle.managed:
                raise RuntimeError(f"{describe(point, test)}: {exc}; {self._after(exc)}") from exc
            self._replace_lost_engines(point, exc)
            return self._sample(point)  # the lost sample, taken again on the full cluster
        except ClusterLost as exc:
            raise RuntimeError(f"{describe(point, test)}: {exc}") from exc
        except TimeoutError as exc:
            raise TimeoutError(f"{describe(point, test)}: {exc}") from None
        except ipp.error.RemoteError as exc:
            msg = f"{describe(point, test)}: a task failed on an engine: {exc}"
            raise RuntimeError(msg) from exc

    def _sample(self, point: Mapping[str, Any]) -> dict[str, Any]:
        key = tuple(sorted(point.items()))
        if key not in self.prepared:
            self.prepared[key] = self._prepare(point)
        sample, wait = self.prepared[key]
        measured = bounded(self.handle, sample, wait, self.helper_pids)
        scheme = point.get("scheme") if self.handle.managed else "unknown"
        return {"scheme": scheme, "benchmark": "flood", "test": self.run.test, **measured}

    def _after(self, exc: EngineLost) -> str:
        if self.handle.managed:
            return (
                "the cluster was stopped (the next run starts a fresh one); "
                f"{ON_ENGINE_LOSS.option} continue replaces the engine and goes on"
            )
        return "the cluster is not the project's: it was left as it is, with the engines left"

    def _replace_lost_engines(self, point: Mapping[str, Any], exc: EngineLost) -> None:
        """Start engines to make up the count again (same controller), and note it."""
        started = time.monotonic()
        params = self.run.params
        handle = clusters.managed(
            point["engines"], point["scheme"], params.timeout, _placement(params)
        )
        self.handle = handle
        self.prepared.clear()  # engine ids changed: views and names must be set up again
        self._find_helpers()
        self.run.notes.append(
            f"{describe(point, self.run.test)}: {exc}; replaced it and took the sample again "
            f"({time.monotonic() - started:.1f} s)"
        )

    def _prepare(self, point: Mapping[str, Any]) -> tuple[Sample, Wait]:
        # --engines counts per host when the engines run on other hosts.
        engine_ids = self.handle.engine_ids()[: point["engines"] * max(1, len(self.handle.hosts))]
        if self.run.cell is not None:
            self.run.cell.send_to(self.handle.client, engine_ids)
        sample = sampler(self.handle, self.run.test, point, engine_ids)
        controller = self.handle.cluster.controller if self.handle.cluster else None
        elsewhere = self._engines_elsewhere()
        wait = Wait(self.run.params.timeout, self.handle.client, tuple(engine_ids), controller,
                    other_hosts=elsewhere)  # fmt: skip
        for _ in range(self.run.params.warmup):
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


def _same(session: _ClusterSession | PoolSession, _group: Any) -> Any:
    """Every group of a block is sampled on the block's one cluster (or pool)."""
    return contextlib.nullcontext(session)


def _offset(progress: Progress | None, before: int, total: int) -> Progress | None:
    """Progress of one block, as progress of the whole run."""
    if progress is None:
        return None
    return lambda done, _block_total: progress(before + done, max(total, before + done))


def _placement(params: FloodParams) -> Placement:
    return Placement(params.hosts, params.remote_python, params.ssh_tunnel)


def _take_events(handle: clusters.ClusterHandle) -> list[str]:
    events, handle.events[:] = list(handle.events), []
    return events


def describe(point: Mapping[str, Any], test: str) -> str:
    """``flood 256 tasks, 2 engines, lb/leastload``: a point, in words."""
    extra = ""
    if "size" in point:
        extra = f", {format_size(point['size'])} B arrays"
    if "duration" in point:
        extra = f", {format_duration(point['duration'])} sleeps"
    where = f"{plural(point['engines'], 'engine')}, {point['view']}/{point.get('scheme', '')}"
    return f"{test} {point['tasks']} tasks, {where}{extra}"
