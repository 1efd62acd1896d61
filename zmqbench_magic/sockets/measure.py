"""ZeroMQ throughput (PUSH/PULL) and latency (REQ/REP) measurements.

The method follows pyperf: the count is calibrated until one sample lasts at least
``min_time``, calibration and ``warmup`` samples are discarded, ``repeat`` samples
are kept, and a large spread is reported as a warning, never hidden. The hot loops
are the plain pyzmq loops of pyzmq's ``perf/perf.py`` so the figures compare with it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import zmq

from ..method.calibrate import calibrate
from ..method.control import Progress, StopFlag, Stopped, check_stop, stopped_note
from ..params import (
    COPY,
    BenchParams,
    LatencyParams,
    ThroughputParams,
    check_memory,
    high_water_mark,
)
from ..params.units import format_size
from ..results import ResultSet, environment, spread_warnings
from .link import Link, PeerError
from .loops import latency_sample, throughput_sample
from .payload import Payload

# One sample: (link, payload, count, copy) -> (its measurements, its wall time).
SampleFn = Callable[..., tuple[dict[str, Any], float]]

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
    return _run(params, "sink", throughput_sample, _payload(payload, values), progress, stop)


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
    return _run(params, "echo", latency_sample, _payload(payload, values), progress, stop)


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
