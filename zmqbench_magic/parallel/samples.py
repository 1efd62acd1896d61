"""One sample of each ipyparallel test: submit, wait for every result, time both.

**sent** is first submit to the last submit returning, **roundtrip** first submit to
the last result received. After a sample (or an error or interrupt in it) the
cluster is left idle and the client's caches emptied, so memory stays flat over long
sweeps and a cluster that is not ours is left as it was found.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import ipyparallel as ipp
import numpy as np

from ..method.control import gc_off
from ..method.load import CpuMeter
from . import cluster as clusters
from .celltask import CELL_TEST, run_cell

_DRAIN_S = 5.0
_ENGINE_CHECK_S = 0.25


def echo(x: Any) -> Any:
    """The task of the flood and echo tests: hand the argument back."""
    return x


def sampler(
    handle: clusters.ClusterHandle, test: str, point: Mapping[str, Any], engine_ids: list[int]
) -> Sample:
    client, tasks = handle.client, point["tasks"]
    if point["view"] == "direct":
        views = [client[i] for i in engine_ids]
        submitters = itertools.cycle([v.apply_async for v in views])
        mapper = client[engine_ids].map_async
    else:
        # All engines of a cluster that has exactly this many: no targets, so the
        # pure ZeroMQ scheduler (which cannot restrict targets) works too.
        targets = None if len(engine_ids) == len(client.ids) else engine_ids
        view = client.load_balanced_view(targets=targets)
        submitters = itertools.repeat(view.apply_async)
        mapper = view.map_async
    if test == "map":
        duration = point["duration"]
        return lambda wait: _map_sample(mapper, duration, tasks, len(engine_ids), wait)
    if test == CELL_TEST:
        return lambda wait: _cell_sample(submitters, tasks, len(engine_ids), wait)
    argument = np.zeros(point["size"], dtype=np.uint8) if test == "echo" else ""
    return lambda wait: _flood_sample(submitters, argument, tasks, wait)


def _timed(
    submit: Callable[[], list[Any]], tasks: int, wait: Wait
) -> tuple[list[Any], dict[str, Any]]:
    """Submit, then wait for every result: the pending results, and the sent and
    round-trip times every test reports."""
    now = time.perf_counter
    start = now()
    pending = submit()
    sent = now() - start
    _wait(pending, start, wait)
    roundtrip = now() - start
    return pending, {"sent_s": sent, "roundtrip_s": roundtrip, "tasks_per_s": tasks / roundtrip}


def _flood_sample(
    submitters: Iterator[Callable[..., Any]], argument: Any, tasks: int, wait: Wait
) -> dict[str, Any]:
    _, row = _timed(lambda: [next(submitters)(echo, argument) for _ in range(tasks)], tasks, wait)
    if isinstance(argument, np.ndarray):
        # The array travels to the engine and back: both directions count.
        row["mbit_per_s"] = 2 * argument.nbytes * tasks * 8 / row["roundtrip_s"] / 1e6
    return row


def _cell_sample(
    submitters: Iterator[Callable[..., Any]], tasks: int, engines: int, wait: Wait
) -> dict[str, Any]:
    pending, row = _timed(lambda: [next(submitters)(run_cell) for _ in range(tasks)], tasks, wait)
    task_times = [result.get() for result in pending]
    # With perfect balance, the engines together need this long for the work itself.
    compute, roundtrip = sum(task_times) / engines, row["roundtrip_s"]
    return {
        **row,
        "task_s": sum(task_times) / tasks,
        "compute_s": compute,
        "overhead_s": roundtrip - compute,
        "overhead_fraction": (roundtrip - compute) / roundtrip,
    }


def _map_sample(
    mapper: Callable[..., Any], duration: float, tasks: int, engines: int, wait: Wait
) -> dict[str, Any]:
    _, row = _timed(lambda: [mapper(time.sleep, [duration] * tasks)], tasks, wait)
    # The ideal: every engine busy, the last round of tasks as long as the others.
    row["efficiency"] = math.ceil(tasks / engines) * duration / row["roundtrip_s"]
    return row


class EngineLost(RuntimeError):
    """An engine of the sample went away (died, or was stopped) while it ran."""


class ClusterLost(RuntimeError):
    """The cluster's controller went away while a sample ran."""


@dataclass(frozen=True)
class Wait:
    """How long a sample may wait for its results, and the engines it runs on."""

    timeout: float
    client: Any
    engine_ids: tuple[int, ...]
    controller: Any = None  # the project's controller launcher; None for another's

    def check_engines(self, pending: list[Any]) -> None:
        """``EngineLost`` naming the engines of the sample that have unregistered (the
        controller saw them go) and the tasks that went with them; ``ClusterLost``
        when the controller itself is gone (nothing would ever answer)."""
        process = getattr(self.controller, "process", None)
        if process is not None and not process.is_running():
            msg = (
                f"the controller (pid {process.pid}) exited during the sample: nothing can "
                "register, resize or report engines any more; the cluster was stopped (the "
                "next run starts a fresh one)"
            )
            raise ClusterLost(msg)
        gone = sorted(set(self.engine_ids) - set(self.client.ids))
        if gone:
            lost = sum(not result.ready() for result in pending)
            names = ", ".join(str(e) for e in gone)
            msg = (
                f"engine {names} of {len(self.engine_ids)} went away during the sample "
                f"(it unregistered from the controller): {lost} of {len(pending)} "
                "submissions had no result"
            )
            raise EngineLost(msg)


Sample = Callable[[Wait], dict[str, Any]]


def _wait(pending: list[Any], start: float, wait: Wait) -> None:
    """Every result, in turn, looking every quarter second whether an engine or the
    controller went (also while results keep coming: the schedulers can run on for a
    while without the controller, on a cluster nobody can repair any more)."""
    checked = time.perf_counter()
    for result in pending:
        if time.perf_counter() - checked > _ENGINE_CHECK_S:
            wait.check_engines(pending)
            checked = time.perf_counter()
        while not result.wait(_ENGINE_CHECK_S):
            wait.check_engines(pending)
            checked = time.perf_counter()
            if time.perf_counter() - start > wait.timeout:
                msg = f"tasks were still running {wait.timeout:g} s after the first was submitted"
                raise TimeoutError(msg)
        try:
            result.get()  # raises the task's own error, if any
        except ipp.error.EngineError as exc:
            wait.check_engines(pending)  # names the engine, when the client knows it
            raise EngineLost(f"an engine died while running a task: {exc}") from exc
    wait.check_engines(pending)


def bounded(
    handle: clusters.ClusterHandle,
    sample: Sample,
    wait: Wait,
    helper_pids: Iterable[int] = (),
) -> dict[str, Any]:
    """One sample, with the garbage collector off and the rest of the machine's load
    (``other_load``; ``helper_pids`` are the cluster's own processes) measured.

    Afterwards, or after an error or interrupt, the cluster is left idle and its
    client's caches emptied, so memory stays flat over long sweeps (and a running
    cluster that is not ours is left as it was found)."""
    meter = CpuMeter(lambda: helper_pids)
    try:
        meter.start()
        with gc_off():
            row = sample(wait)
        return {**row, "other_load": meter.stop()}
    finally:
        _settle(handle.client)


def _settle(client: Any) -> None:
    with contextlib.suppress(Exception):
        if client.outstanding:
            client.abort(list(client.outstanding), block=False)
            client.wait(timeout=_DRAIN_S)
        client.purge_local_results("all")
        client.history.clear()
