"""Latency under load (``%zmqlat --rate``): the open loop, in Python or in C.

A closed loop (REQ/REP ping-pong) sends a request only once the last reply is in. It
measures an otherwise idle pair, and a stall delays every later request with it, so
however long the stall, it is counted once ("coordinated omission"). Here the driver
sends message ``i`` at its intended time ``start + i / rate`` over a DEALER to the far
end's ROUTER, whether or not replies have come back, and each message's latency runs
from that *intended* time to its reply: a stall shows in every message it delayed, as
in wrk2 and HdrHistogram's corrected mode.

Replies come back in order over the one connection, so the i-th reply answers the i-th
request. At most the high-water mark of requests is unanswered at once, so the far
end's ROUTER never meets a full queue (where it would drop replies); a pair that cannot
keep up makes the sender fall behind its schedule, and the latencies show it.
"""

from __future__ import annotations

import ctypes
import time

import numpy as np
import zmq

from ...params import HELD_FRACTION
from ...params.columns import Row
from ..kernel.link import LIVENESS_S, Link
from ..payload import Payload
from . import native
from .pair import latency_columns, timed_sample

# Waits at least this long sleep in a poll (woken by a reply); shorter ones spin,
# since a poll's millisecond timeout cannot keep a finer schedule.
_SLEEP_FROM_S = 2e-3


def paced_sample(
    link: Link, payload: Payload, count: int, copy: bool, loop: str = "python", *, rate: float
) -> tuple[Row, float]:
    """One open-loop sample of ``count`` messages offered at ``rate`` per second."""
    timed = timed_sample(
        link,
        "route",
        payload,
        count,
        copy,
        loop,
        python=lambda: _pace(link, payload, copy, count, rate),
        native_loop=lambda message: _pace_native(link, message, copy, count, rate),
    )
    (start, sent_at, replied_at), send_cpu, echoed = timed.result, timed.send_cpu, timed.report
    other_load = timed.other_load
    intended = start + np.arange(count) / rate
    elapsed = float(replied_at[-1] - start)
    # Replies over the time from the first intended send to the last reply: the
    # offered rate (never more) when the pair keeps up, its own rate when it cannot.
    achieved = (count - 1) / elapsed
    return {
        **latency_columns((replied_at - intended) * 1e6, elapsed, send_cpu, echoed),
        "achieved_per_s": achieved,
        "send_lag_p99_us": float(np.percentile((sent_at - intended) * 1e6, 99)),
        "held": achieved >= HELD_FRACTION * rate,
        "other_load": other_load,
    }, elapsed


def _pace(
    link: Link, payload: Payload, copy: bool, count: int, rate: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """The open loop in Python: the start, and each message's send and reply times."""
    sock, frames, message = link.data, len(payload.frames), payload.message
    send = sock.send if frames == 1 else sock.send_multipart
    recv = sock.recv if frames == 1 else sock.recv_multipart
    now, interval, in_flight = time.perf_counter, 1.0 / rate, link.hwm
    sent_at, replied_at = [0.0] * count, [0.0] * count
    sent = received = 0
    start = progress = due = now()
    while received < count:
        moved = False
        while sent < count and sent - received < in_flight and (t := now()) >= due:
            try:
                send(message, zmq.NOBLOCK, copy=copy)
            except zmq.Again:
                break
            sent_at[sent] = t
            sent += 1
            due = start + sent * interval
            moved = True
        while received < sent:
            try:
                recv(zmq.NOBLOCK, copy=copy)
            except zmq.Again:
                break
            replied_at[received] = now()
            received += 1
            moved = True
        t = now()
        if moved:
            progress = t
            continue
        if t - progress > LIVENESS_S:
            # Nothing sent or answered for a while (the gap between two sends is at
            # most 1 / RATE.low, shorter): is the far end still there?
            link.check_stall(time.monotonic() - (t - progress))
        wait = due - t if sent < count else LIVENESS_S
        if wait >= _SLEEP_FROM_S:
            sock.poll(int(wait * 1e3) - 1)
    return start, np.asarray(sent_at), np.asarray(replied_at)


def _pace_native(
    link: Link, message: bytes, copy: bool, count: int, rate: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """As :func:`_pace`, in C; a stall returns to Python to check the far end."""
    lib = native.library()
    sent_at, replied_at = np.zeros(count), np.zeros(count)
    pointers = [a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for a in (sent_at, replied_at)]
    sent, received = ctypes.c_int64(0), ctypes.c_int64(0)
    stalled_at, before = 0.0, -1
    start = time.perf_counter()
    while True:
        got = native.check(
            lib,
            lib.zb_pace(
                link.data.underlying,
                message,
                len(message),
                count,
                native.zero_copy(copy, message, link.data),
                start,
                1.0 / rate,
                link.hwm,
                LIVENESS_S,
                ctypes.byref(sent),
                ctypes.byref(received),
                *pointers,
            ),
        )
        if got == count:
            return start, sent_at, replied_at
        if got != before:  # progress since the last stall: a new one
            stalled_at, before = time.monotonic() - LIVENESS_S, got
        link.check_stall(stalled_at)
