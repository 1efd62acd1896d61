"""The plain-Python baseline (``%taskflood --backend processpool``): the same flood,
echo and map on the standard library's ``ProcessPoolExecutor`` with ``--engines``
workers, so "is it ipyparallel, or is it Python processes talking?" has a number.

Rows have the same columns as ipyparallel's: **sent** is first submit to the last
submit returning, **roundtrip** first submit to the last result. A pool stamps
nothing, so the stage columns are NaN. Workers are started with ``spawn`` (a fork of a
kernel holding ZeroMQ's threads is not safe) and all of them are running before the
first sample, as a started cluster's engines are.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import math
import multiprocessing
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..method.load import with_other_load
from .anatomy import nan_stages
from .tasks import echo, sleep_each

_START_TIMEOUT_S = 60.0


@dataclass
class PoolSession:
    """A pool of ``workers`` processes for one block of points; close it after."""

    workers: int
    timeout: float
    test: str
    warmup: int = 0
    executor: concurrent.futures.ProcessPoolExecutor = field(init=False)
    pids: list[int] = field(default_factory=list)
    warmed: set[tuple[Any, ...]] = field(default_factory=set)

    def __post_init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.executor = concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=context)
        try:
            # Busy every worker at once, so the pool starts all of them now.
            started = [self.executor.submit(time.sleep, 0.2) for _ in range(self.workers)]
            concurrent.futures.wait(started, timeout=_START_TIMEOUT_S)
            # The pool has no public way to name its workers; their CPU is not "other" load.
            self.pids = [p.pid for p in self.executor._processes.values() if p.pid]
        except BaseException:
            self.close()
            raise

    def sample(self, point: Mapping[str, Any]) -> dict[str, Any]:
        key = tuple(sorted(point.items()))
        if key not in self.warmed:
            for _ in range(self.warmup):
                self._sample(point)
            self.warmed.add(key)
        row = with_other_load(lambda: self._sample(point), self.pids)
        return {"scheme": point.get("scheme"), "benchmark": "flood", "test": self.test,
                **row, **nan_stages()}  # fmt: skip

    def _sample(self, point: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self._measure(point)
        except concurrent.futures.process.BrokenProcessPool as exc:
            msg = (
                f"a process-pool worker exited abruptly ({exc}); a script run with python "
                "is run again in each spawned worker unless its work is under "
                "`if __name__ == '__main__':`"
            )
            raise RuntimeError(msg) from exc

    def _measure(self, point: Mapping[str, Any]) -> dict[str, Any]:
        tasks = point["tasks"]
        if self.test == "map":
            duration, chunksize = point["duration"], point.get("chunksize", 1)
            # What executor.map does (one task per chunk), with futures to watch for a
            # stall: map's own timeout bounds the whole map, however healthy.
            chunks = [min(chunksize, tasks - i) for i in range(0, tasks, chunksize)]
            row = self._timed(lambda: [self.executor.submit(sleep_each, [duration] * n)
                                       for n in chunks], tasks)  # fmt: skip
            row["efficiency"] = math.ceil(tasks / self.workers) * duration / row["roundtrip_s"]
            return row
        argument: Any = np.zeros(point["size"], dtype=np.uint8) if self.test == "echo" else ""
        row = self._timed(lambda: [self.executor.submit(echo, argument) for _ in range(tasks)],
                          tasks)  # fmt: skip
        if self.test == "echo":
            row["mbit_per_s"] = 2 * argument.nbytes * tasks * 8 / row["roundtrip_s"] / 1e6
        return row

    def _timed(self, submit: Any, tasks: int) -> dict[str, Any]:
        start = time.perf_counter()
        pending = submit()
        sent = time.perf_counter() - start
        for done, handed in enumerate(pending):
            # --timeout is a stall: each result may take that long after the one before.
            try:
                handed.result(timeout=self.timeout)
            except concurrent.futures.TimeoutError:
                msg = (
                    f"no task was answered for {self.timeout:g} s ({done:,} of "
                    f"{len(pending):,} answered)"
                )
                raise TimeoutError(msg) from None
        roundtrip = time.perf_counter() - start
        return {"sent_s": sent, "roundtrip_s": roundtrip, "tasks_per_s": tasks / roundtrip}

    def close(self) -> None:
        """Stop the workers: cancel what is queued, and kill any that will not go.
        (``spawn`` also starts multiprocessing's resource tracker, once per kernel: the
        standard library's own helper, which ends with the kernel.)"""
        processes = list(getattr(self.executor, "_processes", {}).values())
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join(5)
        self.executor.shutdown(wait=True)
