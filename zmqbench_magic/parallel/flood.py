"""Task-flood, array-echo and map measurements over an ipyparallel cluster.

The classic IPython-parallel "Performance" study: submit many tiny tasks as fast as
possible, and time **sent** (first submit to the last submit returning) and
**roundtrip** (first submit to the last result received). ``echo`` sends numpy arrays
there and back; ``map`` runs ``map_async(time.sleep, ...)`` and reports how close to
the ideal parallel time it gets.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import ipyparallel as ipp
import numpy as np

from ..method.control import Progress, StopFlag, Stopped, check_stop, stopped_note
from ..params import FloodParams
from ..params.units import format_duration, format_size
from ..results import ResultSet, environment, spread_warnings
from . import cluster as clusters
from .celltask import CELL_TEST, UserTask, run_cell

_DRAIN_S = 5.0
_MORE_SAMPLES = "use more --repeat or more --tasks"


def echo(x: Any) -> Any:
    """The task of the flood and echo tests: hand the argument back."""
    return x


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
    test = CELL_TEST if cell else params.test
    points = list(params.points())
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    notes: list[str] = []
    existing = _connect(params) if params.existing else None
    try:
        for done, point in enumerate(points, 1):
            handle = existing or clusters.managed(point["engines"], point["scheme"], params.timeout)
            notes += _take_events(handle)
            point_rows = _measure_point(handle, params, point, test, cell, stop)
            rows.extend(point_rows)
            where = describe(point, test)
            warnings += spread_warnings(point_rows, "tasks_per_s", where, _MORE_SAMPLES)
            if progress is not None:
                progress(done, len(points))
    except Stopped:
        # Checked between samples only, so the cluster is idle: keep it for the next run.
        notes.append(stopped_note(len(rows) // params.repeat, len(points)))
    except BaseException:
        if existing is None:
            # After an error or a kernel interrupt the cluster's state is unknown:
            # stop it rather than hand it, half-busy, to the next call.
            clusters.stop()
        raise
    finally:
        if existing is not None:
            existing.stop()  # disconnects only: the cluster is not ours
    settings = params.settings()
    metadata = {**environment(), "notes": notes}
    return ResultSet("flood", rows, settings, metadata, tuple(warnings))


def _connect(params: FloodParams) -> clusters.ClusterHandle:
    handle = clusters.connect(params.profile, params.cluster_id, params.url_file, params.timeout)
    available = len(handle.engine_ids())
    if max(params.engines) > available:
        handle.stop()
        msg = (
            f"engines {max(params.engines)}: the running cluster has {available} engines, "
            "and the project never resizes a cluster it did not start"
        )
        raise ValueError(msg)
    return handle


def _take_events(handle: clusters.ClusterHandle) -> list[str]:
    events, handle.events[:] = list(handle.events), []
    return events


def _measure_point(
    handle: clusters.ClusterHandle,
    params: FloodParams,
    point: Mapping[str, Any],
    test: str,
    cell: UserTask | None,
    stop: StopFlag | None,
) -> list[dict[str, Any]]:
    engine_ids = handle.engine_ids()[: point["engines"]]
    if cell is not None:
        cell.send_to(handle.client, engine_ids)
    sample = _sampler(handle, test, point, engine_ids)

    def one_sample() -> dict[str, Any]:
        check_stop(stop)
        return _bounded(handle, sample, params.timeout)

    try:
        for _ in range(params.warmup):
            one_sample()
        kept = [one_sample() for _ in range(params.repeat)]
    except TimeoutError as exc:
        raise TimeoutError(f"{describe(point, test)}: {exc}") from None
    except ipp.error.RemoteError as exc:
        msg = f"{describe(point, test)}: a task failed on an engine: {exc}"
        raise RuntimeError(msg) from exc
    scheme = point.get("scheme") if handle.managed else "unknown"
    return [
        {**point, "scheme": scheme, "benchmark": "flood", "test": test,
         "sample": number, **measured}
        for number, measured in enumerate(kept)
    ]  # fmt: skip


def _sampler(
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
    row["efficiency"] = duration * tasks / engines / row["roundtrip_s"]
    return row


def _wait(pending: list[Any], start: float, timeout: float) -> None:
    for result in pending:
        remaining = start + timeout - time.perf_counter()
        if remaining <= 0 or not result.wait(remaining):
            msg = f"tasks were still running {timeout:g} s after the first was submitted"
            raise TimeoutError(msg)
        result.get()  # raises the task's own error, if any


def _bounded(
    handle: clusters.ClusterHandle, sample: Callable[[float], dict[str, Any]], timeout: float
) -> dict[str, Any]:
    """One sample; afterwards, or after an error or interrupt, the cluster is left
    idle and its client's caches emptied, so memory stays flat over long sweeps (and a
    running cluster that is not ours is left as it was found)."""
    try:
        return sample(timeout)
    finally:
        _settle(handle.client)


def _settle(client: Any) -> None:
    with contextlib.suppress(Exception):
        if client.outstanding:
            client.abort(list(client.outstanding), block=False)
            client.wait(timeout=_DRAIN_S)
        client.purge_local_results("all")
        client.history.clear()


def describe(point: Mapping[str, Any], test: str) -> str:
    """``flood 256 tasks, 2 engines, lb/leastload``: a point, in words."""
    extra = ""
    if "size" in point:
        extra = f", {format_size(point['size'])} B arrays"
    if "duration" in point:
        extra = f", {format_duration(point['duration'])} sleeps"
    where = f"{point['engines']} engines, {point['view']}/{point.get('scheme', '')}"
    return f"{test} {point['tasks']} tasks, {where}{extra}"
