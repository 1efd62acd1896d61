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
from typing import Any

import numpy as np

from ..method.control import gc_off
from ..method.load import CpuMeter
from . import cluster as clusters
from .celltask import CELL_TEST, run_cell

_DRAIN_S = 5.0
Sample = Callable[[float], dict[str, Any]]


def echo(x: Any) -> Any:
    """The task of the flood and echo tests: hand the argument back."""
    return x


def sampler(
    handle: clusters.ClusterHandle, test: str, point: Mapping[str, Any], engine_ids: list[int]
) -> Callable[[float], dict[str, Any]]:
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
        return lambda timeout: _map_sample(mapper, duration, tasks, len(engine_ids), timeout)
    if test == CELL_TEST:
        return lambda timeout: _cell_sample(submitters, tasks, len(engine_ids), timeout)
    argument = np.zeros(point["size"], dtype=np.uint8) if test == "echo" else ""
    return lambda timeout: _flood_sample(submitters, argument, tasks, timeout)


def _timed(
    submit: Callable[[], list[Any]], tasks: int, timeout: float
) -> tuple[list[Any], dict[str, Any]]:
    """Submit, then wait for every result: the pending results, and the sent and
    round-trip times every test reports."""
    now = time.perf_counter
    start = now()
    pending = submit()
    sent = now() - start
    _wait(pending, start, timeout)
    roundtrip = now() - start
    return pending, {"sent_s": sent, "roundtrip_s": roundtrip, "tasks_per_s": tasks / roundtrip}


def _flood_sample(
    submitters: Iterator[Callable[..., Any]], argument: Any, tasks: int, timeout: float
) -> dict[str, Any]:
    _, row = _timed(
        lambda: [next(submitters)(echo, argument) for _ in range(tasks)], tasks, timeout
    )
    if isinstance(argument, np.ndarray):
        # The array travels to the engine and back: both directions count.
        row["mbit_per_s"] = 2 * argument.nbytes * tasks * 8 / row["roundtrip_s"] / 1e6
    return row


def _cell_sample(
    submitters: Iterator[Callable[..., Any]], tasks: int, engines: int, timeout: float
) -> dict[str, Any]:
    pending, row = _timed(
        lambda: [next(submitters)(run_cell) for _ in range(tasks)], tasks, timeout
    )
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
    mapper: Callable[..., Any], duration: float, tasks: int, engines: int, timeout: float
) -> dict[str, Any]:
    _, row = _timed(lambda: [mapper(time.sleep, [duration] * tasks)], tasks, timeout)
    # The ideal: every engine busy, the last round of tasks as long as the others.
    row["efficiency"] = math.ceil(tasks / engines) * duration / row["roundtrip_s"]
    return row


def _wait(pending: list[Any], start: float, timeout: float) -> None:
    for result in pending:
        remaining = start + timeout - time.perf_counter()
        if remaining <= 0 or not result.wait(remaining):
            msg = f"tasks were still running {timeout:g} s after the first was submitted"
            raise TimeoutError(msg)
        result.get()  # raises the task's own error, if any


def bounded(
    handle: clusters.ClusterHandle,
    sample: Sample,
    timeout: float,
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
            row = sample(timeout)
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
