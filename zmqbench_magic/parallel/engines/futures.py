"""The flood, echo, map and cell form on an engine that hands back futures: the
standard library's process pool, Dask and Ray (``%taskflood --backend``), measured as
the ipyparallel flood is, so "which engine, for tasks this small?" has one method.

Rows have ipyparallel's columns: **sent** is first submit to the last submit
returning, **roundtrip** first submit to the last result. A ``map`` sends
``ceil(tasks / chunksize)`` tasks of ``chunksize`` sleeps each (what
``ProcessPoolExecutor.map`` does with its chunksize; Dask and Ray have none of their
own). Every worker runs before the first sample, as a started cluster's engines do.

While results are awaited, the workers' processes are looked at every quarter second:
one that exits is named at once (as an ipyparallel engine is), and no result for
``--timeout`` seconds is a stall.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...method.load import with_other_load
from ...method.resident import flood_meter
from ...params.columns import Row
from ...params.flood_tests import CELL_TEST, ECHO_TEST, FLOOD_TEST, MAP_TEST, FloodTest
from ...params.taskflood import CONNECT_TIMEOUT, FloodParams, FloodPoint
from ..anatomy import nan_stages
from ..celltask import CELL_FILENAME, UserTask
from ..clusters.watch import LOOK_S  # as often as the ipyparallel flood looks at its cluster
from ..tasks import echo, run_installed_cell, sleep_each

START_TIMEOUT_S = 120.0


class WorkerLost(RuntimeError):
    """A worker process of a futures backend exited, or its scheduler stopped
    answering, while it was used."""


@dataclass
class FuturesSession:
    """``workers`` single-threaded workers of one backend for one block of points;
    close it after. Subclasses start the engine and say how to submit, wait, gather."""

    backend = "futures"
    workers: int
    timeout: float
    test: FloodTest
    warmup: int = 0
    cell: UserTask | None = None
    address: str = ""  # an existing Dask scheduler or Ray cluster's, rather than our own
    connect_timeout: float = CONNECT_TIMEOUT.default
    pids: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warmed: set[FloodPoint] = field(default_factory=set)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __post_init__(self) -> None:
        try:
            self._start()
            self.pids = self._worker_pids()
            if self.address and not self.pids:
                self.notes.append(
                    f"{self.backend} at {self.address}: its workers run on other hosts, where "
                    "the kernel cannot watch their processes; a lost worker shows as a stall "
                    "(--timeout) or as the engine's own error"
                )
            if self.cell is not None:
                self._send(self.cell)
        except BaseException:
            self.close()
            raise

    # What a backend provides.
    def _start(self) -> None:
        raise NotImplementedError

    def _worker_pids(self) -> list[int]:
        raise NotImplementedError

    def _controller_pids(self) -> list[int]:
        """Its scheduler's own processes on this host (none: it runs in the client)."""
        return []

    def _submit(self, task: Callable[..., Any], *args: Any) -> Any:
        raise NotImplementedError

    def _submit_many(self, task: Callable[..., Any], arguments: list[Any]) -> list[Any]:
        """One call of ``task`` per argument, as the backend's users submit many."""
        return [self._submit(task, argument) for argument in arguments]

    def _wait(self, futures: Sequence[Any], timeout: float) -> int:
        """Wait up to ``timeout`` for all of ``futures``; return how many are done."""
        raise NotImplementedError

    def _gather(self, futures: Sequence[Any]) -> list[Any]:
        raise NotImplementedError

    def _install(self, cell: UserTask) -> None:
        raise NotImplementedError

    def _cell_call(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return run_installed_cell, (self.token,)

    def _exit_status(self, pid: int) -> str | None:
        """How worker ``pid`` ended, or None while it runs."""
        import psutil

        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return None
        except psutil.NoSuchProcess:
            pass
        return "exit status unknown (not the kernel's child)"

    def _stages_mark(self) -> Any:
        """Where the backend's record of its tasks stands before a sample (none here)."""
        return None

    def _stages(self, mark: Any) -> dict[str, float]:
        """The stages of the tasks recorded since ``mark`` (none here: not measured)."""
        return dict(nan_stages())

    def close(self) -> None:
        raise NotImplementedError

    # The samples, the same for every backend.
    def sample(self, point: FloodPoint) -> Row:
        if point not in self.warmed:
            for _ in range(self.warmup):
                self._measure(point)
            self.warmed.add(point)
        mark = self._stages_mark()
        meter = flood_meter(self._controller_pids, lambda: self.pids)
        try:
            # The collector on, as for ipyparallel's floods (flood.samples.bounded).
            row = with_other_load(
                lambda: meter.around(lambda: self._measure(point), point.tasks),
                self.pids,
                collect=True,
            )
        except (WorkerLost, TimeoutError) as exc:
            where = f"{point.tasks:,} tasks on {self.workers} {self.backend} workers"
            raise type(exc)(f"{where}: {exc}") from exc
        stages = self._stages(mark)
        return {
            "scheme": point.scheme,
            "benchmark": FloodParams.benchmark,
            "test": self.test.name,
            **row,
            **stages,
        }

    def _measure(self, point: FloodPoint) -> Row:
        row = MEASURES[self.test](self, point)
        row["tasks_per_s"] = point.tasks / row["roundtrip_s"]
        return row

    def _timed(self, submit: Callable[[], list[Any]]) -> tuple[Row, list[Any]]:
        start = time.perf_counter()
        pending = submit()
        sent = time.perf_counter() - start
        done, moved = 0, time.monotonic()
        while True:
            now_done = self._wait(pending, LOOK_S)
            if now_done == len(pending):
                break
            self._look()
            if now_done != done:
                done, moved = now_done, time.monotonic()
            elif time.monotonic() - moved > self.timeout:
                msg = (
                    f"no task was answered for {self.timeout:g} s ({done:,} of "
                    f"{len(pending):,} answered)"
                )
                raise TimeoutError(msg)
        values = self._gather(pending)  # raises a task's own error, if any
        roundtrip = time.perf_counter() - start
        return {"sent_s": sent, "roundtrip_s": roundtrip}, values

    def _send(self, cell: UserTask) -> None:
        try:
            self._install(cell)
        except Exception as exc:  # pickling can fail in many ways
            names = ", ".join(sorted(cell.values)) or "none"
            msg = f"could not send the task's names ({names}) to the {self.backend} workers: {exc}"
            raise ValueError(msg) from exc

    def _look(self) -> None:
        ended = [
            (n, pid, status)
            for n, pid in enumerate(self.pids)
            if (status := self._exit_status(pid)) is not None
        ]
        if ended:
            # A broken process pool ends its other workers with SIGTERM at once: name
            # the one that went first.
            ended.sort(key=lambda one: "SIGTERM" in one[2])
            number, pid, status = ended[0]
            raise WorkerLost(
                f"{self.backend} worker {number} (pid {pid}) exited: {status}; {self._after()}"
            )

    def _after(self) -> str:
        """What became of the engine after a loss stopped the run."""
        if self.address:
            return f"the run was stopped; the cluster at {self.address} was left as it is"
        return "the workers were shut down (the next run starts fresh ones)"

    def _check_workers(self, found: int) -> None:
        """An existing engine must have the workers ``--engines`` says (the rows and the
        advisor count them)."""
        if found != self.workers:
            msg = (
                f"the {self.backend} cluster at {self.address} has {found} workers: give "
                f"--engines {found}"
            )
            raise ValueError(msg)

    def _cell_args(self, cell: UserTask) -> tuple[Any, ...]:
        return (self.token, cell.source, dict(cell.values), dict(cell.modules), CELL_FILENAME)


def task_argument(test: FloodTest, size: int) -> Any:
    """What each task of ``test`` carries, on every engine: an array of ``size`` bytes,
    or an empty string (a test without arrays has no size)."""
    return np.zeros(size, dtype=np.uint8) if test.sends_arrays else ""


def measure_echoes(session: FuturesSession, point: FloodPoint) -> Row:
    """A flood of echoes: of an empty string, or of an array of ``size`` bytes where the
    test sends arrays."""
    tasks, test = point.tasks, session.test
    argument = task_argument(test, point.size)
    row, _ = session._timed(lambda: session._submit_many(echo, [argument] * tasks))
    if test.sends_arrays:
        row["mbit_per_s"] = test.mbit_per_s(
            argument.nbytes, tasks, session.workers, row["roundtrip_s"]
        )
    return row


def measure_map(session: FuturesSession, point: FloodPoint) -> Row:
    """``tasks`` sleeps of ``duration``, ``chunksize`` to a task, and how close to the
    ideal parallel time they came."""
    tasks, duration, chunksize = point.tasks, point.duration, point.chunksize
    chunks = [min(chunksize, tasks - i) for i in range(0, tasks, chunksize)]
    sleeps = [[duration] * n for n in chunks]
    row, _ = session._timed(lambda: session._submit_many(sleep_each, sleeps))
    row["efficiency"] = math.ceil(tasks / session.workers) * duration / row["roundtrip_s"]
    return row


def measure_cell(session: FuturesSession, point: FloodPoint) -> Row:
    """The user's cell as each task, and the overhead around its own run time."""
    tasks = point.tasks
    task, args = session._cell_call()
    row, times = session._timed(lambda: [session._submit(task, *args) for _ in range(tasks)])
    # With perfect balance, the workers together need this long for the work.
    compute, roundtrip = sum(times) / session.workers, row["roundtrip_s"]
    row.update(
        task_s=sum(times) / tasks,
        compute_s=compute,
        overhead_s=roundtrip - compute,
        overhead_fraction=(roundtrip - compute) / roundtrip,
    )
    return row


# How a futures session measures each test it has a counterpart of (push has none).
MEASURES: dict[FloodTest, Callable[[FuturesSession, FloodPoint], Row]] = {
    FLOOD_TEST: measure_echoes,
    ECHO_TEST: measure_echoes,
    MAP_TEST: measure_map,
    CELL_TEST: measure_cell,
}


def quiet_loggers(prefix: str) -> dict[str, int]:
    """Keep an engine library's loggers (those under ``prefix``) quiet while the project
    drives it: the run says in words what went wrong, and the library would add its
    own notices and tracebacks to the output. Returns their levels before. A user who
    set the top one to DEBUG asked to see them: they are left as they are."""
    top = logging.getLogger(prefix)
    if top.level == logging.DEBUG:
        return {}
    # Each one: a record propagates to the top's handlers whatever the top's level.
    names = [prefix, *(n for n in logging.root.manager.loggerDict if n.startswith(prefix + "."))]
    before = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return before


def restore_loggers(before: dict[str, int] | None) -> None:
    """The levels :func:`quiet_loggers` found, back."""
    for name, level in (before or {}).items():
        logging.getLogger(name).setLevel(level)


__all__ = [
    "MEASURES",
    "START_TIMEOUT_S",
    "FuturesSession",
    "WorkerLost",
    "quiet_loggers",
    "restore_loggers",
]
