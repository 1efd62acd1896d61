"""One request's round trip, and the stamps that cut it into stages.

A trip records five instants on the machine's one wall clock (the kernel stamps its
headers with ``datetime.now(utc)``, the client reads ``time.time()``): the client's
send, the kernel's ``busy`` status, the reply's making (its header's date), the reply's
arrival, and the trip's end, when the last of the reply and the ``idle`` status has
come (two channels: either may come first). The stages between them
(:data:`~..params.kernel_messages.STAGE_METRICS`) add up to the round trip exactly;
what can be off is each stamp's microsecond and the clock's own reading.

The same trips go through either of a kernel's doors (:class:`.kernel.Channels`):
its ZeroMQ channels, or a Jupyter server's websocket. The comm test's kernel side is
an echo registered under :data:`ECHO_TARGET` by a cell (:data:`ECHO_SETUP`) run once
on each fresh kernel, outside the timing.
"""

from __future__ import annotations

import datetime
import itertools
import time
import uuid
from dataclasses import dataclass

from ..params.kernel_messages import PACKER, STAMP_SLACK_S
from .kernel import Channels, KernelUnderTest, Message, NoReply, parent_id

ECHO_TARGET = "zmqbench_echo"
# Registers a comm target that sends every message's data and buffers straight back.
ECHO_SETUP = f"""
def _zmqbench_echo(comm, open_msg):
    @comm.on_msg
    def _echo(msg):
        comm.send(msg["content"]["data"], buffers=msg.get("buffers"))

try:
    from comm import get_comm_manager as _zmqbench_manager
    _zmqbench_manager().register_target({ECHO_TARGET!r}, _zmqbench_echo)
except ImportError:  # ipykernel before the comm package
    get_ipython().kernel.comm_manager.register_target({ECHO_TARGET!r}, _zmqbench_echo)
"""
# What a Jupyter server writes to a cell's stderr when it starts dropping its output
# (jupyter_server's ZMQChannelsWebsocketConnection), by the limit that fired.
LIMIT_NOTICES = {"messages": "IOPub message rate exceeded", "data": "IOPub data rate exceeded"}


class CellFailed(RuntimeError):
    """The kernel answered an execute with an error: the cell raised."""


@dataclass
class Trip:
    """One request's instants, in seconds on the wall clock; ``started`` is ipykernel's
    execute stamp (None for other messages); what a stream's cell sent to stdout
    before its idle status, and the servers' notices that they dropped some."""

    sent: float
    busy: float = 0.0
    replied: float = 0.0
    reply_received: float = 0.0
    ended: float = 0.0
    started: float | None = None
    outputs: int = 0
    output_bytes: int = 0
    limits_hit: tuple[str, ...] = ()
    # Through a server: its idle status's arrival less when a subscriber beside the
    # server heard it, the server's hop back (None on the other paths).
    server_hop: float | None = None

    @property
    def roundtrip(self) -> float:
        return self.ended - self.sent

    def stamps_in_order(self) -> bool:
        """Whether the kernel's stamps lie between the client's send and the trip's end,
        in the order the messages were made (within :data:`STAMP_SLACK_S`). One
        machine's wall clock makes it so for a kernel that stamps correctly; xeus-python
        0.19 (xeus 6.0.5) was seen writing ``07.37174Z`` for a moment the client read as
        ``07.037174``: the fraction of a second without its leading zeros, 90 ms to
        nearly a second late whenever the fraction is under 0.1. Stages cut by such a
        stamp would be fiction."""
        kernel_side = [self.busy, self.replied]
        if self.started is not None:
            kernel_side.insert(1, self.started)
        instants = [self.sent, *kernel_side, self.reply_received, self.ended]
        return all(b - a >= -STAMP_SLACK_S for a, b in itertools.pairwise(instants))

    def stages(self) -> tuple[float, float, float, float]:
        """to_kernel, in_kernel, reply and idle, in seconds; they add up to the trip."""
        return (
            self.busy - self.sent,
            self.replied - self.busy,
            self.reply_received - self.replied,
            self.ended - self.reply_received,
        )


def stamp(date: datetime.datetime | str) -> float:
    """A header's date (jupyter_client reads headers' into datetimes; metadata's stay
    ISO text) as seconds on the wall clock."""
    if isinstance(date, str):
        date = datetime.datetime.fromisoformat(date.replace("Z", "+00:00"))
    return date.timestamp()


def _follow(channels: Channels, msg_id: str, trip: Trip, reply_type: str, timeout: float) -> Trip:
    """Read what comes until both the request's reply (``reply_type``: on the shell
    channel, or a comm's echo on IOPub; "" for a request with none) and its idle
    status have come; the trip ends as the later of the two arrives."""
    replied, idle = not reply_type, False
    while not (replied and idle):
        message = channels.receive(timeout)
        if parent_id(message) != msg_id:
            continue
        # Received, verified and decoded: the client has it (as its door noted, else now).
        arrived = float(message.get("arrived", time.time()))
        kind = message["msg_type"]
        if kind == reply_type:
            replied = True
            _read_reply(message, trip, arrived)
        elif kind == "status":
            state = message["content"]["execution_state"]
            if state == "busy":
                trip.busy = stamp(message["header"]["date"])
            elif state == "idle":
                idle = True
                beside = message.get("arrived_beside")
                trip.server_hop = None if beside is None else arrived - float(beside)
        elif kind == "stream":
            _read_stream(message, trip)
        elif kind == "error":
            content = message["content"]
            raise CellFailed(f"the cell raised {content['ename']}: {content['evalue']}")
    trip.ended = arrived
    return trip


def _read_reply(message: Message, trip: Trip, arrived: float) -> None:
    trip.reply_received = arrived
    trip.replied = stamp(message["header"]["date"])
    started = message["metadata"].get("started")
    trip.started = stamp(started) if started else None
    content = message["content"]
    if content.get("status") == "error":
        raise CellFailed(f"the cell raised {content.get('ename')}: {content.get('evalue')}")


def _read_stream(message: Message, trip: Trip) -> None:
    content = message["content"]
    if content["name"] == "stdout":
        trip.outputs += 1
        trip.output_bytes += len(content["text"].encode())
        return
    fired = [limit for limit, notice in LIMIT_NOTICES.items() if notice in content["text"]]
    trip.limits_hit += tuple(fired)


def execute_trip(channels: Channels, code: str, timeout: float) -> Trip:
    """``code`` executed (not stored in the history), to its reply and idle status."""
    content = {
        "code": code,
        "silent": False,
        "store_history": False,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    sent = time.time()
    msg_id = channels.send("execute_request", content)
    return _follow(channels, msg_id, Trip(sent), "execute_reply", timeout)


def info_trip(channels: Channels, timeout: float) -> Trip:
    """``kernel_info_request``: a request answered with nothing executed."""
    sent = time.time()
    msg_id = channels.send("kernel_info_request", {})
    return _follow(channels, msg_id, Trip(sent), "kernel_info_reply", timeout)


def stream_code(count: int, size: int) -> str:
    """A cell that writes ``count`` chunks of ``size`` bytes to stdout."""
    return (
        f"import sys as _s\n_c = 'x' * {size}\n"
        f"for _ in range({count}):\n    _s.stdout.write(_c)\n_s.stdout.flush()\n"
    )


def stream_trip(channels: Channels, count: int, size: int, timeout: float) -> Trip:
    """The stream cell, its output counted as it arrives, to its idle status."""
    return execute_trip(channels, stream_code(count, size), timeout)


class Comm:
    """A comm opened to the kernel's echo: each ``trip`` sends one message of ``size``
    bytes, in the JSON or as a binary buffer, and waits for its echo and the idle
    status."""

    def __init__(self, channels: Channels, size: int, buffers: bool, timeout: float) -> None:
        self.channels = channels
        self.timeout = timeout
        self.comm_id = uuid.uuid4().hex
        self.buffers = buffers
        self.payload = b"x" * size
        execute_trip(channels, ECHO_SETUP, timeout)
        opened = channels.send("comm_open", {**self._id, "target_name": ECHO_TARGET, "data": {}})
        _follow(channels, opened, Trip(time.time()), "", timeout)
        try:
            self.trip()  # one echo outside the timing: the comm works, or is named here
        except NoReply as silent:
            msg = f"{silent}: no echo of a comm message to the target {ECHO_TARGET!r}"
            msg += " the run registered"
            raise NoReply(msg + _first_error(channels)) from None

    @property
    def _id(self) -> dict[str, str]:
        return {"comm_id": self.comm_id}

    def trip(self) -> Trip:
        sent = time.time()
        if self.buffers:
            data = {"size": len(self.payload)}
            msg_id = self.channels.send("comm_msg", {**self._id, "data": data}, [self.payload])
        else:
            text = self.payload.decode()
            msg_id = self.channels.send("comm_msg", {**self._id, "data": {"text": text}})
        return _follow(self.channels, msg_id, Trip(sent), "comm_msg", self.timeout)


def _first_error(channels: Channels) -> str:
    """The first line the kernel wrote to its stderr that names an error, where the
    kernel's stderr is this process's to read (a kernel started straight)."""
    lines = channels.stderr_lines() if isinstance(channels, KernelUnderTest) else []
    errors = [line for line in lines if "error" in line.lower()]
    return f" (its stderr: {errors[0]})" if errors else ""


def start_trip(
    name: str, timeout: float, signing: bool = True, packer: str = PACKER.default
) -> Trip:
    """A fresh kernel from its start to its first ``kernel_info_reply`` (no stages:
    the start is one), shut down after."""
    sent = time.time()
    kernel = KernelUnderTest(name, timeout, signing, packer)
    try:
        done = time.time()
        return Trip(sent, busy=sent, replied=done, reply_received=done, ended=done)
    finally:
        kernel.close()


__all__ = [
    "ECHO_SETUP",
    "ECHO_TARGET",
    "LIMIT_NOTICES",
    "CellFailed",
    "Comm",
    "Trip",
    "execute_trip",
    "info_trip",
    "start_trip",
    "stream_code",
    "stream_trip",
]
