"""ZeroMQ throughput (PUSH/PULL) and latency (REQ/REP) measurements over a sweep.

The method: each point's count is calibrated (pyperf's way) until a sample lasts
``min_time``; then the points are sampled in interleaved rounds (:mod:`..method.
schedule`), each round on fresh far ends, each far end warmed up on every point it
serves before that point's kept sample. A large spread, a lost message or a busy
machine is reported as a warning, never hidden; every point gets an interval, at the
level its samples reach.
The hot loops (:mod:`.loops`) are the plain pyzmq loops of pyzmq's ``perf/perf.py``.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..method.assembly import RunAssembly
from ..method.calibrate import calibrate
from ..method.control import Progress, StopFlag
from ..method.schedule import Interrupted, Schedule
from ..params import (
    COPY,
    LOOP,
    RATE,
    BenchParams,
    LatencyParams,
    ThroughputParams,
    ZmqParams,
    check_memory,
    high_water_mark,
)
from ..params.units import format_size
from ..results import ResultSet
from .link import STEADY_MALLOC, Link, PeerError
from .loops import latency_sample, throughput_sample
from .paced import paced_sample
from .payload import Payload
from .remote import reach
from .secret import Keys

# One sample: (link, payload, count, copy) -> (its measurements, its wall time).
SampleFn = Callable[..., tuple[dict[str, Any], float]]

# Points that share one far end: its sockets' high-water mark depends on the size.
_LINK_KEY = ("transport", "peer", "size", "curve")
# A far end's warm-up sample of a point is this fraction of the point's count.
_WARMUP_FRACTION = 4


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


def _points(params: BenchParams, payload: Payload | None) -> list[dict[str, Any]]:
    points = list(params.points())
    if payload is not None:
        # The payload is the message: its byte count is every point's size.
        unique = {tuple({**p, "size": payload.size}.items()): None for p in points}
        points = [dict(key) for key in unique]
    return points


def _check_native(payload: Payload | None) -> None:
    """Before anything starts: the native loop is built (or a ValueError says what to
    install) and can send the payload."""
    from . import native

    native.library()
    if payload is not None and len(payload.frames) > 1:
        msg = (
            f"the native loop sends one frame, got a message of {len(payload.frames)} "
            f"frames: use {LOOP.option} python for multipart messages"
        )
        raise ValueError(msg)


def _key(point: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(point.items()))


def _run(
    params: ZmqParams,
    role: str,
    sample: SampleFn,
    payload: Payload | None,
    progress: Progress | None,
    stop: StopFlag | None,
) -> ResultSet:
    points = _points(params, payload)
    if any(p["loop"] == "native" for p in points):
        _check_native(payload)
    assembly = RunAssembly(params)
    schedule = assembly.schedule(
        points, group_of=lambda p: (*(p[k] for k in _LINK_KEY), _role(role, p))
    )
    remote = getattr(params, "remote", "")
    with reach(remote, getattr(params, "secret_file", ""), getattr(params, "remote_python", ""),
               params.timeout) as (url, secret):  # fmt: skip
        state = _RunState(params, role, sample, payload, remote=url, secret=secret)
        try:
            schedule.run(state.far_end, stop, progress)
        except Interrupted as interrupt:
            interrupt.result = _result(assembly, schedule, points)
            raise
    return _result(assembly, schedule, points)


def _result(assembly: RunAssembly, schedule: Schedule, points: list[dict[str, Any]]) -> ResultSet:
    rows = [dict(row) for row in schedule.kept]
    # Every round trip of the kept samples (a dropped round's are not in ``rows``),
    # one histogram per sample: pooled figures resample whole samples.
    distributions = []
    for row in rows:
        histogram = row.pop("rtt_hist", None)
        if histogram is not None:
            where = {k: row[k] for k in (*points[0], "frames", "sample")}
            distributions.append({**where, "run": assembly.identity["run"],
                                  "rtt_hist": histogram.to_json()})  # fmt: skip
    assembly.notes[:] = schedule.notes
    return assembly.result(
        rows, points, describe, "off in the timed loops (driver and far end)",
        point_warnings=_point_warnings, metadata={"far_end_malloc": STEADY_MALLOC},
        distributions=distributions,
    )  # fmt: skip


@dataclass
class _RunState:
    """What a run keeps across its rounds: its calibrated counts and its far ends' keys."""

    params: ZmqParams
    role: str
    sample: SampleFn
    payload: Payload | None
    counts: dict[tuple[Any, ...], int] = field(default_factory=dict)
    remote: str = ""  # a remote far end's tcp:// URL; "": one on this machine
    secret: Keys | None = None  # shared with a remote far end
    local_keys: Keys = field(default_factory=Keys.fresh)  # an encrypted local data path

    @contextlib.contextmanager
    def far_end(self, group: list[Mapping[str, Any]]) -> Iterator[_FarEnd]:
        """A fresh far end for one round of the points of ``group``."""
        first = group[0]
        hwm = high_water_mark(first["size"])
        session = _FarEnd(self, None, first)
        try:
            role, remote = _role(self.role, first), self.remote
            keys = self.secret if remote else self.local_keys
            with Link(role, first["transport"], first["peer"], self.params.address,
                      self.params.timeout, hwm, curve=keys if first["curve"] else None,
                      remote=remote, secret=self.secret) as link:  # fmt: skip
                session.link = link
                yield session
        except (PeerError, TimeoutError) as exc:
            raise type(exc)(f"{describe(session.current)}: {exc}") from None


@dataclass
class _FarEnd:
    """One round's far end: a kept sample of each point it serves."""

    run: _RunState
    link: Link | None
    current: Mapping[str, Any]

    def sample(self, point: Mapping[str, Any]) -> dict[str, Any]:
        assert self.link is not None
        self.current = point
        run, link = self.run, self.link
        link.data.copy_threshold = point["copy_threshold"]
        message = run.payload or Payload.blank(point["size"])
        sample = partial(paced_sample, rate=point["rate"]) if point.get("rate") else run.sample
        one = partial(sample, link, message, copy=point["copy"], loop=point["loop"])
        key = _key(point)
        # A stalled loop asks the link itself whether the far end is alive (loops.py).
        if key not in run.counts:
            run.counts[key] = run.params.count or calibrate(one, run.params.min_time)
        count = run.counts[key]
        for _ in range(run.params.warmup):
            one(max(2, count // _WARMUP_FRACTION))
        measured, _ = one(count)
        return {
            "frames": len(message.frames), "count": count, "benchmark": run.params.benchmark,
            "hwm": link.hwm, "far_end": link.far_end_id, **measured,
        }  # fmt: skip


def _role(role: str, point: Mapping[str, Any]) -> str:
    """The far end's role at a point: an offered rate needs the open loop's ROUTER."""
    return "route" if point.get("rate") else role


def describe(point: Mapping[str, Any]) -> str:
    """``tcp 64k B zero-copy (peer process)``, ``... at 10k msgs/s``: a point, in words."""
    copy = COPY.label(point["copy"])
    words = f"{point['transport']} {format_size(point['size'])} B {copy} (peer {point['peer']}"
    if point.get("loop", "python") != "python":
        words += f", {point['loop']} loop"
    if point.get("curve"):
        words += ", CURVE"
    rate = f" at {RATE.label(point['rate'])} msgs/s offered" if point.get("rate") else ""
    return f"{words}){rate}"


def _point_warnings(rows: list[dict[str, Any]], point: Mapping[str, Any]) -> list[str]:
    warnings = []
    lost = [r for r in rows if r.get("received", r["count"]) < r["count"]]
    if lost:
        worst = min(lost, key=lambda r: r["received"])
        warnings.append(
            f"{describe(point)}: {len(lost)} sample(s) lost messages (worst: {worst['received']} "
            f"of {worst['count']} delivered); rates count only delivered messages, timed first "
            "to last receive. libzmq is known to drop messages over ipc (libzmq issue #4660)"
        )
    return warnings + _held_warnings(rows, point)


def _held_warnings(rows: list[dict[str, Any]], point: Mapping[str, Any]) -> list[str]:
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
