"""ZeroMQ throughput (PUSH/PULL) and latency (REQ/REP) measurements over a sweep.

The method: each point's count is calibrated (pyperf's way) until a sample lasts
``min_time``; then the points are sampled in interleaved rounds (:mod:`..method.
schedule`), each round on fresh far ends, each far end warmed up on every point it
serves before that point's kept sample. A large spread, a lost message or a busy
machine is reported as a warning, never hidden; every point gets an interval, at the
level its samples reach.
The hot loops (:mod:`..loops.pair`) are the plain pyzmq loops of pyzmq's ``perf/perf.py``.
With ``driver="process"`` (or ``python=[...]``, environments side by side) each round's
far ends and their driving loops run in fresh processes (:mod:`.driver`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any, TypedDict

from ...method.assembly import RunAssembly
from ...method.control import Progress, StopFlag
from ...method.pinning import pinned
from ...method.schedule import Interrupted, Schedule
from ...params import (
    LATENCY,
    LOOP,
    RATE,
    THROUGHPUT,
    LatencyParams,
    SocketPoint,
    ThroughputParams,
    ZmqParams,
    check_memory,
)
from ...params.columns import Row
from ...params.cpus import cpu_plan
from ...params.interpreter import interpreter_words
from ...params.patterns import check_sequenced_message, pattern_of
from ...results import ResultSet
from ...results.host.environment import environment
from ...results.storage import noise_floor
from ..loops.pair import SAMPLE_OF_ROLE
from ..malloc import STEADY_MALLOC
from ..payload import Payload
from .driver import ProcessDrivers
from .remote import reach_all
from .rounds import LINK_KEY, RunState, describe


def run_throughput(
    params: ThroughputParams | None = None,
    *,
    payload: Any = None,
    progress: Progress | None = None,
    stop: StopFlag | None = None,
    **values: Any,
) -> ResultSet:
    """Measure PUSH/PULL throughput over every point of the sweep.

    Parameters
    ----------
    params : the settings; or give them as keyword arguments (lists sweep).
    payload : the message to send instead of ``size`` spaces: bytes, a buffer (numpy
        array, memoryview), or a list of them sent as one multipart message.
    progress : called as ``progress(points_done, points_total)`` after each point.
    stop : once ``stop.is_set()`` (a :class:`threading.Event`, say), the run ends before
        its next sample and returns the points already measured whole, with a note.

    Example
    -------
    >>> r = run_throughput(size=[100, "64k"], copy=[True, False], repeat=3)  # doctest: +SKIP
    >>> r.summary()[["size", "copy", "msgs_per_s"]]                          # doctest: +SKIP
    """
    params = params or ThroughputParams(**values)
    return _run(params, THROUGHPUT.far_end, _payload(payload, values), progress, stop)


def run_latency(
    params: LatencyParams | None = None,
    *,
    payload: Any = None,
    progress: Progress | None = None,
    stop: StopFlag | None = None,
    **values: Any,
) -> ResultSet:
    """Measure REQ/REP round-trip latency (with percentiles) over every point of the sweep.

    ``payload``, ``progress`` and ``stop`` are as for :func:`run_throughput`.

    Example
    -------
    >>> r = run_latency(size=[1, "1k"], transport=["tcp", "inproc"])  # doctest: +SKIP
    >>> r.df[["transport", "size", "p50_us", "p99_us"]]               # doctest: +SKIP
    """
    params = params or LatencyParams(**values)
    return _run(params, LATENCY.far_end, _payload(payload, values), progress, stop)


def _payload(value: Any, values: dict[str, Any]) -> Payload | None:
    if value is None:
        return None
    if "size" in values:
        msg = "size does not apply with a payload: the payload is the message"
        raise ValueError(msg)
    payload = Payload.of(value)
    check_memory(payload.size)
    return payload


def _points(params: ZmqParams, payload: Payload | None) -> list[SocketPoint]:
    points = list(params.points())
    if payload is not None:
        # The payload is the message: its byte count is every point's size.
        points = list(dict.fromkeys(p.where(size=payload.size) for p in points))
    return points


def _check_native(payload: Payload | None) -> None:
    """Before anything starts: the native loop is built (or a ValueError says what to
    install) and can send the payload."""
    from ..loops import native

    native.library()
    if payload is not None and len(payload.frames) > 1:
        msg = (
            f"the native loop sends one frame, got a message of {len(payload.frames)} "
            f"frames: use {LOOP.option} python for multipart messages"
        )
        raise ValueError(msg)


def _run(
    params: ZmqParams,
    role: str,
    payload: Payload | None,
    progress: Progress | None,
    stop: StopFlag | None,
) -> ResultSet:
    points = _points(params, payload)
    if payload is not None and isinstance(params, ThroughputParams) and params.sequence:
        check_sequenced_message(len(payload.frames), payload.size)
    if any(p.loop == "native" for p in points):
        _check_native(payload)
    drivers = ProcessDrivers(params, payload) if params.driver == "process" else None
    if drivers is not None:
        drivers.check()
    assembly = RunAssembly(params)
    schedule = assembly.schedule(
        points,
        group_of=lambda p: (*(getattr(p, k) for k in LINK_KEY), p.python, p.far_role(role)),
        # An environment's arms of one point are measured one after the other, in an
        # order that alternates (ABBA), so each is first as often as the other.
        arm="python" if len(params.python) > 1 else None,
    )
    remote = params.remote
    # Pinned first: what the run starts from this thread inherits the driver's CPUs
    # (--cpu); its far ends are pinned to theirs as they start.
    with (
        pinned(params.cpu),
        reach_all(
            remote,
            params.secret_file,
            params.remote_python,
            params.timeout,
        ) as doors,
    ):
        # One far end is the first host's; a pattern's peers are dealt among them all.
        url, secret = doors[0] if doors else ("", None)
        state = RunState(params, role, SAMPLE_OF_ROLE[role], payload, remote=url, secret=secret)
        state.doors = doors
        state.far_cpus = cpu_plan(params.cpu)[1]
        try:
            # Each group's turn in each round opens a fresh far end and takes a sample
            # of each point (with --driver process, in a fresh driver process).
            rounds: RunState | ProcessDrivers = drivers or state
            with schedule.whole_rounds(stop):
                for turn in schedule.turns(stop, progress):
                    with rounds.far_end(turn.points) as far_end:
                        for point in turn:
                            turn.keep(point, far_end.sample(point))
        except Interrupted as interrupt:
            interrupt.result = _result(assembly, schedule, points, drivers)
            raise
    return _result(assembly, schedule, points, drivers)


def _result(
    assembly: RunAssembly,
    schedule: Schedule,
    points: list[SocketPoint],
    drivers: ProcessDrivers | None,
) -> ResultSet:
    rows = [dict(row) for row in schedule.kept]
    # Every round trip of the kept samples (a dropped round's are not in ``rows``),
    # one histogram per sample: pooled figures resample whole samples.
    distributions = []
    for row in rows:
        histogram = row.pop("rtt_hist", None)
        if histogram is not None:
            where = {k: row[k] for k in (*points[0], "frames", "sample")}
            distributions.append(
                {**where, "run": assembly.identity["run"], "rtt_hist": histogram.to_json()}
            )
    metadata: _Metadata = {"far_end_malloc": STEADY_MALLOC, "driver": "kernel"}
    if drivers is not None:
        metadata |= {"driver": "process", "environments": drivers.environments}
    assembly.notes[:] = [*_driver_notes(drivers), *schedule.notes]
    return assembly.result(
        rows,
        points,
        describe,
        "off in the timed loops (driver and far end)",
        point_warnings=_point_warnings,
        metadata=metadata,
        distributions=distributions,
        usual_spread=_usual_spread(assembly.params.benchmark, drivers),
    )


class _Metadata(TypedDict, total=False):
    """How a run's samples were taken, in its metadata: the allocator settings its far
    ends ran with, its driver (the kernel, or fresh processes), and with fresh
    processes each arm's interpreter and the pyzmq and libzmq it loaded."""

    far_end_malloc: dict[str, str]
    driver: str
    environments: dict[str, dict[str, str]]


def _usual_spread(
    benchmark: str, drivers: ProcessDrivers | None
) -> Callable[[SocketPoint], float | None]:
    """Per point, the widest spread within one run that this host's noise floor saw,
    for the environment that ran it (None where no floor was measured); the store
    is read once per environment."""
    here = environment()
    floors: dict[str, noise_floor.Floors] = {}  # by arm

    def usual(point: SocketPoint) -> float | None:
        arm = point.python
        if arm not in floors:
            ran = drivers.environments.get(arm) if drivers else None
            floors[arm] = noise_floor.floors_at({**here, **(ran or {})}, benchmark)
        return noise_floor.widest_at(floors[arm], point, "within_run") if floors[arm] else None

    return usual


def _driver_notes(drivers: ProcessDrivers | None) -> list[str]:
    """With fresh driver processes, the summary says so, and what each arm ran (its
    interpreter's path is in ``metadata["environments"]``, not in words a notebook
    keeps: it is the machine's)."""
    if drivers is None:
        return []
    ran = drivers.environments  # an arm interrupted before it ran is not in it
    return ["every round measured by fresh driver processes (driver process)"] + [
        f"python {arm}: {interpreter_words(ran[arm])}"
        for arm in drivers.params.interpreters()
        if arm in ran
    ]


def _point_warnings(rows: list[Row], point: SocketPoint) -> list[str]:
    warnings = []
    lost = [r for r in rows if _lost(r) > 0]
    if lost:
        worst = max(lost, key=_lost)
        why = pattern_of(point.pattern).why_lost(worst.get("queue_hwm", 0))
        if point.conflate:
            why = "A conflating receiver keeps only its newest message: the others were replaced."
        warnings.append(
            f"{describe(point)}: {len(lost)} sample(s) lost messages (worst: "
            f"{_lost(worst):,} of {_lost(worst) + worst['received']:,} lost"
            f"{_which_went(worst)}); rates count only delivered messages, timed first to "
            f"last receive. {why}"
        )
    return warnings + _held_warnings(rows, point)


def _which_went(row: Row) -> str:
    """What a numbered sample's (--sequence true) messages say of its loss; "" for
    one without numbers."""
    gaps = row.get("gaps", math.nan)
    if math.isnan(gaps) or not gaps:
        return ""
    return f" in {int(gaps):,} gap(s), the first missed message no. {int(row['first_lost']):,}"


def _lost(row: Row) -> int:
    """A sample's lost messages (a row from before patterns: its count less received)."""
    return int(row.get("lost", row["count"] - row.get("received", row["count"])))


def _held_warnings(rows: list[Row], point: SocketPoint) -> list[str]:
    """An offered rate the loop did not hold is said, never reported as met."""
    missed = [r for r in rows if not r.get("held", True)]
    if not missed:
        return []
    achieved = statistics.median(r["achieved_per_s"] for r in rows)
    return [
        f"{describe(point)}: rate not held in {len(missed)} of {len(rows)} sample(s), "
        f"median {RATE.label(round(achieved))} msgs/s achieved; its latencies, timed from "
        "each message's intended send time, include the queueing"
    ]
