"""One sample of each ipyparallel test: submit, wait for every result, time both.

**sent** is first submit to the last submit returning, **roundtrip** first submit to
the last result received; each message's time is also split into stages
(:mod:`.anatomy`). While a sample runs it watches the cluster (:mod:`.watch`), its
stop flag and its progress; after it (or an error, a stop or an interrupt in it) the
cluster is left idle and the client's caches emptied (:func:`settle`): what is still
outstanding aborted and waited out, the client's per-task records purged, and the freed
heap handed back, so the next sample (or run) does not queue behind this one's backlog
and memory levels off over long sweeps.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ipyparallel as ipp
import numpy as np

from ...method.control import Progress, StopFlag, check_stop, say_doing
from ...method.heap import give_back_freed, held_bytes
from ...method.load import with_other_load
from ...params.columns import Row
from ...params.flood_tests import CELL_TEST, ECHO_TEST, FLOOD_TEST, MAP_TEST, PUSH_TEST, FloodTest
from ...params.taskflood import FloodPoint
from ..anatomy import reply_overlap, stage_times, stamps
from ..celltask import run_cell
from ..clusters.handle import ClusterHandle
from ..clusters.watch import LOOK_S, ClusterLost, EngineLost
from ..engines.futures import task_argument
from ..tasks import echo

_LOOK_EVERY = 32  # submissions between two glances at the clock
_SAY_AFTER_S = 1.0  # a sample longer than this says how far it has got


@dataclass(frozen=True)
class _Targets:
    """Where a sample's tasks go on the point's view: the view itself, each task's
    submit call in turn, and its map."""

    view: Any
    submitters: Iterator[Callable[..., Any]]
    mapper: Callable[..., Any]
    engines: int


def sampler(
    handle: ClusterHandle, test: FloodTest, point: FloodPoint, engine_ids: list[int]
) -> Sample:
    """The point's sample of ``test`` on the engines ``engine_ids``, set up (its view
    made, its array allocated) before anything is timed."""
    client, view = handle.client, point.view
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
        restricted = None if len(engine_ids) == len(client.ids) else engine_ids
        target = client.load_balanced_view(targets=restricted)
        submitters = itertools.repeat(target.apply_async)
        mapper = functools.partial(target.map_async, chunksize=point.chunksize)
    return SAMPLERS[test](test, _Targets(target, submitters, mapper, len(engine_ids)), point)


def _echoes(test: FloodTest, targets: _Targets, point: FloodPoint) -> Sample:
    argument, tasks = task_argument(test, point.size), point.tasks
    return lambda wait: _flood_sample(test, targets.submitters, argument, tasks, wait)


def _pushes(test: FloodTest, targets: _Targets, point: FloodPoint) -> Sample:
    array, tasks = task_argument(test, point.size), point.tasks
    return lambda wait: _push_sample(test, targets.view, array, tasks, targets.engines, wait)


def _maps(_test: FloodTest, targets: _Targets, point: FloodPoint) -> Sample:
    duration, tasks = point.duration, point.tasks
    return lambda wait: _map_sample(targets.mapper, duration, tasks, targets.engines, wait)


def _cells(_test: FloodTest, targets: _Targets, point: FloodPoint) -> Sample:
    tasks = point.tasks
    return lambda wait: _cell_sample(targets.submitters, tasks, targets.engines, wait)


# How each test's sample is made on an ipyparallel cluster.
SAMPLERS: dict[FloodTest, Callable[[FloodTest, _Targets, FloodPoint], Sample]] = {
    FLOOD_TEST: _echoes,
    ECHO_TEST: _echoes,
    MAP_TEST: _maps,
    PUSH_TEST: _pushes,
    CELL_TEST: _cells,
}


# How long the wait for a sample's outputs goes on with none of them read.
_OUTPUTS_STILL_S = 1.0

Submitted = list[tuple[float, Any]]  # when the client was asked (epoch s), the result


def _timed(
    submit: Callable[[], Any], tasks: int, wait: Wait, calls: int = 0
) -> tuple[list[Any], Row]:
    """Call ``submit`` ``tasks`` times (``calls`` times: a map submits once), then wait
    for every result: the pending results, and the sent and round-trip times and the
    stages every test reports. Every quarter second, between submissions and while
    waiting, the sample looks whether the cluster is whole, whether it should stop
    and whether it still moves."""
    now, clock = time.perf_counter, time.time  # ipyparallel's own stamps are on the wall clock
    pulse = _Pulse(wait, tasks)
    submitted = pulse.submitted
    try:
        # The collector runs during the flood, as in any session; garbage left by what
        # came before (a warm-up, the last sample) is collected first, or its freeing
        # would count against this flood's heap.
        gc.collect()
        held_before = held_bytes()
        start = now()
        for count in range(1, (calls or tasks) + 1):
            submitted.append((clock(), submit()))
            if not count % _LOOK_EVERY:
                pulse.look()
        sent = now() - start
        sent_at = clock()
        _wait(pulse)
        roundtrip = now() - start
        results = [result for _, result in submitted]
        unread = sum(not result.wait_for_output(0) for result in results)
        every_output = _wait_for_outputs(results, wait.timeout)
        # Read while every result is still held, once its output is read too: what the
        # flood's tasks hold at once, without the IOPub messages still queued at the
        # last reply, which drain (their share is the sample's own column).
        held = held_bytes() - held_before
    finally:
        _forget_broadcast_originals(wait.client, [result for _, result in submitted])
    pending = [result for _, result in submitted]
    times = stamps([at for at, _ in submitted], pending)
    return pending, {
        "sent_s": sent,
        "roundtrip_s": roundtrip,
        "tasks_per_s": tasks / roundtrip,
        "client_held_kb_per_task": held / 1e3 / tasks,
        "outputs_unread": unread / len(results) if every_output else math.nan,
        **stage_times(times, wait.other_hosts),
        "reply_overlap": reply_overlap(times, sent_at),
    }


def _wait_for_outputs(results: list[Any], timeout: float) -> bool:
    """Wait, outside the timed span, until the client has read every task's output
    (its engine's idle status on IOPub, which ends it). Those come on another socket,
    which the client's IO thread reads after the replies: after a flood of tens of
    thousands of tasks, thousands are still queued when the last reply is in, and they
    would drain during the next sample, whose heap would then read low (negative at
    512 tasks after 32,768). Gives up once :data:`_OUTPUTS_STILL_S` passes with no
    output read: some never come (an engine lost now; a broadcast's, which its engines
    publish under the broadcast's own id, not the one ipyparallel waits on). Whether
    every output was read."""
    still_for = min(timeout, _OUTPUTS_STILL_S)
    return all(result.wait_for_output(still_for) for result in results)


def _forget_broadcast_originals(client: Any, results: list[Any]) -> None:
    """ipyparallel 9 leaves a non-coalescing broadcast's own message id in the client's
    ``outstanding`` once every engine's reply (``<id>_<engine uuid>``) is in; it never
    resolves, so each later sample's clean-up would abort it and wait 5 s for it."""
    for result in results:
        for msg_id in result.msg_ids:
            client.outstanding.discard(msg_id.rsplit("_", 1)[0])


def _flood_sample(
    test: FloodTest,
    submitters: Iterator[Callable[..., Any]],
    argument: Any,
    tasks: int,
    wait: Wait,
) -> Row:
    _, row = _timed(lambda: next(submitters)(echo, argument), tasks, wait)
    if test.sends_arrays:
        row["mbit_per_s"] = test.mbit_per_s(argument.nbytes, tasks, 1, row["roundtrip_s"])
    return row


def _push_sample(
    test: FloodTest, target: Any, array: np.ndarray, tasks: int, engines: int, wait: Wait
) -> Row:
    namespace = {"zmqbench_pushed": array}
    _, row = _timed(lambda: target.push(namespace, block=False), tasks, wait)
    row["mbit_per_s"] = test.mbit_per_s(array.nbytes, tasks, engines, row["roundtrip_s"])
    return row


def _cell_sample(
    submitters: Iterator[Callable[..., Any]], tasks: int, engines: int, wait: Wait
) -> Row:
    pending, row = _timed(lambda: next(submitters)(run_cell), tasks, wait)
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
) -> Row:
    _, row = _timed(lambda: mapper(time.sleep, [duration] * tasks), tasks, wait, calls=1)
    # The ideal: every engine busy, the last round of tasks as long as the others.
    row["efficiency"] = math.ceil(tasks / engines) * duration / row["roundtrip_s"]
    return row


@dataclass(frozen=True)
class Wait:
    """What a sample watches while it runs, and how long it may go without progress."""

    timeout: float  # no task submitted or completed for this long: the sample stalled
    handle: ClusterHandle
    engine_ids: tuple[int, ...]
    other_hosts: bool = False  # engines on other hosts: their clocks are not ours
    stop: StopFlag | None = None  # polled mid-sample too: a flood can run for minutes
    progress: Progress | None = None  # told what a long sample is doing

    @property
    def client(self) -> Any:
        return self.handle.client


Sample = Callable[[Wait], Row]


@dataclass
class _Pulse:
    """One sample's look-outs, taken at most every quarter second: the cluster's
    processes and registrations, the stop flag (and --max-time), a stall (nothing
    submitted or answered for ``timeout``) and the progress line."""

    wait: Wait
    tasks: int
    submitted: Submitted = field(default_factory=list)
    answered: int = 0  # results complete, counted in submission order
    began: float = field(default_factory=time.monotonic)
    looked: float = field(default_factory=time.monotonic)
    moved: float = field(default_factory=time.monotonic)
    state: tuple[int, int, int] = (0, 0, -1)

    def look(self, now: bool = False) -> None:
        at = time.monotonic()
        if not now and at - self.looked < LOOK_S:
            return
        self.looked = at
        try:
            self.wait.handle.check_alive(self.wait.engine_ids)
        except (EngineLost, ClusterLost) as exc:
            outstanding = self.wait.client.outstanding
            lost = sum(bool(outstanding.intersection(r.msg_ids)) for _, r in self.submitted)
            sent = len(self.submitted)
            said = f"{exc}; {lost:,} of the sample's {sent:,} submissions had no result"
            raise type(exc)(said, exc.noticed_at) from None
        check_stop(self.wait.stop)
        while self.answered < len(self.submitted) and self.submitted[self.answered][1].ready():
            self.answered += 1
        state = (len(self.submitted), self.answered, len(self.wait.client.outstanding))
        if state != self.state:
            self.state, self.moved = state, at
        elif at - self.moved > self.wait.timeout:
            msg = (
                f"no task was submitted or answered for {self.wait.timeout:g} s "
                f"({state[0]:,} of {self.tasks:,} submitted, {self._answered()} answered)"
            )
            raise TimeoutError(msg)
        if at - self.began >= _SAY_AFTER_S:
            say_doing(
                self.wait.progress,
                f"{state[0]:,} of {self.tasks:,} tasks sent, {self._answered()} answered",
            )

    def _answered(self) -> str:
        if len(self.submitted) == 1 and self.tasks > 1:  # a map: one result for all
            return "all" if self.answered else "not yet all"
        return f"{self.answered:,}"


def _wait(pulse: _Pulse) -> None:
    """Every result, in turn, looking out every quarter second (also while results
    keep coming: the schedulers can run on for a while without the controller, on a
    cluster nobody can repair any more)."""
    for _, result in pulse.submitted:
        while not result.wait(LOOK_S):
            pulse.look(now=True)
        pulse.look()
        try:
            result.get()  # raises the task's own error, if any
        except (ipp.error.EngineError, ipp.error.RemoteError) as exc:
            if not _engine_died(exc):
                raise
            _name_the_lost_engine(pulse)
            raise EngineLost(f"an engine died while running a task: {exc}") from exc
    pulse.look(now=True)


# How long the controller's word that an engine unregistered may trail the scheduler's
# word that the engine's tasks died with it. The controller says both at once, over
# separate sockets, but the client's IO thread takes them in turn behind whatever it
# holds: behind thousands of task replies on a busy machine, seconds late (2 s was
# seen too short). The wait ends as soon as the controller's word is read.
_UNREGISTERED_WITHIN_S = 10.0
# How long the hub's count of held tasks may stay still before the wait for it after
# an abort gives up: what it then holds is someone else's.
_HUB_STILL_S = 5.0


def _name_the_lost_engine(pulse: _Pulse) -> None:
    """Raise EngineLost naming the engine that died, once the controller has said which
    (``look`` raises it); return, for a generic message, if it has not said in time."""
    deadline = time.monotonic() + _UNREGISTERED_WITHIN_S
    while True:
        pulse.look(now=True)
        if time.monotonic() >= deadline:
            return
        time.sleep(LOOK_S / 5)


def _engine_died(exc: Exception) -> bool:
    """Whether a task's error is its engine's death rather than its own failure: the
    client raises EngineError for a stopped engine set, but a death the controller
    reports arrives as the task's result, a RemoteError that wraps an EngineError."""
    if isinstance(exc, ipp.error.EngineError):
        return True
    return isinstance(exc, ipp.error.RemoteError) and exc.ename == "EngineError"


def bounded(
    handle: ClusterHandle,
    sample: Sample,
    wait: Wait,
    helper_pids: Iterable[int] = (),
) -> Row:
    """One sample, with the rest of the machine's load (``other_load``;
    ``helper_pids`` are the cluster's own processes) measured. The garbage collector
    runs as in any session: a flood's futures and messages leave cyclic garbage that
    only it frees, so with it off a flood holds more than a user's would, more the
    longer it runs.

    Afterwards, or after an error, a stop or an interrupt, what is still outstanding is
    aborted and waited out and the client's caches emptied: the cluster is left idle
    for the next sample or run (``handle.settled`` says whether that worked), and
    memory stays flat over long sweeps."""
    lost = False
    with _no_aborted_map_tracebacks():
        try:
            return with_other_load(lambda: sample(wait), helper_pids, collect=True)
        except (EngineLost, ClusterLost):
            # Named now, not after waiting out the aborted tasks: the cluster is
            # stopped, or settled and mended by the caller (--on-engine-loss continue).
            # Someone else's cluster is left without the rest of the flood queued on it.
            lost, handle.settled = True, False
            with contextlib.suppress(Exception):
                handle.client.abort(list(handle.client.outstanding), block=False)
            raise
        finally:
            if not lost:
                settle(handle, wait.timeout)


class _AbortedMapPart(logging.Filter):
    """Drops the one record ipyparallel leaves when a map's tasks are aborted: its map
    result joins its parts once all are in, an aborted part is a ``TaskAborted`` rather
    than a list, and the join's TypeError ("'TaskAborted' object is not iterable") is
    logged with its traceback by concurrent.futures, which ran the callback. The run
    has said in words why it aborted; every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, TypeError) and "TaskAborted" in str(error))


@contextlib.contextmanager
def _no_aborted_map_tracebacks() -> Iterator[None]:
    """While a sample runs and its outstanding tasks are aborted and drained (the
    map's callback runs as the last aborted part comes in, before the drain ends)."""
    logger, dropped = logging.getLogger("concurrent.futures"), _AbortedMapPart()
    logger.addFilter(dropped)
    try:
        yield
    finally:
        logger.removeFilter(dropped)


def settle(handle: ClusterHandle, timeout: float) -> None:
    """Abort what is outstanding, wait it out (until nothing more is answered for
    ``timeout``) and empty the client's caches; ``handle.settled`` says if it worked."""
    client = handle.client
    handle.settled = False
    with contextlib.suppress(Exception):
        if client.outstanding:
            # Engines answer an aborted task at once when they reach it, queued or not.
            client.abort(list(client.outstanding), block=False)
            _drain(client, timeout)
            _wait_for_the_hub(client, timeout)
        client.purge_local_results("all")  # raises while anything is outstanding
        client.history.clear()
        handle.settled = True
    give_back_freed()


def _drain(client: Any, timeout: float) -> None:
    """Wait until nothing is outstanding, or nothing more is answered for ``timeout``.

    ipyparallel counts a task as outstanding first and has its IO thread send it next:
    a Ctrl-C between the two leaves an id outstanding that no engine will ever answer
    (two in about forty interrupts of a 20,000-task submission here). So once two looks in a
    row bring no answer while the hub holds nothing, neither queued, running nor
    unassigned (a result between the hub and here arrives within a look), what is still
    outstanding was never sent: it is forgotten, and the cluster kept rather than
    stopped as if it were stuck."""
    left, moved, idle_looks = len(client.outstanding), time.monotonic(), 0
    while left and time.monotonic() - moved < timeout:
        client.wait(timeout=LOOK_S)
        if len(client.outstanding) != left:
            left, moved, idle_looks = len(client.outstanding), time.monotonic(), 0
        elif _hub_held(client, timeout) != 0:  # or not known: the drain goes on waiting
            idle_looks = 0
        elif (idle_looks := idle_looks + 1) == 2:
            client.outstanding.difference_update(set(client.outstanding))
            return


def _wait_for_the_hub(client: Any, timeout: float) -> None:
    """Wait until the hub's books hold none of the aborted tasks. The client has every
    answer before the hub does (results reach the hub through the schedulers' monitor),
    and a busy machine still had 245 of 20,000 interrupted tasks in the hub's queues
    after the client had them all: the next sample would start beside a hub catching
    up. Gives up once the count has not fallen for ``_HUB_STILL_S`` (tasks someone else
    runs on a shared cluster) or for ``timeout``, whichever is shorter."""
    still_for = min(timeout, _HUB_STILL_S)
    fewest, fell = math.inf, time.monotonic()
    while time.monotonic() - fell < still_for:
        held = _hub_held(client, timeout)
        if held is None or held == 0:
            return
        if held < fewest:
            fewest, fell = held, time.monotonic()
        time.sleep(LOOK_S)


def hub_queues(client: Any, timeout: float) -> dict[Any, Any]:
    """What ``Client.queue_status()`` gives (each engine's ``queue``, ``tasks`` and
    ``completed`` by its id, and ``unassigned``), asked within ``timeout`` seconds:
    that call waits for the hub's answer without a bound, and a stuck hub would hang
    its caller. Raises when no answer, or a failed one, comes."""
    request = {"targets": None, "verbose": False}
    reply = client._send(client._query_stream, "queue_request", content=request)
    content = reply.result(timeout=timeout)["content"]
    if content.pop("status", None) != "ok":
        msg = f"the hub did not give its queues: {content}"
        raise RuntimeError(msg)
    return {int(key) if key.isdigit() else key: value for key, value in content.items()}


def _hub_held(client: Any, timeout: float) -> int | None:
    """How many tasks the hub says are queued on an engine, running or unassigned;
    None when it does not answer within ``timeout``, or answers otherwise."""
    try:
        queues = hub_queues(client, timeout)
    except Exception:  # noqa: BLE001 - no answer, or an ipyparallel that asks otherwise
        return None
    held = queues.pop("unassigned", None)
    engines = queues.values()
    if not isinstance(held, int) or not all(isinstance(e, dict) for e in engines):
        return None
    return held + sum(e.get("queue", 0) + e.get("tasks", 0) for e in engines)
