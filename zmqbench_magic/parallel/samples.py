"""One sample of each ipyparallel test: submit, wait for every result, time both.

**sent** is first submit to the last submit returning, **roundtrip** first submit to
the last result received; each message's time is also split into stages
(:mod:`.anatomy`). After a sample (or an error or interrupt in it) the
cluster is left idle and the client's caches emptied, so memory stays flat over long
sweeps and a cluster that is not ours is left as it was found.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import ipyparallel as ipp
import numpy as np

from ..method.load import with_other_load
from . import cluster as clusters
from .anatomy import reply_overlap, stage_times, stamps
from .celltask import CELL_TEST, run_cell
from .tasks import echo

_DRAIN_S = 5.0
_ENGINE_CHECK_S = 0.25


def sampler(
    handle: clusters.ClusterHandle, test: str, point: Mapping[str, Any], engine_ids: list[int]
) -> Sample:
    client, tasks, view = handle.client, point["tasks"], point["view"]
    if view == "direct":
        target: Any = client[engine_ids]
        submitters: Iterator[Any] = itertools.cycle([client[i].apply_async for i in engine_ids])
        mapper = target.map_async
    elif view in ("broadcast", "coalescing"):
        # One message to the broadcast scheduler, fanned out to every engine.
        target = client.broadcast_view(targets=engine_ids, is_coalescing=view == "coalescing")
        submitters = itertools.repeat(target.apply_async)
        mapper = target.map_async
    else:
        # All engines of a cluster that has exactly this many: no targets, so the
        # pure ZeroMQ scheduler (which cannot restrict targets) works too.
        targets = None if len(engine_ids) == len(client.ids) else engine_ids
        target = client.load_balanced_view(targets=targets)
        submitters = itertools.repeat(target.apply_async)
        mapper = functools.partial(target.map_async, chunksize=point.get("chunksize", 1))
    if test == "map":
        duration = point["duration"]
        return lambda wait: _map_sample(mapper, duration, tasks, len(engine_ids), wait)
    if test == CELL_TEST:
        return lambda wait: _cell_sample(submitters, tasks, len(engine_ids), wait)
    argument: Any = np.zeros(point["size"], dtype=np.uint8) if test in ("echo", "push") else ""
    if test == "push":
        return lambda wait: _push_sample(target, argument, tasks, len(engine_ids), wait)
    return lambda wait: _flood_sample(submitters, argument, tasks, wait)


Submitted = list[tuple[float, Any]]  # when the client was asked (epoch s), the result


def _timed(
    submit: Callable[[], Submitted], tasks: int, wait: Wait
) -> tuple[list[Any], dict[str, Any]]:
    """Submit, then wait for every result: the pending results, and the sent and
    round-trip times and the stages every test reports."""
    now = time.perf_counter
    start = now()
    submitted = submit()
    sent = now() - start
    sent_at = time.time()  # on the stamps' clock
    pending = [result for _, result in submitted]
    _wait(pending, start, wait)
    roundtrip = now() - start
    _forget_broadcast_originals(wait.client, pending)
    times = stamps([at for at, _ in submitted], pending)
    return pending, {
        "sent_s": sent, "roundtrip_s": roundtrip, "tasks_per_s": tasks / roundtrip,
        **stage_times(times, wait.other_hosts), "reply_overlap": reply_overlap(times, sent_at),
    }  # fmt: skip


def _forget_broadcast_originals(client: Any, results: list[Any]) -> None:
    """ipyparallel 9 leaves a non-coalescing broadcast's own message id in the client's
    ``outstanding`` once every engine's reply (``<id>_<engine uuid>``) is in; it never
    resolves, so each later sample's clean-up would abort it and wait 5 s for it."""
    for result in results:
        for msg_id in result.msg_ids:
            client.outstanding.discard(msg_id.rsplit("_", 1)[0])


def _flood_sample(
    submitters: Iterator[Callable[..., Any]], argument: Any, tasks: int, wait: Wait
) -> dict[str, Any]:
    # The wall clock (ipyparallel's own stamps are on it), read as each call begins.
    clock = time.time
    _, row = _timed(
        lambda: [(clock(), next(submitters)(echo, argument)) for _ in range(tasks)], tasks, wait
    )
    if isinstance(argument, np.ndarray):
        # The array travels to the engine and back: both directions count.
        row["mbit_per_s"] = 2 * argument.nbytes * tasks * 8 / row["roundtrip_s"] / 1e6
    return row


def _push_sample(
    target: Any, array: np.ndarray, tasks: int, engines: int, wait: Wait
) -> dict[str, Any]:
    clock = time.time
    namespace = {"zmqbench_pushed": array}
    _, row = _timed(
        lambda: [(clock(), target.push(namespace, block=False)) for _ in range(tasks)], tasks, wait
    )
    # One direction, to every engine.
    row["mbit_per_s"] = array.nbytes * engines * tasks * 8 / row["roundtrip_s"] / 1e6
    return row


def _cell_sample(
    submitters: Iterator[Callable[..., Any]], tasks: int, engines: int, wait: Wait
) -> dict[str, Any]:
    clock = time.time
    pending, row = _timed(
        lambda: [(clock(), next(submitters)(run_cell)) for _ in range(tasks)], tasks, wait
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
    mapper: Callable[..., Any], duration: float, tasks: int, engines: int, wait: Wait
) -> dict[str, Any]:
    _, row = _timed(lambda: [(time.time(), mapper(time.sleep, [duration] * tasks))], tasks, wait)
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
    other_hosts: bool = False  # engines on other hosts: their clocks are not ours

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
    try:
        return with_other_load(lambda: sample(wait), helper_pids)
    finally:
        _settle(handle.client)


def _settle(client: Any) -> None:
    with contextlib.suppress(Exception):
        if client.outstanding:
            client.abort(list(client.outstanding), block=False)
            client.wait(timeout=_DRAIN_S)
        client.purge_local_results("all")
        client.history.clear()
