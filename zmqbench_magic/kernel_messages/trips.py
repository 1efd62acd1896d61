"""One request's round trip, and the stamps that cut it into stages.

A trip records five instants on the machine's one wall clock (the kernel stamps its
headers with ``datetime.now(utc)``, the client reads ``time.time()``): the client's
send, the kernel's ``busy`` status, the reply's making (its header's date), the reply's
arrival and the ``idle`` status's arrival. The stages between them
(:data:`~..params.kernel_messages.STAGE_METRICS`) add up to the round trip exactly;
what can be off is each stamp's microsecond and the clock's own reading.

The comm test's kernel side is an echo registered under :data:`ECHO_TARGET` by a cell
(:data:`ECHO_SETUP`) run once on each fresh kernel, outside the timing.
"""

from __future__ import annotations

import datetime
import time
import uuid
from dataclasses import dataclass, field

from .kernel import KernelUnderTest

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


class CellFailed(RuntimeError):
    """The kernel answered an execute with an error: the cell raised."""


@dataclass
class Trip:
    """One request's instants, in seconds on the wall clock; ``started`` is ipykernel's
    execute stamp (None for other messages); ``outputs`` and ``output_bytes`` what a
    stream sent before its idle status."""

    sent: float
    busy: float = 0.0
    replied: float = 0.0
    reply_received: float = 0.0
    idle_received: float = 0.0
    started: float | None = None
    outputs: int = 0
    output_bytes: int = 0

    @property
    def roundtrip(self) -> float:
        return self.idle_received - self.sent

    def stages(self) -> tuple[float, float, float, float]:
        """to_kernel, in_kernel, reply and idle, in seconds; they add up to the trip."""
        return (
            self.busy - self.sent,
            self.replied - self.busy,
            self.reply_received - self.replied,
            self.idle_received - self.reply_received,
        )


def stamp(date: datetime.datetime | str) -> float:
    """A header's date (jupyter_client reads headers' into datetimes; metadata's stay
    ISO text) as seconds on the wall clock."""
    if isinstance(date, str):
        date = datetime.datetime.fromisoformat(date.replace("Z", "+00:00"))
    return date.timestamp()


@dataclass
class _Watch:
    """What the IOPub channel says about one request, read until its idle status."""

    msg_id: str
    trip: Trip
    reply_type: str = ""  # an IOPub message that is the reply (a comm's echo)
    chunks: list[int] = field(default_factory=list)

    def read(self, kernel: KernelUnderTest) -> None:
        while True:
            message = kernel.iopub()
            if message["parent_header"].get("msg_id") != self.msg_id:
                continue
            kind = message["msg_type"]
            if kind == "status":
                state = message["content"]["execution_state"]
                if state == "busy":
                    self.trip.busy = stamp(message["header"]["date"])
                elif state == "idle":
                    self.trip.idle_received = time.time()
                    return
            elif kind == "stream":
                self.trip.outputs += 1
                self.trip.output_bytes += len(message["content"]["text"].encode())
            elif kind == self.reply_type:
                self.trip.reply_received = time.time()
                self.trip.replied = stamp(message["header"]["date"])
            elif kind == "error":
                content = message["content"]
                raise CellFailed(f"the cell raised {content['ename']}: {content['evalue']}")


def _shell_trip(kernel: KernelUnderTest, msg_id: str, trip: Trip) -> Trip:
    """A request answered on the shell channel: its reply, then IOPub to idle."""
    reply = kernel.shell_reply(msg_id)
    trip.reply_received = time.time()
    trip.replied = stamp(reply["header"]["date"])
    started = reply["metadata"].get("started")
    trip.started = stamp(started) if started else None
    content = reply["content"]
    if content.get("status") == "error":
        raise CellFailed(f"the cell raised {content.get('ename')}: {content.get('evalue')}")
    _Watch(msg_id, trip).read(kernel)
    return trip


def execute_trip(kernel: KernelUnderTest, code: str) -> Trip:
    """``code`` executed (not stored in the history), to its reply and idle status."""
    sent = time.time()
    msg_id = kernel.client.execute(code, silent=False, store_history=False)
    return _shell_trip(kernel, msg_id, Trip(sent))


def info_trip(kernel: KernelUnderTest) -> Trip:
    """``kernel_info_request``: the protocol's floor, no execution."""
    sent = time.time()
    msg_id = kernel.client.kernel_info()
    return _shell_trip(kernel, msg_id, Trip(sent))


def stream_code(count: int, size: int) -> str:
    """A cell that writes ``count`` chunks of ``size`` bytes to stdout."""
    return (
        f"import sys as _s\n_c = 'x' * {size}\n"
        f"for _ in range({count}):\n    _s.stdout.write(_c)\n_s.stdout.flush()\n"
    )


def stream_trip(kernel: KernelUnderTest, count: int, size: int) -> Trip:
    """The stream cell, its output counted as it arrives, to its idle status."""
    return execute_trip(kernel, stream_code(count, size))


class Comm:
    """A comm opened to the kernel's echo: each ``trip`` sends one message of ``size``
    bytes, in the JSON or as a binary buffer, and waits for its echo and the idle
    status."""

    def __init__(self, kernel: KernelUnderTest, size: int, buffers: bool) -> None:
        self.kernel = kernel
        self.comm_id = uuid.uuid4().hex
        self.buffers = buffers
        self.payload = b"x" * size
        execute_trip(kernel, ECHO_SETUP)
        opened = self._send("comm_open", {"target_name": ECHO_TARGET, "data": {}})
        _Watch(opened, Trip(time.time())).read(kernel)

    def _send(
        self, kind: str, content: dict[str, object], buffers: list[bytes] | None = None
    ) -> str:
        client = self.kernel.client
        message = client.session.msg(kind, {"comm_id": self.comm_id, **content})
        client.session.send(client.shell_channel.socket, message, buffers=buffers)
        return str(message["header"]["msg_id"])

    def trip(self) -> Trip:
        sent = time.time()
        if self.buffers:
            msg_id = self._send("comm_msg", {"data": {"size": len(self.payload)}}, [self.payload])
        else:
            msg_id = self._send("comm_msg", {"data": {"text": self.payload.decode()}})
        trip = Trip(sent)
        _Watch(msg_id, trip, reply_type="comm_msg").read(self.kernel)
        return trip


def start_trip(name: str, timeout: float) -> Trip:
    """A fresh kernel from its start to its first ``kernel_info_reply`` (no stages:
    the start is one), shut down after."""
    sent = time.time()
    kernel = KernelUnderTest(name, timeout)
    try:
        done = time.time()
        return Trip(sent, busy=sent, replied=done, reply_received=done, idle_received=done)
    finally:
        kernel.close()


__all__ = [
    "ECHO_SETUP",
    "ECHO_TARGET",
    "CellFailed",
    "Comm",
    "Trip",
    "execute_trip",
    "info_trip",
    "start_trip",
    "stream_code",
    "stream_trip",
]
