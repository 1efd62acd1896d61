"""The plain-Python baseline (``%taskflood --backend processpool``): the same flood,
echo and map on the standard library's ``ProcessPoolExecutor`` with ``--engines``
workers, so "is it ipyparallel, or is it Python processes talking?" has a number.

A pool stamps nothing, so the stage columns are NaN. Workers are started with
``spawn`` (a fork of a kernel holding ZeroMQ's threads is not safe).
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import multiprocessing
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from ...params.backends import PROCESS_POOL
from ..celltask import UserTask
from ..tasks import install_cell
from .futures import START_TIMEOUT_S, FuturesSession, WorkerLost

_BROKEN = (
    "a process-pool worker exited abruptly ({}); a script run with python is run again "
    "in each spawned worker unless its work is under `if __name__ == '__main__':`"
)

# A broken pool terminates and joins its workers at once; this bounds the wait for it.
_REAPED_WITHIN_S = 10.0


class PoolSession(FuturesSession):
    backend = PROCESS_POOL.name
    executor: concurrent.futures.ProcessPoolExecutor

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        # The cell is installed as each worker starts: a pool has no "run on every worker".
        initializer, initargs = (
            (install_cell, self._cell_args(self.cell)) if self.cell is not None else (None, ())
        )
        self.executor = concurrent.futures.ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=initializer, initargs=initargs
        )
        # Busy every worker at once, so the pool starts all of them now.
        started = [self.executor.submit(time.sleep, 0.2) for _ in range(self.workers)]
        concurrent.futures.wait(started, timeout=START_TIMEOUT_S)
        self._gather(started)

    def _worker_pids(self) -> list[int]:
        # The pool has no public way to name its workers; their CPU is not "other" load.
        return [p.pid for p in self.executor._processes.values() if p.pid]

    def _install(self, cell: UserTask) -> None:
        pass  # done by the workers' initializer

    def _submit(self, task: Callable[..., Any], *args: Any) -> Any:
        try:
            return self.executor.submit(task, *args)
        except concurrent.futures.process.BrokenProcessPool as exc:
            # A worker killed while the flood is still being sent breaks the pool here,
            # not in _gather: on a busy machine the sending is the longer part.
            self._look_when_reaped()
            raise WorkerLost(_BROKEN.format(exc)) from exc

    def _wait(self, futures: Sequence[Any], timeout: float) -> int:
        _, pending = concurrent.futures.wait(futures, timeout=timeout)
        return len(futures) - len(pending)

    def _gather(self, futures: Sequence[Any]) -> list[Any]:
        try:
            return [future.result() for future in futures]
        except concurrent.futures.process.BrokenProcessPool as exc:
            self._look_when_reaped()  # names the worker, when its exit is known
            raise WorkerLost(_BROKEN.format(exc)) from exc

    def _look_when_reaped(self) -> None:
        """Name the worker that ended, once the pool has reaped its workers."""
        # A pool marks itself broken before its manager thread has waited for the dead
        # worker; until that thread ends, this one races it to wait for the same child,
        # and the loser reads the exit status as not yet known.
        manager = getattr(self.executor, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(_REAPED_WITHIN_S)
        self._look()

    def _exit_status(self, pid: int) -> str | None:
        for process in getattr(self.executor, "_processes", {}).values():
            if process.pid == pid:
                code = process.exitcode
                if code is None:
                    return None
                if code < 0:
                    name = signal.Signals(-code).name
                    return f"killed by signal {-code} ({name})"
                return f"exit code {code}"
        return super()._exit_status(pid)

    def close(self) -> None:
        """Stop the workers: cancel what is queued, and kill any that will not go.
        (``spawn`` also starts multiprocessing's resource tracker, once per kernel: the
        standard library's own helper, which ends with the kernel.)"""
        executor = getattr(self, "executor", None)
        if executor is None:
            return
        processes = list(getattr(executor, "_processes", {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join(5)
        executor.shutdown(wait=True)
