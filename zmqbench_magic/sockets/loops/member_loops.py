"""What a far end of a pattern (:mod:`.member`) does with its data socket in one
sample: receive its share (counting a silence after the senders' word as the end),
send the count, or make a client's round trips; in Python or in C, numbered or not
(:mod:`.numbering`). The kernel's hub receives with the same loop (``fanin``).
"""

from __future__ import annotations

import ctypes
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import zmq

from ..far_ends.peer import drain
from ..protocol import (
    Join,
    JoinFigures,
    Ping,
    PingFigures,
    Receive,
    ReceiveFigures,
    Send,
    SendFigures,
)
from .numbering import (
    Reads,
    Tally,
    read_stamp,
    receive_numbered_native,
    receive_numbered_python,
    receive_read_times_python,
    send_numbered_range,
)
from .pressure_loops import (
    ReceiveLoop,
    Schedule,
    numbered_sender_for,
    paced_sends,
    paced_sends_native,
    sender_for,
    working,
)
from .timing import two_phases


class Received(ReceiveFigures, total=False):
    """A receive loop's figures as it ends, with what goes after a receiver's report
    as frames, never in its JSON: ``bitmap``, the numbers that came (where its share is
    unknown), and ``reads``, each read's stamp and time (two frames)."""

    bitmap: bytes
    reads: list[bytes]


def receive(
    data: zmq.Socket, order: Receive, notice: Callable[[], bool], timeout: float
) -> Received:
    """Receive ``order["expect"]`` messages, or, short of them (a share unknown, or
    messages dropped), until ``notice()`` says every sender is done and a silence
    follows; a silence of ``timeout`` with no notice is the senders' failure.

    With ``order["numbered"]`` (``--sequence true``: the senders it hears and their
    count) each message's stamp is read, and the report adds the gaps, the numbers
    missed and the first of them, and how many came out of order
    (:class:`.numbering.Tally`); where its share is unknown, its bitmap too. With
    ``order["ages"]`` too, each message's stamp and read time (:class:`.numbering.Reads`),
    as ``"reads"``: a list of two bytes frames."""
    loop, tally, reads = _receive_loop(order)
    expect = order["expect"] or sys.maxsize
    received, first, last, heard = 0, 0.0, 0.0, False
    silent_since = time.monotonic()
    while received < expect:
        got, started, ended = loop(data, expect - received, order["copy"], order["frames"])
        if got:
            first = first if received else started
            received, last, silent_since = received + got, ended, time.monotonic()
            continue
        if heard:
            break  # the senders are done and a silence followed: nothing more comes
        heard = notice()
        if not heard and time.monotonic() - silent_since > timeout:
            msg = f"no message and no word from the senders for {timeout:g} s"
            raise TimeoutError(msg)
    late = 0
    if received < expect and order["expect"]:
        late = drain(data)  # anything after the silence is not the next sample's
    report: Received = {"received": received, "first": first, "last": last, "late": late}
    if tally is not None:
        report = {**report, **tally.figures()}
        if not order["expect"]:
            report["bitmap"] = tally.bitmap(0)  # the hub's numbers, shared with others
    if reads is not None:
        report["reads"] = reads.frames()
    return report


def _receive_loop(order: Receive) -> tuple[ReceiveLoop, Tally | None, Reads | None]:
    """The receive loop an order asks for, and where it keeps the numbers it reads
    and (``order["ages"]``) each read's stamp and time."""
    native = order.get("loop") == "native"
    loop: ReceiveLoop = _receive_native if native else _receive_python
    tally = Tally.of(order["numbered"]) if order.get("numbered") else None
    reads = None
    if tally is not None and order.get("ages"):  # the Python loop's (check_conflate)
        reads = Reads()
        loop = partial(receive_read_times_python, tally=tally, reads=reads)
    elif tally is not None:
        numbered = receive_numbered_native if native else receive_numbered_python
        loop = partial(numbered, tally=tally)
    if order.get("work"):
        loop = working(loop, order["work"])
    return loop, tally, reads


def join(data: zmq.Socket, order: Join, notice: Callable[[], bool], timeout: float) -> JoinFigures:
    """A slow joiner's sample: at ``order["at"]`` (``time.perf_counter``, which every
    process of the machine shares) connect to ``order["url"]``, where numbered messages
    are being published, take the first that comes (its time and number), then the
    rest as :func:`receive` does, and disconnect, so that the next sample joins anew."""
    now = time.perf_counter
    if (wait := order["at"] - now()) > 0:
        time.sleep(wait)
    connected_at = now()
    data.connect(order["url"])
    try:
        report = _after_joining(data, order, notice, timeout)
    finally:
        data.disconnect(order["url"])
    return {**report, "connected_at": connected_at}


def _after_joining(
    data: zmq.Socket, order: Join, notice: Callable[[], bool], timeout: float
) -> JoinFigures:
    """The first message after a join, then the rest (see :func:`join`)."""
    silent_since = time.monotonic()
    while True:
        try:
            first = data.recv()
            break
        except zmq.Again:
            if notice():  # the publisher is done, and nothing came
                return {"received": 0, "first": 0.0, "last": 0.0, "late": 0, "first_number": -1}
            if time.monotonic() - silent_since > timeout:
                raise TimeoutError(f"no message for {timeout:g} s after joining") from None
    first_at = time.perf_counter()
    _, number = read_stamp(first)
    # The rest, as a receiver of one frame with Python's loop, unnumbered, takes them.
    rest_order = Receive(
        cmd="receive",
        expect=order["count"] - number - 1,
        work=0.0,
        copy=order["copy"],
        frames=1,
        loop="python",
        ages=False,
    )
    rest = receive(data, rest_order, notice, timeout) if rest_order["expect"] else Received()
    return {
        "received": 1 + rest.get("received", 0),
        "first": first_at,
        "last": rest.get("last") or first_at,
        "late": rest.get("late", 0),
        "first_number": number,
    }


def _receive_python(
    data: zmq.Socket, most: int, copy: bool, frames: int
) -> tuple[int, float, float]:
    """Up to ``most`` messages: how many came before a silence, and the first and last
    one's times. The clock is read at the first and, after a silence, at its end less
    the receive timeout (no read per message: it would slow the loop it times)."""
    get: Any = data.recv if frames == 1 else data.recv_multipart
    now = time.perf_counter
    try:
        get(copy=copy)
    except zmq.Again:
        return 0, 0.0, 0.0
    first, got = now(), 1
    try:
        for _ in range(most - 1):
            get(copy=copy)
            got += 1
    except zmq.Again:
        return got, first, now() - int(data.rcvtimeo) / 1000
    return got, first, now()


def _receive_native(
    data: zmq.Socket, most: int, copy: bool, frames: int
) -> tuple[int, float, float]:
    """As :func:`_receive_python`, in C, every receive stamped."""
    from . import native

    lib = native.library()
    first, last = ctypes.c_double(), ctypes.c_double()
    most = min(most, 2**62)  # "every message": an int64 all the same
    got = native.check(
        lib, lib.zb_sink(data.underlying, most, ctypes.byref(first), ctypes.byref(last))
    )
    return got, first.value, last.value


def send(data: zmq.Socket, order: Send, frames: list[bytes], timeout: float) -> SendFigures:
    """Send ``order["count"]`` messages of ``frames``; time the first ``burst`` (the
    sender's own queue holds them: the send-only rate) and all of them. With
    ``order["sender"]`` (``--sequence true``) each message is stamped with this
    sender's index and its number (:mod:`.numbering`)."""
    count, burst, copy = order["count"], order["burst"], order["copy"]
    data.copy_threshold = order["copy_threshold"]
    if order.get("rate"):
        return _send_paced(data, order, frames, timeout)
    if "sender" in order:
        (frame,) = frames
        numbered = partial(send_numbered_range, data, frame, order["sender"], order.get("loop"))
        burst_elapsed, elapsed = two_phases(numbered, burst, count)
        return {"sent": count, "elapsed": elapsed, "burst": burst, "burst_elapsed": burst_elapsed}
    if order.get("loop") == "native":
        (frame,) = frames
        burst_elapsed, elapsed = two_phases(
            lambda first, last: _send_native(data, frame, copy, last - first), burst, count
        )
        return {"sent": count, "elapsed": elapsed, "burst": burst, "burst_elapsed": burst_elapsed}
    put: Any = data.send if len(frames) == 1 else data.send_multipart
    message: Any = frames[0] if len(frames) == 1 else frames

    def send_range(first: int, last: int) -> None:
        for _ in range(first, last):
            put(message, copy=copy)

    burst_elapsed, elapsed = two_phases(send_range, burst, count)
    return {"sent": count, "elapsed": elapsed, "burst": burst, "burst_elapsed": burst_elapsed}


def _send_paced(data: zmq.Socket, order: Send, frames: list[bytes], timeout: float) -> SendFigures:
    """A sending far end's messages at ``order["rate"]`` a second (:mod:`.pressure_loops`),
    numbered with ``order["sender"]`` (the Python loop), or by the native loop in C; a
    queue with no room for ``timeout`` is the receivers' failure."""

    def stalled(since: float) -> None:
        if time.monotonic() - since > timeout:
            raise TimeoutError(f"no room in the queue for {timeout:g} s")

    schedule = Schedule(order["rate"])
    if order.get("loop") == "native":
        (frame,) = frames
        paced_sends_native(data, frame, order["copy"], schedule, order["count"], stalled)
    else:
        if "sender" in order:
            (frame,) = frames
            send_one = numbered_sender_for(data, frame, order["sender"])
        else:
            send_one = sender_for(data, frames, order["copy"])
        paced_sends(data, send_one, schedule, 0, order["count"], stalled)
    return schedule.figures(order["count"])


def _send_native(data: zmq.Socket, message: bytes, copy: bool, count: int) -> None:
    from . import native

    lib = native.library()
    left, zero_copy = count, native.zero_copy(copy, message, data)
    while left:
        went = lib.zb_send(data.underlying, message, len(message), left, zero_copy)
        left -= native.check(lib, went)


class _Client:
    """A client's side as the round-trip loops (:func:`.pair._ping`) ask for it: its
    REQ socket, and what a late reply means."""

    def __init__(self, ctrl: zmq.Socket, data: zmq.Socket, timeout: float) -> None:
        self.ctrl, self.data, self.timeout = ctrl, data, timeout
        self.pinned: bytes | None = None

    def check_stall(self, since: float) -> None:
        """No reply since ``since``: the kernel said something (it says nothing while
        the clients run, but quit as it gives up), or the server went silent."""
        if self.ctrl.poll(0):
            said = json.loads(self.ctrl.recv())["cmd"]
            raise RuntimeError(f"told {said!r} while waiting for a reply")
        if time.monotonic() - since > self.timeout:
            raise TimeoutError(f"no reply from the server for {self.timeout:g} s")


def ping(
    ctrl: zmq.Socket, data: zmq.Socket, order: Ping, frames: list[bytes], timeout: float
) -> tuple[PingFigures, list[bytes]]:
    """A client's ``order["count"]`` round trips, back to back, each timed: its report,
    and the round trips' seconds as one float64 frame."""
    import numpy as np

    from .pair import _ping, _ping_native

    count, copy = order["count"], order["copy"]
    data.copy_threshold = order["copy_threshold"]
    client = _Client(ctrl, data, timeout)
    if order.get("loop") == "native":
        (frame,) = frames
        client.pinned = frame
        stamps = np.asarray(_ping_native(client, frame, copy, count))
    else:
        message: Any = frames[0] if len(frames) == 1 else frames
        stamps = np.asarray(_ping(client, message, len(frames), copy, count))
    report = PingFigures(pinged=count, first=float(stamps[0]), last=float(stamps[-1]))
    return report, [np.diff(stamps).astype(np.float64).tobytes()]


__all__ = ["Received", "join", "ping", "receive", "send"]
