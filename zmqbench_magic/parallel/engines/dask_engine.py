"""``%taskflood --backend dask``: a ``distributed.LocalCluster`` of ``--engines``
worker processes, one thread each, on 127.0.0.1 with no dashboard; started for a
block of points and closed after it, its processes tagged for the reaper. Or, with
``--address``, an existing scheduler: connected to, and left as it was.

Tasks go by ``client.map`` (``pure=False``: every task runs, none is taken from
Dask's cache of equal calls; one message to the scheduler for them all) and come back
by ``client.gather``, as Dask's own ``client.map`` + ``gather`` loop does. Dask's task
stream stamps each task's start and stop on its worker: that gives the **run** stage;
the others are NaN.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from ...params.address import split_url
from ...params.backends import DASK
from ..anatomy import run_stage
from ..celltask import UserTask
from ..tasks import install_cell
from .futures import START_TIMEOUT_S, FuturesSession, WorkerLost, quiet_loggers, restore_loggers
from .reach import Deadline, Target, open_tcp
from .tagged import end, start_reaper, tagged

STAGES_NOTE = (
    "stages, dask: its task stream stamps a task's start and stop on the worker (run); "
    "submit, queue and return are not stamped apart (NaN)"
)


# The reason distributed gives the futures it cancels when its client loses the scheduler.
_LOST_CONNECTION = "scheduler-connection-lost"

# What a user checks when a scheduler does not answer.
_CHECK = (
    "the scheduler is running and that the port is its scheduler port (8786 by default, "
    "the one `dask scheduler` prints, not the dashboard's)"
)


def reach_scheduler(address: str, timeout: float) -> None:
    """Raise :class:`NoAnswer` unless a Dask scheduler answers at ``address`` within
    ``timeout`` seconds: asked for its identity in Dask's own protocol."""
    _, where = split_url(address, DASK.address_schemes, DASK.address_example)
    target = Target("a Dask scheduler", address, where.host, where.port or 0, _CHECK)
    deadline = Deadline(timeout)
    open_tcp(target, deadline).close()  # nothing listening is said at once, in words
    with ThreadPoolExecutor(1, thread_name_prefix="zmqbench-reach") as pool:
        # A loop of its own: a kernel's thread already runs one.
        asking = pool.submit(asyncio.run, _identity(address, deadline.left()))
        try:
            identity = asking.result()
        except (OSError, ValueError) as exc:
            raise target.fail(f"it did not answer in Dask's protocol ({exc})") from None
    if identity is None:
        raise target.fail(
            f"the connection was accepted but nothing answered as a Dask scheduler within "
            f"{timeout:g} s"
        )
    if identity.get("type") != "Scheduler":
        raise target.fail(f"it is a Dask {identity.get('type', 'server')}, not a scheduler")


async def _identity(address: str, timeout: float) -> dict[str, Any] | None:
    """The identity a Dask server gives of itself, or None after ``timeout``."""
    from distributed.comm import connect

    async def ask() -> dict[str, Any]:
        # Its own limit later than ours: a silent listener is then our timeout, not an
        # OSError that reads like a refused connection.
        comm = await connect(address, timeout=2 * timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return dict(await comm.read())
        finally:
            await comm.close()

    try:
        return await asyncio.wait_for(ask(), timeout)
    except (TimeoutError, asyncio.TimeoutError):
        return None


class _Span(TypedDict):
    """One stage of a task in Dask's task stream (its ``action``: ``compute`` is its
    run), from its start to its stop on its worker's clock."""

    action: str
    start: float
    stop: float


class _StreamedTask(TypedDict, total=False):
    """A task as Dask's task stream records it: its stages are what is read of it."""

    startstops: list[_Span]


class DaskSession(FuturesSession):
    backend = DASK.name
    cluster: Any = None
    client: Any = None
    reaper: subprocess.Popen[bytes] | None = None
    loud: dict[str, int] | None = None  # the loggers' levels before the session

    def _start(self) -> None:
        DASK.need()
        from distributed import Client, LocalCluster

        self.loud = quiet_loggers(DASK.logger)

        if self.address:  # someone else's: connected to, never started or stopped
            reach_scheduler(self.address, self.connect_timeout)
            self.client = Client(self.address, timeout=self.connect_timeout, set_as_default=False)
            self._check_workers(len(self.client.scheduler_info()["workers"]))
        else:
            self.reaper = start_reaper(self.token)
            try:
                with tagged(self.token):
                    self.cluster = LocalCluster(
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        # Its workers' own logs too: one heartbeat that met a
                        # scheduler closing wrote an ERROR into a notebook's cell, and
                        # the run names a lost worker in its own words.
                        silence_logs=logging.CRITICAL,
                        death_timeout=START_TIMEOUT_S,
                    )
            except RuntimeError as exc:
                # distributed says only "Nanny failed to start." when a worker process
                # exits before it registers: say what that means, as for an engine.
                raise WorkerLost(
                    f"a dask worker exited while the {self.workers} workers started "
                    f"(dask: {exc}); {self._after()}"
                ) from exc
            self.client = Client(self.cluster, timeout=START_TIMEOUT_S, set_as_default=False)
            self.client.wait_for_workers(self.workers, timeout=START_TIMEOUT_S)
        # The task stream's plugin, on the scheduler from the first (warm-up) task on.
        self.client.get_task_stream()
        if STAGES_NOTE not in self.notes:
            self.notes.append(STAGES_NOTE)

    def _worker_pids(self) -> list[int]:
        """The workers' processes, when they run on this host (only those can be watched)."""
        hosts = self.client.run(socket.gethostname).values()
        if any(host != socket.gethostname() for host in hosts):
            return []
        return sorted(self.client.run(os.getpid).values())

    def _install(self, cell: UserTask) -> None:
        self.client.run(install_cell, *self._cell_args(cell))

    def _submit(self, task: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(task, *args, pure=False)

    def _submit_many(self, task: Callable[..., Any], arguments: list[Any]) -> list[Any]:
        return list(self.client.map(task, arguments, pure=False))

    def _wait(self, futures: Sequence[Any], timeout: float) -> int:
        from distributed import wait

        # One future at a time, the last one not done (tasks end roughly in order, so it
        # is the one to end last). distributed's wait() leaves, per future it is given,
        # a task on the client's loop until that future ends: given all 20,000 every
        # quarter second, they piled up by gigabytes a minute while the tasks ran.
        last = next((future for future in reversed(futures) if not future.done()), None)
        if last is not None:
            # This client, never a default one the user may have made.
            with self.client.as_current():
                try:
                    wait([last], timeout=timeout)
                except TimeoutError:
                    pass  # not done yet: the caller looks out, then waits again
                except BaseException as exc:
                    self._name_a_lost_scheduler(exc)
                    raise
        return sum(future.done() for future in futures)

    def _gather(self, futures: Sequence[Any]) -> list[Any]:
        try:
            return list(self.client.gather(futures))
        except BaseException as exc:  # a lost scheduler's futures: asyncio's CancelledError
            self._name_a_lost_scheduler(exc)
            raise

    def _name_a_lost_scheduler(self, exc: BaseException) -> None:
        """The futures cancelled because the connection to the scheduler is gone say
        so before the client's own status does (a busy machine's client lags)."""
        if _LOST_CONNECTION in str(exc):
            raise self._scheduler_lost() from None
        self._check_scheduler()

    def _look(self) -> None:
        self._check_scheduler()
        super()._look()

    def _check_scheduler(self) -> None:
        """A scheduler that stopped answering is named at once, not after --timeout."""
        if self.client.status != "running":
            raise self._scheduler_lost()

    def _scheduler_lost(self) -> WorkerLost:
        where = f" at {self.address}" if self.address else ""
        status = self.client.status
        how = "its connection was lost" if status == "running" else f"this client is {status}"
        return WorkerLost(f"the dask scheduler{where} stopped answering ({how}); {self._after()}")

    # The sample's tasks are those the task stream recorded after its count before the
    # sample, not those of a wall-clock window: each worker shifts its stamps by its
    # estimate of its clock's offset from the scheduler's (from its heartbeats), which
    # a busy machine gets wrong by more than a short sample lasts, and none is kept.
    # The functions run on the scheduler are nested, so they travel by value.
    def _stages_mark(self) -> int:
        def stream_count(dask_scheduler: Any) -> int:
            return int(dask_scheduler.plugins["task-stream"].index)

        return int(self.client.run_on_scheduler(stream_count))

    def _stages(self, mark: int) -> dict[str, float]:
        def stream_since(mark: int, dask_scheduler: Any) -> list[_StreamedTask]:
            plugin = dask_scheduler.plugins["task-stream"]
            recorded = min(plugin.index - mark, len(plugin.buffer))
            return list(plugin.buffer)[len(plugin.buffer) - recorded :]

        stream = self.client.run_on_scheduler(stream_since, mark)
        return run_stage(
            [
                span["stop"] - span["start"]
                for task in stream
                for span in task.get("startstops", ())
                if span.get("action") == "compute"
            ]
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.client is not None:
                self.client.close(timeout=10)
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                self.cluster.close(timeout=10)
        if not self.address:
            end(self.token, self.reaper)
        restore_loggers(self.loud)
