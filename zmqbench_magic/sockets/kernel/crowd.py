"""The far ends of a pattern: N subscribers, receivers, senders or pairs, and a proxy,
or N clients, each a socket of its own (:mod:`.member`), in processes of their own or
threads of the kernel, wired to the kernel's one socket, the hub (``--pattern``,
``--peers``; ``--clients``).

The side of a pattern that has one socket is the kernel's, as in the pipeline's
one-to-one run: it publishes (``pubsub``, ``proxy``), pushes (``pipeline``), pulls
(``fanin``) or serves (``clients``: a ROUTER answering N REQ clients); the side of N
sockets is the far ends'. ``pairs`` has no one side: both ends of each pair are far
ends, and the kernel only arms and times them.

Closing a :class:`Crowd`, on success, error, timeout or ``KeyboardInterrupt``, and at
interpreter exit for any still open, leaves no process, thread, socket, context or
ipc file behind.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from typing import cast

import zmq

from ...params.address import split_address
from ...params.common import START_FLOOR_S
from ...params.patterns import PATTERNS, Pattern
from ..far_ends import member as member_module
from ..far_ends.peer import PeerError
from ..protocol import QUIT, Failed, FromMember, MemberOrder, MemberReady, MemberReport
from ..secret import Door
from .hub import RoutedSocket, await_joined
from .link import how_it_ended, stderr_tail, stop_process
from .starting import Member, start_elsewhere, start_here

_STOP_GRACE_S = 2.0
_POLL_MS = 100
_QUIT_LINGER_MS = 1000
_open_crowds: weakref.WeakSet[Crowd] = weakref.WeakSet()
_names = itertools.count()


class Crowd:
    """The hub and the far ends of one pattern at one transport, peer kind and size.

    Parameters
    ----------
    pattern : a :class:`...params.patterns.Pattern` record, or its name (``"pubsub"``;
        ``"clients"``: latency's N clients).
    peers : how many subscribers, receivers, senders, pairs or clients.
    transport, peer, address, timeout, hwm : as for :class:`.link.Link`.
    io_threads : each ZeroMQ context's I/O threads (one context per process).
    nodrop : the hub's publisher, and a proxy's, waits for a full subscriber's room
        (ZMQ_XPUB_NODROP); ``publishers``: a proxy's publishers, the hub and N - 1 far
        ends beside it (as libzmq's proxy_thr has two); ``conflate``: each receiver
        keeps its newest message only;
        ``mandatory``: the hub's ROUTER waits for a full receiver's room, and a gone
        receiver is an error (ZMQ_ROUTER_MANDATORY).
    doors : standing far ends on other hosts (``--remote``), each a URL and its
        secret: the far ends are dealt among them in turn, each started there by its
        host's door, bound on that host, with the hub connecting to it.

    Example
    -------
    >>> with Crowd("pubsub", 2, "tcp", "process", "127.0.0.1", 5.0, 1000) as crowd:
    ...     [m.role for m in crowd.receivers]
    ['subscriber', 'subscriber']
    """

    def __init__(
        self,
        pattern: Pattern | str,
        peers: int,
        transport: str,
        peer: str,
        address: str,
        timeout: float,
        hwm: int,
        *,
        io_threads: int = 1,
        nodrop: bool = False,
        publishers: int = 1,
        conflate: bool = False,
        mandatory: bool = False,
        cpus: set[int] | frozenset[int] = frozenset(),
        doors: Sequence[Door] = (),
    ) -> None:
        self.pattern = pattern if isinstance(pattern, Pattern) else PATTERNS[pattern]
        self.peers, self.transport, self.peer = peers, transport, peer
        self.timeout, self.hwm, self.io_threads = timeout, hwm, io_threads
        self.nodrop, self.conflate, self.mandatory = nodrop, conflate, mandatory
        self.publishers = publishers
        self.cpus = set(cpus)
        self.doors = list(doors)
        self.remote = ", ".join(url for url, _ in self.doors)
        self.pinned: bytes | None = None  # the native loop's payload (loops.native_bytes)
        self.copy_threshold = zmq.COPY_THRESHOLD
        self.ctx = zmq.Context(io_threads=io_threads)
        self.members: list[Member] = []
        self.data: zmq.Socket | None = None  # the hub
        self.hub_url = ""  # where it is bound, for a subscriber that joins later
        self._tempdir: str | None = None
        self._address = address
        _open_crowds.add(self)
        try:
            self._start()
        except BaseException:
            self.close(hurry=True)
            raise

    def __enter__(self) -> Crowd:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        codes = self.close(hurry=kind is not None)
        failed = [(m, c) for m, c in codes if c != 0]
        if kind is None and failed:
            who, code = failed[0]
            how = "had to be killed" if code is None else how_it_ended(code)
            raise PeerError(f"the {self.describe()}'s {who.name} did not end cleanly ({how})")

    # Who sends and who receives -------------------------------------------------
    @property
    def senders(self) -> list[Member]:
        return [m for m in self.members if m.role in ("source", "publisher")]

    @property
    def receivers(self) -> list[Member]:
        return [m for m in self.members if m.role in ("sink", "subscriber", "joiner", "dealer")]

    @property
    def clients(self) -> list[Member]:
        return [m for m in self.members if m.role == "client"]

    @property
    def hub_sends(self) -> bool:
        return self.pattern.hub_sends

    def expected_each(self, count: int) -> int:
        """How many messages each receiving far end should get, 0 where its share
        cannot be known (a PUSH shares its messages among its N receivers, and a ROUTER
        deals them in the order their greetings came)."""
        if self.pattern.dealt:
            return count if self.peers == 1 else 0
        return count * self.publishers

    def expected_total(self, count: int) -> int:
        """Every message that should arrive, all receivers together."""
        if self.pattern.dealt:
            return count
        return count * self.peers * self.publishers

    # Starting -------------------------------------------------------------------
    def _start(self) -> None:
        hub = self._start_hub()
        if self.pattern.through_proxy:
            (proxy,) = self._spawn([("proxy", "proxy", hub, False, self._url("proxy-out"))])
            hub = proxy.endpoint
        numbers = range(1, self.peers + 1)
        if self.pattern.in_pairs:  # each receiver binds, its sender connects to it
            sinks = self._spawn(
                [("sink", f"pair {i} receiver", self._url(f"pair-{i}"), True, "") for i in numbers]
            )
            self._spawn(
                [("source", f"pair {i} sender", sinks[i - 1].endpoint, False, "") for i in numbers]
            )
            return
        role, name = self.pattern.member, self.pattern.member_name
        started = self._spawn([(role, name.format(i), hub, False, "") for i in numbers])
        if self.pattern.joined_first:
            self._await_joined(started)
        if self.publishers > 1:
            # Each hears the subscriptions the proxy passes on before it says ready.
            (proxy,) = (m for m in self.members if m.role == "proxy")
            beside = range(2, self.publishers + 1)
            self._spawn([("publisher", f"publisher {i}", proxy.front, False, "") for i in beside])

    def _start_hub(self) -> str:
        """The hub's socket, bound (its URL, for the far ends to connect to; "" where
        they bind, on other hosts, and the hub connects to each); "" for pairs."""
        if not self.pattern.hub:
            return ""
        kind = getattr(zmq, self.pattern.hub)
        routed = self.pattern.routed  # a server (clients) answers whom it heard
        self.data = self._socket(kind, RoutedSocket if routed else None)
        self.data.rcvtimeo = int(member_module.QUIET_S * 1000)
        self.data.sndtimeo = int(min(self.timeout, 0.25) * 1000)
        if kind == zmq.XPUB:
            self.data.xpub_verbose = 1
            self.data.xpub_nodrop = int(self.nodrop)
        if routed:
            self.data.router_mandatory = int(self.mandatory)
        self.hub_url = "" if self.doors else self._bind(self.data, "hub")
        return self.hub_url

    def _socket(self, kind: int, socket_class: type[zmq.Socket] | None = None) -> zmq.Socket:
        sock = self.ctx.socket(kind, socket_class)
        sock.linger = 0
        sock.sndhwm = sock.rcvhwm = self.hwm
        return sock

    def _url(self, name: str) -> str:
        """An endpoint for a socket to bind: a free port of 127.0.0.1 (the hub: of the
        address asked for), a file of a private folder, or an inproc name."""
        if self.transport == "tcp":
            return "tcp://127.0.0.1:*"
        if self.transport == "ipc":
            if self._tempdir is None:
                self._tempdir = tempfile.mkdtemp(prefix="zmqbench-")
            return f"ipc://{self._tempdir}/{name}"
        return f"inproc://zmqbench-{os.getpid()}-{next(_names)}-{name}"

    def _bind(self, sock: zmq.Socket, name: str) -> str:
        if self.transport != "tcp":
            url = self._url(name)
            sock.bind(url)
            return url
        where = split_address(self._address)
        sock.ipv6 = where.ipv6
        port = where.port if where.port is not None else "*"
        try:
            sock.bind(f"tcp://{where.bind_host}:{port}")
        except zmq.ZMQError as exc:
            msg = f"cannot bind tcp address {self._address!r}: {exc}"
            raise ValueError(msg) from None
        # Where the far ends connect: the address's own host (a wildcard's: loopback).
        bound_port = sock.getsockopt_string(zmq.LAST_ENDPOINT).rsplit(":", 1)[1]
        return f"tcp://{where.connect_host}:{bound_port}"

    def _spawn(self, plans: list[tuple[str, str, str, bool, str]]) -> list[Member]:
        """Start one far end per ``(role, name, data url, bind, proxy url)``, all at
        once (:mod:`.starting`), and wait until each has said it is ready."""
        if self.doors:
            started = start_elsewhere(self, [(role, name) for role, name, *_ in plans])
            for member in started:
                member.endpoint = self._ready(member)["endpoint"]
            return started
        started = [start_here(self, *plan) for plan in plans]
        for member in started:
            ready = self._ready(member)
            member.endpoint, member.pid = ready["endpoint"], ready["ready"]
            member.front = ready.get("front", "")
        return started

    def _ready(self, member: Member) -> MemberReady:
        """``member``'s first message, once it has started: where it is."""
        return cast(MemberReady, self.reply(member, max(self.timeout, START_FLOOR_S)))

    def _await_joined(self, dealers: Sequence[Member] = ()) -> None:
        """Wait until every subscription (ZeroMQ's "slow joiner": a message published
        before it would be dropped), or every DEALER's greeting, has reached the hub;
        a ROUTER then knows each receiver's routing id."""
        assert self.data is not None
        wait = max(self.timeout, START_FLOOR_S)
        routes = await_joined(self.data, self.peers, wait, self._check_alive, self.describe())
        if isinstance(self.data, RoutedSocket):
            self.data.routes, self.data.turn = routes, 0
            # Greetings come in any order: a receiver is named by its own (its pid).
            by_pid = {str(m.far_end_id).encode(): m.name for m in dealers}
            self.data.names = {route: by_pid.get(route, "a receiver") for route in routes}

    # Talking to the far ends ----------------------------------------------------
    def command(
        self, member: Member, message: MemberOrder, attached: tuple[bytes, ...] = ()
    ) -> None:
        """Send ``member`` one command, with ``attached`` frames (a sender's message),
        noticing at once if any far end dies while it waits."""
        frames = [json.dumps(message).encode(), *attached]
        deadline = time.monotonic() + self.timeout
        while True:
            self._check_alive()
            try:
                member.ctrl.send_multipart(frames)
                return
            except zmq.Again:
                if time.monotonic() > deadline:
                    raise self._failure(member, "did not accept a command") from None

    def reply(self, member: Member, timeout: float | None = None) -> FromMember:
        """``member``'s next control message, within ``timeout``, noticing at once if
        any far end dies."""
        wait_s = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait_s
        while not member.ctrl.poll(_POLL_MS):
            self._check_alive()
            if time.monotonic() > deadline:
                raise self._failure(member, f"did not answer within {wait_s:g} s", TimeoutError)
        command, *member.attached = member.ctrl.recv_multipart()
        message: FromMember | Failed = json.loads(command)
        if "error" in message:
            raise self._failure(member, f"failed: {cast(Failed, message)['error']}")
        return message

    def report(self, member: Member, timeout: float | None = None) -> MemberReport:
        """``member``'s report, its next message once armed (:meth:`reply`): a
        receiver's :class:`.protocol.ReceiveReport` (a joiner's
        :class:`.protocol.JoinReport`), a sender's :class:`.protocol.SendReport`, a
        client's :class:`.protocol.PingReport`."""
        return cast(MemberReport, self.reply(member, timeout))

    def arm(
        self, members: list[Member], order: MemberOrder, attached: tuple[bytes, ...] = ()
    ) -> None:
        """Give each of ``members`` one loop's ``order`` (with ``attached`` frames, a
        sender's message) and wait until each says it is armed; their reports to come
        are cleared."""
        for member in members:
            member.report = None
            self.command(member, order, attached)
            self.reply(member)  # armed

    @property
    def cpu_clock(self) -> Callable[[], float]:
        """The kernel's CPU clock in a sample, as one pair's driver's (loops.cpu_clock):
        the whole process beside far ends of their own, else this thread."""
        return time.process_time if self.peer == "process" else time.thread_time

    def reported(self, member: Member) -> bool:
        """Whether ``member``'s report has come (kept in ``member.report``); no wait."""
        if member.report is None and member.ctrl.poll(0):
            member.report = self.report(member)
        return member.report is not None

    def check_stall(self, since: float, stalled: str = "did not take a message") -> None:
        """As :meth:`.link.Link.check_stall`, for the hub's loop (``stalled``: what the
        far ends did not do, in words)."""
        self._check_alive()
        if time.monotonic() - since > self.timeout:
            msg = f"the {self.describe()} {stalled} for {self.timeout:g} s"
            raise TimeoutError(msg)

    def _check_alive(self) -> None:
        for member in self.members:
            if not member.alive():
                raise self._failure(member, "exited")

    def alive(self) -> bool:
        return all(m.alive() for m in self.members)

    def _failure(self, member: Member, what: str, kind: type[Exception] = PeerError) -> Exception:
        detail = ""
        if member.process is not None and member.process.poll() is not None:
            detail = f" ({how_it_ended(member.process.returncode)}{stderr_tail(member.process)})"
        return kind(f"the {self.describe()}'s {member.name} {what}{detail}")

    def describe(self) -> str:
        where = "processes" if self.peer == "process" else "threads"
        if self.doors:
            where = f"processes on {len(self.doors)} other host{'s' * (len(self.doors) > 1)}"
        if self.pattern.serves:
            return f"{self.transport} server of {self.peers} clients (in {where})"
        publishers = f" from {self.publishers} publishers" if self.publishers > 1 else ""
        name = self.pattern.name
        return f"{self.transport} {name} of {self.peers} peers{publishers} (in {where})"

    @property
    def far_end_id(self) -> int:
        return self.members[0].far_end_id if self.members else 0

    def pids(self) -> list[int]:
        return [m.process.pid for m in self.members if m.process is not None]

    @property
    def ipc_dir(self) -> str | None:
        return self._tempdir

    # Stopping -------------------------------------------------------------------
    def close(self, hurry: bool = False) -> list[tuple[Member, int | None]]:
        """Stop every far end and release everything; each process's exit code (None:
        killed). Safe to call more than once. In a ``hurry`` (an error or an interrupt
        on its way), a far end is not waited out (:func:`.link.stop_process`)."""
        if self.ctx.closed:
            return []
        for member in self.members:
            if member.alive():
                with contextlib.suppress(zmq.ZMQError):
                    member.ctrl.send(json.dumps(QUIT).encode(), zmq.NOBLOCK)
        codes = [(m, stop_process(m.process, hurry)) for m in self.members if m.process is not None]
        self._close_sockets()
        # Terminating the context makes the threads' blocking calls return at once.
        self.ctx.term()
        for member in self.members:
            if member.thread is not None:
                member.thread.join(_STOP_GRACE_S)
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
        _open_crowds.discard(self)
        return codes

    def _close_sockets(self) -> None:
        if self.data is not None:
            self.data.close(linger=0)
        for member in self.members:
            # A quit that crosses a network gets a moment to go, else that far end
            # waits out its timeout before it leaves (the context's end waits this long).
            member.ctrl.close(linger=_QUIT_LINGER_MS if member.host else 0)


@atexit.register
def _close_open_crowds() -> None:
    for crowd in list(_open_crowds):
        crowd.close(hurry=True)  # left open: its run was abandoned


__all__ = ["Crowd", "Member"]
