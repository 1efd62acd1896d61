"""ZeroMQ throughput (PUSH/PULL) and latency (REQ/REP) measurements.

The method follows pyperf: the count is calibrated until one sample lasts at least
``min_time``, calibration and ``warmup`` samples are discarded, ``repeat`` samples
are kept, and a large spread is reported as a warning, never hidden. The hot loops
are the plain pyzmq loops of pyzmq's ``perf/perf.py`` so the figures compare with it.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

import numpy as np
import zmq

from .link import Link, PeerError
from .params import (
    COPY,
    BenchParams,
    LatencyParams,
    ThroughputParams,
    check_memory,
    high_water_mark,
)
from .payload import Payload
from .results import ResultSet, environment, spread_warnings
from .units import format_size

Progress = Callable[[int, int], None]


class StopFlag(Protocol):
    """What a run polls between samples to learn it should end (a threading.Event)."""

    def is_set(self) -> bool: ...


class Stopped(Exception):
    """Raised between samples once a run's stop flag is set; the run catches it."""


def check_stop(stop: StopFlag | None) -> None:
    """End the run here (by raising :class:`Stopped`) if it was asked to stop."""
    if stop is not None and stop.is_set():
        raise Stopped


def stopped_note(done: int, total: int) -> str:
    return f"stopped on request after {done} of {total} points; the rest were not measured"


# One sample: (link, payload, count, copy) -> (its measurements, its wall time).
SampleFn = Callable[..., tuple[dict[str, Any], float]]

_CALIBRATION_START = 10
_CALIBRATION_MAX_GROWTH = 100
_MAX_COUNT = 10**9
_LINK_KEY = ("transport", "peer", "size")


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
    return _run(params, "sink", _throughput_sample, _payload(payload, values), progress, stop)


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
    return _run(params, "echo", _latency_sample, _payload(payload, values), progress, stop)


def _payload(value: Any, values: dict[str, Any]) -> Payload | None:
    if value is None:
        return None
    if "size" in values:
        msg = "size does not apply with a payload: the payload is the message"
        raise ValueError(msg)
    payload = Payload.of(value)
    check_memory(payload.size)
    return payload


def _run(
    params: BenchParams,
    role: str,
    sample: SampleFn,
    payload: Payload | None,
    progress: Progress | None,
    stop: StopFlag | None,
) -> ResultSet:
    points = list(params.points())
    if payload is not None:
        # The payload is the message: its byte count is every point's size.
        unique = {tuple({**p, "size": payload.size}.items()): None for p in points}
        points = [dict(key) for key in unique]
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    notes: list[str] = []
    groups = itertools.groupby(points, key=lambda p: tuple(p[k] for k in _LINK_KEY))
    try:
        for _, group in groups:
            for point_rows in _measure_group(params, role, list(group), sample, payload, stop):
                rows.extend(point_rows)
                point = point_rows[0]
                warnings += _point_warnings(point_rows, params.metrics[0].name, point)
                if progress is not None:
                    progress(len(rows) // params.repeat, len(points))
    except Stopped:
        # The far end is already closed (the link's context manager): keep what is whole.
        notes.append(stopped_note(len(rows) // params.repeat, len(points)))
    metadata = {**environment(), "notes": notes}
    return ResultSet(params.benchmark, rows, params.settings(), metadata, tuple(warnings))


def _measure_group(
    params: BenchParams,
    role: str,
    group: list[dict[str, Any]],
    sample: SampleFn,
    payload: Payload | None,
    stop: StopFlag | None,
) -> Iterator[list[dict[str, Any]]]:
    """The points that share one far end (same transport, peer and size), one by one."""
    current = group[0]
    hwm = high_water_mark(current["size"])
    try:
        with Link(role, current["transport"], current["peer"], params.address,
                  params.timeout, hwm) as link:  # fmt: skip
            for current in group:
                message = payload or Payload.blank(current["size"])
                point_rows = _measure_point(link, params, current, sample, message, stop)
                for row in point_rows:
                    row.update(benchmark=params.benchmark, hwm=hwm)
                yield point_rows
    except (PeerError, TimeoutError) as exc:
        raise type(exc)(f"{describe(current)}: {exc}") from None


def _measure_point(
    link: Link,
    params: BenchParams,
    point: Mapping[str, Any],
    sample: SampleFn,
    payload: Payload,
    stop: StopFlag | None,
) -> list[dict[str, Any]]:
    link.data.copy_threshold = point["copy_threshold"]

    def one_sample(count: int) -> tuple[dict[str, Any], float]:
        check_stop(stop)  # between samples, the far end is idle and can be closed
        return sample(link, payload, count, point["copy"])

    try:
        count = params.count or calibrate(one_sample, params.min_time)
        for _ in range(params.warmup):
            one_sample(count)
        kept = [one_sample(count)[0] for _ in range(params.repeat)]
    except zmq.Again:
        # A send blocks once the queues are full: the peer died, or it stopped reading.
        if not link.alive():
            raise PeerError(f"the {link.describe()} exited") from None
        msg = f"the {link.describe()} did not answer within {params.timeout:g} s"
        raise TimeoutError(msg) from None
    return [
        {**point, "frames": len(payload.frames), "count": count, "sample": number, **measured}
        for number, measured in enumerate(kept)
    ]


def calibrate(
    sample: Callable[[int], tuple[Any, float]], min_time: float, start: int = _CALIBRATION_START
) -> int:
    """The smallest count (found by growing it) whose sample lasts ``min_time``.

    Each step grows the count by the ratio still missing, with 20% to spare, at least
    doubling and at most ``_CALIBRATION_MAX_GROWTH``-fold so one slow first sample
    (a cold cache, a connection still being made) cannot blow the estimate up.
    """
    count = start
    while True:
        _, elapsed = sample(count)
        if elapsed >= min_time or count >= _MAX_COUNT:
            return count
        wanted = math.ceil(count * 1.2 * min_time / max(elapsed, 1e-9))
        count = min(max(wanted, 2 * count), _CALIBRATION_MAX_GROWTH * count, _MAX_COUNT)


def _throughput_sample(
    link: Link, payload: Payload, count: int, copy: bool
) -> tuple[dict[str, Any], float]:
    frames, message = len(payload.frames), payload.message
    link.command(cmd="sink", count=count, copy=copy, frames=frames)
    link.reply()  # armed: the sink sits in its receive loop
    send = link.data.send if frames == 1 else link.data.send_multipart
    now = time.perf_counter
    start = now()
    for _ in range(count):
        send(message, copy=copy)
    send_elapsed = now() - start
    # A sink that lost messages reports after `timeout` of silence: wait longer than
    # that, so a loss is recorded as one rather than raced into a timeout error.
    delivered = link.reply(timeout=2 * link.timeout)
    received, elapsed = delivered["received"], delivered["elapsed"]
    if received < 2 or elapsed <= 0:
        msg = f"the {link.describe()} received {received} of {count} messages"
        raise PeerError(msg)
    # First to last receive spans received - 1 deliveries.
    msgs_per_s = (received - 1) / elapsed
    return {
        "received": received,
        "msgs_per_s": msgs_per_s,
        "send_msgs_per_s": count / send_elapsed,
        "mbit_per_s": msgs_per_s * payload.size * 8 / 1e6,
        "elapsed_s": elapsed,
        "send_elapsed_s": send_elapsed,
    }, max(elapsed, send_elapsed)


def _latency_sample(
    link: Link, payload: Payload, count: int, copy: bool
) -> tuple[dict[str, Any], float]:
    frames, message = len(payload.frames), payload.message
    link.command(cmd="echo", count=count, copy=copy, frames=frames)
    link.reply()  # armed
    if frames == 1:
        send, recv = link.data.send, link.data.recv
    else:
        send, recv = link.data.send_multipart, link.data.recv_multipart
    now = time.perf_counter
    # One clock read per round trip: the gaps between reads are the round trips.
    stamps = [now()]
    stamp = stamps.append
    for _ in range(count):
        send(message, copy=copy)
        recv(copy=copy)
        stamp(now())
    link.reply()  # echoed
    rtt_us = np.diff(np.asarray(stamps)) * 1e6
    p50, p90, p99 = np.percentile(rtt_us, [50, 90, 99])
    elapsed = stamps[-1] - stamps[0]
    return {
        "rtt_us": elapsed / count * 1e6,
        "p50_us": float(p50),
        "p90_us": float(p90),
        "p99_us": float(p99),
        "max_us": float(rtt_us.max()),
        "min_us": float(rtt_us.min()),
        "elapsed_s": elapsed,
    }, elapsed


def describe(point: Mapping[str, Any]) -> str:
    """``tcp 64k B zero-copy (peer process)``: a point, in words, for messages."""
    copy = COPY.label(point["copy"])
    return f"{point['transport']} {format_size(point['size'])} B {copy} (peer {point['peer']})"


def _point_warnings(rows: list[dict[str, Any]], metric: str, point: Mapping[str, Any]) -> list[str]:
    warnings = spread_warnings(rows, metric, describe(point))
    lost = [r for r in rows if r.get("received", r["count"]) < r["count"]]
    if lost:
        worst = min(lost, key=lambda r: r["received"])
        warnings.append(
            f"{describe(point)}: {len(lost)} sample(s) lost messages (worst: {worst['received']} "
            f"of {worst['count']} delivered); rates count only delivered messages. libzmq is "
            "known to drop messages over ipc (libzmq issue #4660)"
        )
    return warnings
