"""One round's far end and the samples it takes: what the kernel runs (``--driver
kernel``) and what each fresh driver process runs (``--driver process``, see
:mod:`.driver`). It needs pyzmq and numpy, never pandas: a driver process may run
under another environment's interpreter, which has only those.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...method.calibrate import calibrate
from ...method.resident import MemoryMeter, this_process
from ...params import (
    COPY,
    RATE,
    SocketPoint,
    ZmqParams,
    high_water_mark,
)
from ...params.columns import Row
from ...params.declare import departures
from ...params.patterns import pattern_of
from ...params.pressure import paced_count
from ...params.socket_point import PEER, SAID_AFTER_THE_PEER, SAID_BESIDE_THE_PEER
from ...params.units import format_size
from ..loops.client_loops import clients_sample
from ..loops.paced import paced_sample
from ..loops.pair import idle_sample, latency_sample
from ..loops.pattern_loops import joiner_sample, pattern_sample
from ..payload import Payload
from ..secret import Door, Keys
from .crowd import Crowd
from .link import Link, PeerError

# One sample: (link, payload, count, copy) -> (its measurements, its wall time).
SampleFn = Callable[..., tuple[Row, float]]

# Points that share one far end: its sockets' high-water mark depends on the size (and
# --hwm), its context's threads on io_threads (a pattern's far ends: on pattern and peers,
# a server's clients on their number; a receiver's socket conflates from its start).
LINK_KEY = (
    "transport",
    "peer",
    "size",
    "hwm",
    "curve",
    "io_threads",
    "pattern",
    "peers",
    "clients",
    "conflate",
)
# A far end's warm-up sample of a point is this fraction of the point's count.
_WARMUP_FRACTION = 4


def point_key(point: SocketPoint) -> tuple[Any, ...]:
    """A point as a dictionary key (its calibrated count's), sorted as a driver
    process's JSON carries it back."""
    return tuple(sorted(point.items()))


@dataclass
class RunState:
    """What a run keeps across its rounds: its calibrated counts and its far ends' keys."""

    params: ZmqParams
    role: str
    sample: SampleFn
    payload: Payload | None
    counts: dict[tuple[Any, ...], int] = field(default_factory=dict)
    remote: str = ""  # a remote far end's tcp:// URL; "": one on this machine
    secret: Keys | None = None  # shared with a remote far end
    doors: list[Door] = field(default_factory=list)  # every remote host's, for a crowd
    local_keys: Keys = field(default_factory=Keys.fresh)  # an encrypted local data path
    far_cpus: set[int] = field(default_factory=set)  # the far end's, with --cpu

    @contextlib.contextmanager
    def far_end(self, group: list[SocketPoint]) -> Iterator[FarEnd]:
        """A fresh far end for one round of the points of ``group``."""
        first = group[0]
        hwm = high_water_mark(first.size, first.hwm)
        session = FarEnd(self, None, first)
        shape = first.crowd_shape(self.params.runs_as_pattern(first))
        settings = self.params.crowd_settings()
        try:
            if shape is not None:
                with Crowd(
                    *shape,
                    first.transport,
                    first.peer,
                    self.params.address,
                    self.params.timeout,
                    hwm,
                    io_threads=first.io_threads,
                    nodrop=settings.nodrop,
                    publishers=settings.publishers,
                    conflate=first.conflate,
                    mandatory=settings.mandatory,
                    cpus=self.far_cpus,
                    doors=self.doors,
                ) as crowd:
                    session.link = crowd
                    yield session
                return
            role, remote = first.far_role(self.role), self.remote
            keys = self.secret if remote else self.local_keys
            with Link(
                role,
                first.transport,
                first.peer,
                self.params.address,
                self.params.timeout,
                hwm,
                curve=keys if first.curve else None,
                remote=remote,
                secret=self.secret,
                cpus=self.far_cpus,
                io_threads=first.io_threads,
            ) as link:
                session.link = link
                yield session
        except (PeerError, TimeoutError) as exc:
            raise type(exc)(f"{describe(session.current)}: {exc}") from None


@dataclass
class FarEnd:
    """One round's far end: a kept sample of each point it serves."""

    run: RunState
    link: Link | Crowd | None
    current: SocketPoint
    # Nothing sent yet over its data connection: the next round trip is its first.
    fresh: bool = True

    def _first_round_trip(self, point: SocketPoint, message: Payload) -> Row:
        """The far end's first closed-loop round trip, before any calibration or
        warm-up, as ``first_us`` (libzmq's remote_lat has no warm-up, so its figure
        includes this one; pyzmq's perf.py drops it); latency runs only."""
        if not self.fresh or point.far_role(self.run.role) != "echo":
            return {}
        if isinstance(self.link, Crowd):
            return {}  # each client's first round trip is its own, in its own loop
        self.fresh = False
        assert isinstance(self.link, Link)
        once, _ = latency_sample(self.link, message, 1, point.copy)
        return {"first_us": once["sample_mean_us"]}

    def sample(self, point: SocketPoint) -> Row:
        assert self.link is not None
        self.current = point
        run, link = self.run, self.link
        link.copy_threshold = point.copy_threshold
        message = run.payload or Payload.blank(point.size)
        first = self._first_round_trip(point, message)

        def one(count: int) -> tuple[Row, float]:
            return self._loop(point, message, count)

        key = point_key(point)
        # A stalled loop asks the link itself whether the far end is alive (loops.py).
        if key not in run.counts:
            run.counts[key] = run.params.count or _calibrated(one, run.params.min_time, point)
        count = run.counts[key]
        for _ in range(run.params.warmup):
            one(max(2, count // _WARMUP_FRACTION))
        memory = MemoryMeter({"driver": this_process, "far": link.pids})
        memory.start()
        measured, _ = one(count)
        peaks = memory.stop(count)
        return {
            "driver_peak_mb": peaks["driver_peak_mb"],
            "far_peak_mb": peaks["far_peak_mb"],
            # The meter's rise per message, back to the sample's (kB to MB).
            "driver_growth_mb": peaks["driver_kb_per_task"] * count / 1e3,
            "far_growth_mb": peaks["far_kb_per_task"] * count / 1e3,
            **first,
            "frames": len(message.frames),
            "count": count,
            "benchmark": run.params.benchmark,
            "queue_hwm": link.hwm,
            "far_end": link.far_end_id,
            **measured,
        }

    def _loop(self, point: SocketPoint, message: Payload, count: int) -> tuple[Row, float]:
        """One sample of ``count`` messages, by the loop that the point and its far end
        call for."""
        link, copy, loop = self.link, point.copy, point.loop
        if isinstance(link, Crowd):
            if link.clients:
                return clients_sample(link, message, count, copy, loop)
            if link.pattern.joins_late:
                return joiner_sample(link, message, count, copy, loop, rate=point.rate)
            settings = self.run.params.crowd_settings()
            return pattern_sample(
                link,
                message,
                count,
                copy,
                loop,
                sequence=settings.sequence,
                rate=point.rate,
                work=point.work,
                slow_peers=settings.slow_peers,
            )
        assert link is not None
        if point.rate:
            return paced_sample(link, message, count, copy, loop, rate=point.rate)
        if point.idle:
            return idle_sample(link, message, count, copy, loop, idle=point.idle)
        return self.run.sample(link, message, count, copy=copy, loop=loop)


def _calibrated(one: Any, min_time: float, point: SocketPoint) -> int:
    """A count whose sample lasts ``min_time``: measured; for pauses before each round
    trip, as many pauses as fill it (calibrating would sit through ten or more); at an
    offered rate, what the pace sends in it (:func:`...params.pressure.paced_count`)."""
    if point.idle:
        return max(1, math.ceil(min_time / point.idle))
    if point.rate:
        return paced_count(point.rate, min_time, pattern_of(point.pattern))
    return calibrate(one, min_time)


def describe(point: SocketPoint) -> str:
    """``tcp 64k B zero-copy (peer process)``, ``... at 10k msgs/s offered``: a point,
    in words, as a run says it goes (each setting's phrase its declaration's)."""
    crowd = point.crowd_words()
    shape = f"{crowd} " if crowd else ""
    words = f"{shape}{point.transport} {format_size(point.size)} B {COPY.label(point.copy)}"
    beside = ", ".join([PEER.words(point.peer), *departures(point, SAID_BESIDE_THE_PEER)])
    after = "".join(
        f" {phrase} offered" if param is RATE else f" {phrase}"
        for param in SAID_AFTER_THE_PEER
        for phrase in departures(point, (param,))
    )
    return f"{words} ({beside}){after}"


__all__ = [
    "LINK_KEY",
    "FarEnd",
    "RunState",
    "SampleFn",
    "describe",
    "point_key",
]
