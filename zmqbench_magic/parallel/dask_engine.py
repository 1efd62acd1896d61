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

import contextlib
import logging
import os
import socket
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from ..params.flood import STAGE_COLUMNS, STAGE_P90_COLUMNS
from .anatomy import nan_stages
from .celltask import UserTask
from .engines import need
from .futures import START_TIMEOUT_S, FuturesSession
from .tagged import end, start_reaper, tagged
from .tasks import install_cell

STAGES_NOTE = (
    "stages, dask: its task stream stamps a task's start and stop on the worker (run); "
    "submit, queue and return are not stamped apart (NaN)"
)


class DaskSession(FuturesSession):
    backend = "dask"
    cluster: Any = None
    client: Any = None
    reaper: subprocess.Popen[bytes] | None = None

    def _start(self) -> None:
        need("dask")
        from distributed import Client, LocalCluster

        if self.address:  # someone else's: connected to, never started or stopped
            self.client = Client(self.address, timeout=START_TIMEOUT_S, set_as_default=False)
            self._check_workers(len(self.client.scheduler_info()["workers"]))
        else:
            self.reaper = start_reaper(self.token)
            with tagged(self.token):
                self.cluster = LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR,
                    death_timeout=START_TIMEOUT_S,
                )  # fmt: skip
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

        # This client, never a default one the user may have made.
        with self.client.as_current(), contextlib.suppress(TimeoutError):
            wait(futures, timeout=timeout)
        return sum(future.done() for future in futures)

    def _gather(self, futures: Sequence[Any]) -> list[Any]:
        return list(self.client.gather(futures))

    def _stages(self, began: float, ended: float) -> dict[str, float]:
        import numpy as np

        stages = dict(nan_stages())
        stream = self.client.get_task_stream(start=began, stop=ended)
        runs = [
            span["stop"] - span["start"]
            for task in stream
            for span in task.get("startstops", ())
            if span.get("action") == "compute"
        ]
        if runs:
            run = STAGE_COLUMNS.index("run_s")
            stages[STAGE_COLUMNS[run]] = float(np.median(runs))
            stages[STAGE_P90_COLUMNS[run]] = float(np.percentile(runs, 90))
        return stages

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.client is not None:
                self.client.close(timeout=10)
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                self.cluster.close(timeout=10)
        if not self.address:
            end(self.token, self.reaper)
