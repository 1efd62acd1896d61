"""Queues under pressure: a sender paced to an offered rate (``%zmqthr --rate``), the
time it waits for room in a full queue, and a receiver that works on each message it
takes (``--work``), so the consumer is slower than the producer.

A paced sender sends message ``i`` at its intended time ``start + i / rate``, as
``%zmqlat --rate`` does (:mod:`.paced`): early, it waits (a spin, or a sleep for a
wait of milliseconds); late, it sends at once, as an application with a backlog does,
so the offer holds on average where it can, and a sender that cannot keep up shows
as a lower achieved rate. Each send is tried without waiting;
a queue that is full (a PUSH, or a PUB with ``--nodrop``, at its high-water mark)
makes the sender wait for room, and that wait is the time it was *blocked*. A PUB
without ``--nodrop`` is never blocked: it drops, and the receivers' counts say how
many.

A working receiver takes one message at a time and spends ``work`` seconds on each
in a busy wait, which holds at any rate (a sleep is too coarse below a millisecond).

Only the standard library and pyzmq: a far end imports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq

from ..protocol import SendFigures

# Waits at least this long sleep; shorter ones spin, as the open loop's do.
_SLEEP_FROM_S = 2e-3
# How often a blocked sender looks whether its receivers are still there.
_ROOM_POLL_MS = 100


@dataclass
class Schedule:
    """An offered rate's send times and what keeping them cost: the time blocked in
    full queues, and when the sends began and ended."""

    rate: float
    start: float = 0.0  # the first message's intended time: set when sending begins
    blocked: float = 0.0
    ended: float = 0.0

    def figures(self, sent: int) -> SendFigures:
        """A paced sender's report: its sends over its own time (first intended send
        to last done), and the share of that time it was blocked."""
        elapsed = self.ended - self.start
        return {
            "sent": sent,
            "elapsed": elapsed,
            "burst": 0,
            "burst_elapsed": 0.0,  # a paced sender has no send-only burst
            "blocked_s": self.blocked,
        }


def paced_sends(
    sock: zmq.Socket,
    send_one: Callable[[int, int], Any],
    schedule: Schedule,
    first: int,
    last: int,
    stalled: Callable[[float], None],
) -> None:
    """Send messages ``first`` to ``last`` on ``schedule``: ``send_one(i, flags)``
    sends message ``i``; ``stalled(since)`` is called while a full queue keeps the
    sender waiting since ``since`` (``time.monotonic``'s): it raises when the
    receivers are gone or the timeout is spent."""
    now, interval = time.perf_counter, 1.0 / schedule.rate
    if not schedule.start:
        schedule.start = now()
    start = schedule.start
    for i in range(first, last):
        due = start + i * interval
        if (wait := due - now()) > 0:
            if wait >= _SLEEP_FROM_S:
                time.sleep(wait - _SLEEP_FROM_S / 2)
            while now() < due:
                pass
        try:
            send_one(i, zmq.NOBLOCK)
        except zmq.Again:
            blocked_at, since = now(), time.monotonic()
            while not sock.poll(_ROOM_POLL_MS, zmq.POLLOUT):
                stalled(since)
            while True:
                try:
                    send_one(i, 0)  # waits for room, up to the socket's send timeout
                    break
                except zmq.Again:
                    # A PUB's POLLOUT promises no room in a NODROP queue: a subscriber
                    # held off the CPU longer than the send timeout is waited for again.
                    stalled(since)
            schedule.blocked += now() - blocked_at
    schedule.ended = now()


def paced_sends_native(
    sock: zmq.Socket,
    message: bytes,
    copy: bool,
    schedule: Schedule,
    count: int,
    stalled: Callable[[float], None],
) -> None:
    """:func:`paced_sends` of ``count`` messages of one frame, in C (``--loop native``):
    the same schedule, the same tries and the same blocked time, at the rates a C
    sender holds. A send timeout hands back to Python, which calls ``stalled`` (with
    when the stall began) and goes on from there."""
    import ctypes

    from . import native  # a far end of the Python loop never builds it

    lib = native.library()
    if not schedule.start:
        schedule.start = time.perf_counter()
    blocked, ended = ctypes.c_double(schedule.blocked), ctypes.c_double(0.0)
    sent, stalled_at = 0, 0.0
    while sent < count:
        went = lib.zb_send_paced(
            sock.underlying,
            message,
            len(message),
            sent,
            count,
            native.zero_copy(copy, message, sock),
            schedule.start,
            1.0 / schedule.rate,
            ctypes.byref(blocked),
            ctypes.byref(ended),
        )
        went = native.check(lib, went)
        if went < count:
            if went > sent or not stalled_at:  # progress since the last stall: a new one
                stalled_at = time.monotonic()
            stalled(stalled_at)
        sent = went
    schedule.blocked, schedule.ended = blocked.value, ended.value


def sender_for(sock: zmq.Socket, frames: list[Any], copy: bool) -> Callable[[int, int], Any]:
    """``send_one(i, flags)`` for a message of ``frames`` (every message the same)."""
    if len(frames) == 1:
        (frame,) = frames
        return lambda _, flags: sock.send(frame, flags, copy=copy)
    return lambda _, flags: sock.send_multipart(frames, flags, copy=copy)


def numbered_sender_for(sock: zmq.Socket, message: bytes, sender: int) -> Callable[[int, int], Any]:
    """``send_one(i, flags)`` for numbered messages (:mod:`.numbering`): message ``i``
    stamped with ``sender``'s index and ``i``, and copied."""
    from .numbering import SENDER_SHIFT, STAMP

    buffer, stamp, base = bytearray(message), STAMP.pack_into, sender << SENDER_SHIFT

    def send_one(i: int, flags: int) -> Any:
        stamp(buffer, 0, base | i)
        return sock.send(buffer, flags, copy=True)

    return send_one


# A receive loop: (data socket, most messages, copy, frames) -> (how many came, the
# first one's time, the last one's).
ReceiveLoop = Callable[[zmq.Socket, int, bool, int], tuple[int, float, float]]


def working(loop: ReceiveLoop, work: float) -> ReceiveLoop:
    """A receive loop (``loop(data, most, copy, frames)``, as :mod:`.member_loops`'
    are) that takes one message at a time and works ``work`` seconds on each."""
    now = time.perf_counter

    def one_at_a_time(
        data: zmq.Socket, most: int, copy: bool, frames: int
    ) -> tuple[int, float, float]:
        del most  # one at a time: the work comes between any two
        got, first, last = loop(data, 1, copy, frames)
        if got:
            done = now() + work
            while now() < done:
                pass
        return got, first, last

    return one_at_a_time


__all__ = ["Schedule", "numbered_sender_for", "paced_sends", "sender_for", "working"]
