"""One point of a ZeroMQ run's sweep: the settings a sweep can vary (those declared
here, and the size, the security, the queue mark, the pattern and the pressure declared
beside their rules), and :class:`SocketPoint`, the typed record that carries one
combination of them from the sweep to the loops and back into a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import zmq

from .common import SIZE
from .declare import Param
from .far_end import CURVE
from .interpreter import KERNEL
from .memory import HWM
from .patterns import CLIENTS, CLIENTS_SERVED, PATTERN, PEERS, PIPELINE, Pattern, pattern_of
from .point_record import PointRecord
from .pressure import CONFLATE, IDLE, RATE, WORK
from .units import GiB

TRANSPORTS = ("tcp", "ipc", "inproc")

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
COPY = Param(
    "copy", True, "send and receive with copy=True (true) or zero-copy copy=False (false)",
    "copy", "bool", choices=(True, False), sweep=True, labels=("copy", "zero-copy"),
)
TRANSPORT = Param(
    "transport", "tcp", "ZeroMQ transport: tcp (127.0.0.1), ipc (private temp dir), inproc",
    "transport", "choice", choices=TRANSPORTS, sweep=True, short="t",
)
PEER = Param(
    "peer", "auto",
    "where the far end runs: process (a separate Python process, so the kernel's GIL "
    "does not distort the figure), thread (both ends in this process), or auto "
    "(process for tcp/ipc, thread for inproc, which requires it)",
    "far end", "choice", choices=("auto", "process", "thread"), sweep=True,
    phrase="peer {}",
)
LOOP = Param(
    "loop", "python",
    "the language of both ends' hot loops: python (pyzmq calls, as in pyzmq's perf.py), "
    "asyncio (the driver awaits each send and receive on zmq.asyncio sockets, on an "
    "event loop of its own; the far end is python's) or native (C over the same libzmq, "
    "sockets and options, with the GIL released; built once with the machine's C "
    "compiler)",
    "loop", "choice", choices=("python", "asyncio", "native"), sweep=True, phrase="{} loop",
)
IO_THREADS = Param(
    "io_threads", 1,
    "I/O threads of each ZeroMQ context (zmq.Context(io_threads=N)): this process's "
    "and every far end's",
    "I/O threads", "int", low=1, high=64, sweep=True, phrase="{} I/O thread|{} I/O threads",
)
COPY_THRESHOLD = Param(
    "copy_threshold", zmq.COPY_THRESHOLD,
    "pyzmq's Socket.copy_threshold: zero-copy sends of messages smaller than this are "
    "copied anyway (pyzmq's default is zmq.COPY_THRESHOLD)",
    "copy threshold", "size", unit="B", low=0, high=1 * GiB, sweep=True,
    phrase="copy threshold {} B",
)
PYTHON = Param(
    "python", KERNEL,
    "the interpreter that runs both ends of an arm, each with its own pyzmq and libzmq "
    "(zmqbench env builds them): several values compare environments in one run, in "
    "interleaved rounds; NAME=PATH names an arm",
    "Python environment", "interpreter", sweep=True,
)
# fmt: on


def resolve_peer(transport: str, peer: str) -> str:
    """The far end actually used: inproc can only reach a thread of the same process."""
    if peer == "auto":
        return "thread" if transport == "inproc" else "process"
    if transport == "inproc" and peer == "process":
        msg = (
            "peer process cannot be used with transport inproc: inproc only connects "
            "sockets of one process; use peer thread (or auto)"
        )
        raise ValueError(msg)
    return peer


@dataclass(frozen=True, eq=False)
class SocketPoint(PointRecord):
    """One point of a ZeroMQ sweep, as the loops read it: every setting a sweep can
    vary, typed, each one its declaration's default unless the point sets it; as a
    mapping, the settings the run names (:class:`.point_record.PointRecord`).

    >>> point = SocketPoint.of({"size": 100, "transport": "ipc"})
    >>> point.size, point.loop, dict(point)
    (100, 'python', {'size': 100, 'transport': 'ipc'})
    """

    size: int = SIZE.default
    copy: bool = COPY.default
    transport: str = TRANSPORT.default
    peer: str = PEER.default
    loop: str = LOOP.default
    copy_threshold: int = COPY_THRESHOLD.default
    io_threads: int = IO_THREADS.default
    curve: bool = CURVE.default
    python: str = PYTHON.default
    hwm: int | str = HWM.default
    pattern: str = PATTERN.default
    peers: int = PEERS.default
    rate: float = RATE.default
    work: float = WORK.default
    conflate: bool = CONFLATE.default
    idle: float = IDLE.default
    clients: int = CLIENTS.default

    called = "a ZeroMQ point"

    @property
    def many_ends(self) -> bool:
        """Whether the far ends are a pattern's many, not the one-to-one pipeline's."""
        return pattern_of(self.pattern) is not PIPELINE or self.peers > 1

    @property
    def many_clients(self) -> bool:
        """Whether a latency point has N clients on one server, not one REQ/REP pair."""
        return self.clients > 1

    @property
    def under_pressure(self) -> bool:
        """Whether a throughput point paces its sender or slows its receivers."""
        return bool(self.rate or self.work)

    def crowd_shape(self, as_pattern: bool = False) -> tuple[Pattern, int] | None:
        """The many far ends as a :class:`..sockets.kernel.crowd.Crowd` takes them (the
        pattern, or latency's clients, and their N); None for the one far end of a pair.
        With ``as_pattern`` (numbered messages, an offered rate or working receivers of
        a throughput run) the one-to-one pipeline too is a pattern, of one receiver, so
        that one loop numbers, paces and works for every pattern."""
        if self.many_clients:
            return CLIENTS_SERVED, self.clients
        if self.many_ends or as_pattern:
            return pattern_of(self.pattern), self.peers
        return None

    def crowd_words(self) -> str:
        """``pubsub 4 peers``, ``joiner``, ``16 clients``; "" for a pair."""
        shape = self.crowd_shape()
        return shape[0].words(shape[1]) if shape else ""

    def far_role(self, role: str) -> str:
        """The far end's role here: an offered rate needs the open loop's ROUTER."""
        return "route" if self.rate else role


# Every setting a ZeroMQ point can set, in the record's order.
SETTINGS = SocketPoint.settings_of_a_point()

# How a point is put into words: the settings each description names where the point
# departs from the default, in its order, each in its declared phrase (departures).
# As a run goes (its progress, its warnings): "tcp 1k B copy (peer process, <these>)"
SAID_BESIDE_THE_PEER = (LOOP, IO_THREADS, CURVE, HWM, CONFLATE, PYTHON)
# ... and after the brackets: "at 10k msgs/s offered after 1 ms idle".
SAID_AFTER_THE_PEER = (RATE, IDLE)
# In a summary's line, after the transport, size, copy mode and crowd.
SAID_IN_A_SUMMARY = (IO_THREADS, COPY_THRESHOLD, LOOP, PYTHON, RATE, IDLE, WORK, HWM, CONFLATE)
