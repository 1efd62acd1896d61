"""The hot loops of one sample: the driver's side of a PUSH/PULL throughput sample and
of a REQ/REP latency sample, each a plain pyzmq loop as in pyzmq's ``perf/perf.py``.

A loop only moves messages and reads the clock; :mod:`.measure` decides what a sample
is (its count, warm-up, rounds) and the far end (:mod:`.peer`) runs the other half.
The garbage collector is off while a loop runs, as ``timeit`` does: a collection
landing in one sample and not another is noise, not ZeroMQ.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, cast

import numpy as np
import zmq

from ...method.control import gc_off
from ...method.load import CpuMeter
from ...params.columns import Row
from ...params.far_end import host_of
from ...params.patterns import SEQUENCE_METRICS
from ...params.pressure import AGE_METRICS, JOIN_METRICS
from ...results.statistics.histogram import LogHistogram
from ..kernel.link import LIVENESS_S, Link, PeerError
from ..payload import Payload
from ..protocol import CpuUse, PeerCommand, PeerLoop, PeerOrder, PeerReport, SinkReport
from . import async_loops, native
from .numbering import send_numbered
from .own_thread import OwnThread, on_own_thread
from .queues import queue_capacity
from .timing import send_only_count, two_phases


class Sending(Protocol):
    """What a send loop asks of the driver's side: its data socket, a place to pin
    the native loop's payload, and whether the far ends are alive
    (:class:`.link.Link`, :class:`.crowd.Crowd`; a client far end's own side in
    :mod:`.member`, for the round-trip loops)."""

    data: Any
    pinned: bytes | None

    def check_stall(self, since: float) -> None: ...


@dataclass
class Timed:
    """What one timed sample gives back: the hot loop's own result, the driver's CPU
    seconds in it, the other processes' share of the machine meanwhile, and the far
    end's report."""

    result: Any
    send_cpu: float
    other_load: float
    report: PeerReport


def timed_sample(
    link: Link,
    command: PeerCommand,
    payload: Payload,
    count: int,
    copy: bool,
    loop: str,
    python: Callable[[], Any],
    native_loop: Callable[[bytes], Any] | None,
    report_timeout: float | None = None,
) -> Timed:
    """The frame every sampler shares: arm the far end for ``command``, then run the
    hot loop (``python()``, or ``native_loop`` on the one frame as bytes; None where a
    sampler has no native loop, which its parameters refuse) with the garbage collector
    off and the CPU metered, and take the far end's report."""
    # The far end runs Python's loop for an asyncio driver (async_loops: what awaiting
    # costs the side that awaits).
    far_loop: PeerLoop = "native" if loop == "native" else "python"
    link.command(
        PeerOrder(cmd=command, count=count, copy=copy, frames=len(payload.frames), loop=far_loop)
    )
    link.reply()  # armed: the far end sits in its loop
    # The native loop's frame is copied to bytes before the clocks start.
    frame = native_bytes(link, payload) if loop == "native" else None
    meter, cpu = CpuMeter(link.pids), cpu_clock(link)
    meter.start()
    try:
        with gc_off():
            cpu_start = cpu()
            if frame is None:
                work = python
            else:
                assert native_loop is not None, "a sampler without a native loop was asked for one"
                work = partial(native_loop, frame)
            # An asyncio loop makes its own thread; the others get one (own_thread: a
            # heap arena of their own, not the kernel's).
            result = work() if loop == "asyncio" else on_own_thread(work)
            send_cpu = cpu() - cpu_start
            report = link.report(timeout=report_timeout)
        if isinstance(result, OwnThread):
            # The loop's own thread did the work: its CPU, unless the process clock (a
            # far end in another process) counted it already.
            send_cpu = send_cpu if link.peer == "process" else result.cpu
            result = result.value
    except zmq.ZMQError as error:
        if error.errno != zmq.EFSM:
            raise
        link.name_lost_request(error)  # a request dropped with its connection, any loop
    return Timed(result, send_cpu, meter.stop(), report)


def throughput_sample(
    link: Link, payload: Payload, count: int, copy: bool, loop: str = "python"
) -> tuple[Row, float]:
    send = link.data.send if len(payload.frames) == 1 else link.data.send_multipart
    burst = send_only_count(count, link.hwm)
    timed = timed_sample(
        link,
        "sink",
        payload,
        count,
        copy,
        loop,
        python=lambda: (
            async_loops.send_all(link, payload.message, len(payload.frames), copy, count, burst)
            if loop == "asyncio"
            else two_phases(partial(send_all, link, send, payload.message, copy), burst, count)
        ),
        native_loop=lambda message: two_phases(
            partial(send_all_native, link, message, copy), burst, count
        ),
        # A sink that lost messages reports after `timeout` of silence: wait longer
        # than that, so a loss is recorded as one rather than raced into a timeout.
        report_timeout=2 * link.timeout,
    )
    (burst_elapsed, send_elapsed), send_cpu, other_load, delivered = (
        timed.result,
        timed.send_cpu,
        timed.other_load,
        cast(SinkReport, timed.report),  # a sink's
    )
    received, elapsed = delivered["received"], delivered["elapsed"]
    if received < 2 or elapsed <= 0:
        msg = f"the {link.describe()} received {received} of {count} messages"
        raise PeerError(msg)
    # First to last receive spans received - 1 deliveries.
    msgs_per_s = (received - 1) / elapsed
    capacity = queue_capacity(link.transport, link.hwm, payload.size)
    return {
        "received": received,
        "late": delivered.get("late", 0),
        "lost": count - received,
        "msgs_per_s": msgs_per_s,
        # One far end: it is the slowest peer and the fastest.
        "slowest_peer_msgs_per_s": msgs_per_s,
        "fastest_peer_msgs_per_s": msgs_per_s,
        "peer_fairness": 1.0,
        "slowest_peer": f"receiver on {host_of(link.remote)}" if link.remote else "receiver",
        **UNNUMBERED,
        "send_msgs_per_s": burst / burst_elapsed if burst_elapsed > 0 else math.nan,
        "sent_per_s": count / send_elapsed if send_elapsed > 0 else math.nan,
        "blocked_share": math.nan,  # an unpaced sender (a paced one is a pattern's)
        "send_only_count": burst,
        "mbit_per_s": msgs_per_s * payload.size * 8 / 1e6,
        "elapsed_s": elapsed,
        "send_elapsed_s": send_elapsed,
        "queue_capacity": capacity,
        "other_load": other_load,
        "send_cpu_us_per_msg": send_cpu / count * 1e6,
        "recv_cpu_us_per_msg": delivered["cpu_s"] / received * 1e6,
        "cpu_clock": delivered["cpu_clock"],
    }, max(elapsed, send_elapsed)


# A run without --sequence cannot say which messages went: unknown, never none.
# The columns only numbered messages fill (a slow joiner's are numbered too, and a
# read's age is known from its number).
UNNUMBERED = {metric.name: math.nan for metric in (*SEQUENCE_METRICS, *JOIN_METRICS, *AGE_METRICS)}


def cpu_clock(link: Link) -> Any:
    """The driver's CPU clock for a loop: the whole process when the far end is another
    process (ZeroMQ's I/O thread does much of the work), else only this thread (the
    far end's thread shares the process and counts itself)."""
    return time.process_time if link.peer == "process" else time.thread_time


def send_all(link: Sending, send: Any, message: Any, copy: bool, first: int, count: int) -> None:
    """Send messages ``first`` to ``count``; when the queues stay full for a moment (the
    socket's short timeout), check the far end is alive, then go on where it stopped."""
    sent, stalled_at = first, 0.0
    while True:
        i = sent
        try:
            for i in range(sent, count):  # noqa: B007 - after Again, i says where to resume
                send(message, copy=copy)
            return
        except zmq.Again:
            if i != sent or not stalled_at:  # progress since the last stall: a new one
                stalled_at = time.monotonic() - LIVENESS_S
            sent = i
            link.check_stall(stalled_at)


def native_bytes(link: Sending, payload: Payload) -> bytes:
    """The one frame the native loop sends, as bytes (copied once, before timing),
    pinned to the link: a zero-copy message still queued when a sample fails points
    at these bytes, which must outlive the sockets (closed with the link)."""
    (frame,) = payload.frames
    message = frame if isinstance(frame, bytes) else bytes(memoryview(frame))
    link.pinned = message
    return message


def send_all_native(link: Sending, message: bytes, copy: bool, first: int, count: int) -> None:
    """As :func:`send_all`, in C: each call sends at most :func:`native_run` messages,
    so the loop is back in Python (where an interrupt lands) every few tens of
    milliseconds; a timeout returns how far it got."""
    lib = native.library()
    handle, size, sent, stalled_at = link.data.underlying, len(message), first, 0.0
    zero_copy, per_call = native.zero_copy(copy, message, link.data), native_run(size)
    while sent < count:
        asked = min(count - sent, per_call)
        went = native.check(lib, lib.zb_send(handle, message, size, asked, zero_copy))
        sent += went
        if went == asked:
            continue
        if went or not stalled_at:  # progress since the last stall: a new one
            stalled_at = time.monotonic() - LIVENESS_S
        link.check_stall(stalled_at)


# The bytes one call of the native send loop moves at most: tens of milliseconds of
# sending at small sizes, where a call into C and back costs about a microsecond.
_BYTES_PER_CALL = 4 * 1024 * 1024


def native_run(size: int) -> int:
    """How many messages of ``size`` bytes one call of the native send loop sends."""
    return max(1, _BYTES_PER_CALL // max(size, 1))


def send_all_numbered(
    link: Sending, message: bytes, sender: int, loop: str, first: int, count: int
) -> None:
    """As :func:`send_all` (``loop`` "native": :func:`send_all_native`), each message
    stamped with ``sender``'s index and its number (:mod:`.numbering`), and so built
    fresh, copied whatever ``--copy`` says."""
    lib = native.library() if loop == "native" else None
    sent, stalled_at = first, 0.0
    while True:
        if lib is not None:
            handle = link.data.underlying
            went = lib.zb_send_numbered(handle, message, len(message), sent, count, sender)
            done = sent + native.check(lib, went)
        else:
            done = send_numbered(link.data.send, message, sender, sent, count)
        if done == count:
            return
        if done != sent or not stalled_at:  # progress since the last stall: a new one
            stalled_at = time.monotonic() - LIVENESS_S
        sent = done
        link.check_stall(stalled_at)


def _await_reply(link: Sending, recv: Any, copy: bool) -> None:
    stalled_at = time.monotonic() - LIVENESS_S
    while True:
        link.check_stall(stalled_at)
        try:
            recv(copy=copy)
            return
        except zmq.Again:
            continue


def latency_sample(
    link: Link, payload: Payload, count: int, copy: bool, loop: str = "python"
) -> tuple[Row, float]:
    """One latency sample; its ``rtt_hist`` (every round trip, bucketed) goes to the
    point's distribution, the rest to the sample's row."""
    frames = len(payload.frames)
    # One clock read per round trip: the gaps between reads are the round trips.
    timed = timed_sample(
        link,
        "echo",
        payload,
        count,
        copy,
        loop,
        python=lambda: (
            async_loops.ping(link, payload.message, frames, copy, count)
            if loop == "asyncio"
            else _ping(link, payload.message, frames, copy, count)
        ),
        native_loop=lambda message: _ping_native(link, message, copy, count),
    )
    stamps = timed.result
    elapsed = stamps[-1] - stamps[0]
    return _closed_loop_row(np.diff(np.asarray(stamps)) * 1e6, elapsed, timed), elapsed


# The driver's loop for each far-end role (a kind declares its role, ``Kind.far_end``):
# the kernel's run and a worker process's run pick the same loop.
SAMPLE_OF_ROLE = {"sink": throughput_sample, "echo": latency_sample}


def idle_sample(
    link: Link, payload: Payload, count: int, copy: bool, loop: str = "python", *, idle: float
) -> tuple[Row, float]:
    """One sample of ``count`` round trips, each after ``idle`` seconds with nothing
    sent: each is timed on its own, from its send to its reply."""
    frames = len(payload.frames)
    timed = timed_sample(
        link,
        "echo",
        payload,
        count,
        copy,
        loop,
        python=lambda: _ping_after_pauses(link, payload.message, frames, copy, count, idle),
        native_loop=None,  # the native loop runs back to back (--idle refuses it)
        # The far end reports once the last reply is out: after the last pause.
        report_timeout=link.timeout + idle,
    )
    start, rtts = timed.result
    elapsed = time.perf_counter() - start
    return _closed_loop_row(np.asarray(rtts) * 1e6, elapsed, timed), elapsed


def _closed_loop_row(rtt_us: np.ndarray, elapsed: float, timed: Timed) -> Row:
    """A closed loop's row: its round trips' columns and the rate it achieved."""
    return {
        **latency_columns(rtt_us, elapsed, timed.send_cpu, timed.report),
        "achieved_per_s": len(rtt_us) / elapsed,
        "send_lag_p99_us": math.nan,  # a closed loop has no schedule to be late for
        "held": True,
        "other_load": timed.other_load,
    }


def _ping_after_pauses(
    link: Link, message: Any, frames: int, copy: bool, count: int, idle: float
) -> tuple[float, list[float]]:
    """``count`` round trips, each after ``idle`` seconds of nothing: when the first
    pause began, and each round trip's own time."""
    send: Any
    recv: Any
    if frames == 1:
        send, recv = link.data.send, link.data.recv
    else:
        send, recv = link.data.send_multipart, link.data.recv_multipart
    now, rtts = time.perf_counter, []
    start = now()
    for _ in range(count):
        time.sleep(idle)
        sent = now()
        send(message, copy=copy)
        try:
            recv(copy=copy)
        except zmq.Again:
            _await_reply(link, recv, copy)  # late: see whether the far end still is
        rtts.append(now() - sent)
    return start, rtts


def latency_columns(rtt_us: np.ndarray, elapsed: float, send_cpu: float, echoed: CpuUse) -> Row:
    """A latency sample's row from its round trips (µs), closed or open loop alike;
    ``rtt_hist`` (every round trip, bucketed) goes to the point's distribution."""
    count = len(rtt_us)
    p50, p90, p99, p999 = np.percentile(rtt_us, [50, 90, 99, 99.9])
    return {
        "sample_mean_us": float(rtt_us.mean()),
        "sample_p50_us": float(p50),
        "sample_p90_us": float(p90),
        "sample_p99_us": float(p99),
        "sample_p999_us": float(p999),
        # One client (N clients: their row says otherwise): it is the slowest.
        "slowest_client_p50_us": float(p50),
        "round_trips": count,
        "max_us": float(rtt_us.max()),
        "min_us": float(rtt_us.min()),
        "elapsed_s": elapsed,
        "send_cpu_us_per_msg": send_cpu / count * 1e6,
        "recv_cpu_us_per_msg": echoed["cpu_s"] / count * 1e6,
        "cpu_clock": echoed["cpu_clock"],
        "rtt_hist": LogHistogram.of(rtt_us),
    }


def _ping(link: Sending, message: Any, frames: int, copy: bool, count: int) -> list[float]:
    """``count`` round trips; their stamps (``[0]``: the start), each as its reply came.

    The far end echoes the message, so each request after the first is the reply just
    received (the same bytes), as pyzmq's perf.py sends its own: a buffer just written,
    where the message's own was last read a round trip ago."""
    send: Any
    recv: Any
    if frames == 1:
        send, recv = link.data.send, link.data.recv
    else:
        send, recv = link.data.send_multipart, link.data.recv_multipart
    now = time.perf_counter
    stamps = [0.0] * (count + 1)
    stamps[0] = now()
    done = 0
    while done < count:
        i = done + 1
        try:
            for i in range(done + 1, count + 1):
                send(message, copy=copy)
                message = recv(copy=copy)
                stamps[i] = now()
            done = count
        except zmq.Again:
            # The reply to round trip i is late (a REQ socket does not block on
            # send while its far end is there): see whether the far end still is.
            _await_reply(link, recv, copy)
            stamps[i] = now()
            done = i
    return stamps


def _ping_native(link: Sending, message: bytes, copy: bool, count: int) -> np.ndarray:
    """As :func:`_ping`, in C; a timeout while a reply is awaited returns to check the
    far end, and the next call waits for that same reply."""
    lib = native.library()
    stamps = np.zeros(count + 1)
    pointer = stamps.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    pending, stalled_at, done = ctypes.c_int(0), 0.0, 0
    stamps[0] = time.perf_counter()
    while True:
        now_done = native.check(
            lib,
            lib.zb_ping(
                link.data.underlying,
                message,
                len(message),
                done,
                count,
                native.zero_copy(copy, message, link.data),
                ctypes.byref(pending),
                pointer,
            ),
        )
        if now_done == count:
            return stamps
        if now_done != done or not stalled_at:
            stalled_at = time.monotonic() - LIVENESS_S
        done = now_done
        link.check_stall(stalled_at)
