"""The driver's side of a benchmark: its sockets and the far end they reach.

A :class:`Link` owns one ZeroMQ context, the bound data and control sockets, and
one far end (:mod:`zmqbench_magic.sockets.far_ends.peer`) in a child process or a thread, or a
session of a standing far end on another host (:mod:`.standing`), which it asks for at
that far end's door. Closing
it — on success, error, timeout or ``KeyboardInterrupt``, and at interpreter exit
for any still open — leaves no process, thread, socket, context or ipc file behind.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from typing import Any, NoReturn, cast

import zmq
from zmq.utils.monitor import recv_monitor_message

from ...method.pinning import pin_this_thread
from ...params.address import split_address
from ...params.common import START_FLOOR_S
from ...params.far_end import SECRET_FILE
from ..far_ends import peer as peer_module
from ..far_ends.peer import PeerError
from ..protocol import QUIT, DoorAnswer, DoorOpen, Failed, FromPeer, PeerReport, ToPeer
from ..secret import HANDSHAKE_FAILED, Keys, as_client, as_server
from .processes import far_end_env, start_module

DATA_SOCKET = {"sink": zmq.PUSH, "echo": zmq.REQ, "route": zmq.DEALER}
_LIVENESS_POLL_MS = 100
# The data sockets' send/receive timeout: how long a stalled loop waits before it
# looks whether the far end is still there (then waits again, up to ``timeout``).
LIVENESS_S = 0.25
_STOP_GRACE_S = 2.0
# A far end stopped in a hurry (an error or an interrupt is on its way to the user) is
# given this long to quit before it is terminated: one busy with a sample reads no
# command until the sample ends or its own timeout passes, and would hold the user's
# Ctrl-C for the whole grace.
_HURRIED_QUIT_S = 0.2
# A far end whose connection has just dropped is seen to have exited within this (its
# exit closes its sockets before it ends); not the timeout, which a far end waiting
# on a silent driver spends before it leaves on its own.
_EXIT_SEEN_S = 1.0
_open_links: weakref.WeakSet[Link] = weakref.WeakSet()
_inproc_ids = itertools.count()


class Link:
    """Bound sockets plus a running far end, for one transport and one peer kind.

    Parameters
    ----------
    role : "sink" (PUSH -> PULL throughput), "echo" (REQ -> REP latency) or "route"
        (DEALER -> ROUTER, latency under load).
    transport : "tcp", "ipc" or "inproc".
    peer : "process" or "thread".
    address : tcp interface (and optional port) to bind.
    timeout : seconds to wait for any one reply, send or stop, and for the far end's
        start (at least ``START_FLOOR_S``).
    hwm : high-water mark of both data sockets.

    Example
    -------
    >>> from zmqbench_magic.sockets.protocol import PeerOrder
    >>> with Link("echo", "tcp", "process", "127.0.0.1", 5.0, 1000) as link:
    ...     link.command(PeerOrder(cmd="echo", count=1, copy=True, frames=1, loop="python"))
    ...     link.data.send(b"x"); link.data.recv()
    ...     link.reply()["echoed"]
    1
    """

    def __init__(
        self,
        role: str,
        transport: str,
        peer: str,
        address: str,
        timeout: float,
        hwm: int,
        *,
        curve: Keys | None = None,
        remote: str = "",
        secret: Keys | None = None,
        cpus: set[int] | frozenset[int] = frozenset(),
        io_threads: int = 1,
    ) -> None:
        self.role, self.transport, self.peer, self.timeout = role, transport, peer, timeout
        self.cpus = set(cpus)  # the far end's, with --cpu; empty: not pinned
        self.hwm, self.remote, self.curve = hwm, remote, curve  # curve: data path keys
        self.ipv6 = False
        self.exit_code: int | None = None
        self.pinned: bytes | None = None  # the native loop's payload (loops.native_bytes)
        self.io_threads = io_threads
        self.ctx = zmq.Context(io_threads=io_threads)
        self._tempdir: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._remote_pid = 0
        _open_links.add(self)
        try:
            self.ctrl = self._socket(zmq.PAIR)
            # Short waits, so a dead far end is noticed within a fraction of a second.
            self.data = self._socket(DATA_SOCKET[role], min(timeout, LIVENESS_S))
            self.data.sndhwm = self.data.rcvhwm = hwm
            if remote:
                self._remote_pid = _open_session(self, secret)
            else:
                if curve is not None:
                    as_server(self.data, curve)
                ctrl_url, data_url = self._bind(address)
                self._start_peer(ctrl_url, data_url, hwm)
            self.reply(max(timeout, START_FLOOR_S))  # {"ready": pid}
        except BaseException:
            self.close(hurry=True)
            raise

    def __enter__(self) -> Link:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self.close(hurry=kind is not None)
        if kind is None and self._process is not None and self.exit_code != 0:
            # Its samples were taken by a far end that then failed: not to be trusted.
            how = "had to be killed" if self.exit_code is None else how_it_ended(self.exit_code)
            raise PeerError(f"the {self.describe()} did not end cleanly ({how})")

    @property
    def copy_threshold(self) -> int:
        """pyzmq's ``copy_threshold`` of the data socket (the sends' own)."""
        return int(self.data.copy_threshold)

    @copy_threshold.setter
    def copy_threshold(self, value: int) -> None:
        self.data.copy_threshold = value

    def _socket(self, kind: int, wait_s: float | None = None) -> zmq.Socket:
        sock = self.ctx.socket(kind)
        sock.linger = 0
        sock.sndtimeo = sock.rcvtimeo = int((wait_s or self.timeout) * 1000)
        return sock

    def check_stall(self, since: float) -> None:
        """A data loop has made no progress since ``since`` (``time.monotonic()``):
        ``PeerError`` if the far end is gone, ``TimeoutError`` once that has lasted
        ``timeout``; otherwise return, and the loop waits again."""
        if not self.alive():
            raise self._failure("exited")
        if time.monotonic() - since > self.timeout:
            raise self._failure(f"did not answer within {self.timeout:g} s", TimeoutError)

    def _bind(self, address: str) -> tuple[str, str]:
        if self.transport == "tcp":
            ctrl_port = self.ctrl.bind_to_random_port("tcp://127.0.0.1")
            return f"tcp://127.0.0.1:{ctrl_port}", self._bind_tcp_data(address)
        if self.transport == "ipc":
            self._tempdir = tempfile.mkdtemp(prefix="zmqbench-")
            urls = [f"ipc://{self._tempdir}/{name}" for name in ("ctrl", "data")]
        else:
            number = next(_inproc_ids)
            urls = [f"inproc://zmqbench-{os.getpid()}-{number}-{n}" for n in ("ctrl", "data")]
        self.ctrl.bind(urls[0])
        self.data.bind(urls[1])
        return urls[0], urls[1]

    def _bind_tcp_data(self, address: str) -> str:
        where = split_address(address)
        if where.ipv6:
            self.data.ipv6 = True  # ZeroMQ binds IPv6 only when asked to
            self.ipv6 = True
        try:
            if where.port is not None:
                self.data.bind(f"tcp://{where.bind_host}:{where.port}")
                port = where.port
            else:
                port = self.data.bind_to_random_port(f"tcp://{where.bind_host}")
        except zmq.ZMQError as exc:
            msg = (
                f"cannot bind tcp address {address!r}: {exc}; give an address of one of this "
                "machine's interfaces, optionally with a free port (e.g. 127.0.0.1:5555)"
            )
            raise ValueError(msg) from None
        return f"tcp://{where.connect_host}:{port}"

    def _start_peer(self, ctrl_url: str, data_url: str, hwm: int) -> None:
        args = (self.role, ctrl_url, data_url, self.timeout, hwm, self.curve)
        if self.peer == "thread":
            self._thread = threading.Thread(
                target=_pinned_serve,
                args=(self.cpus, self.ctx, *args),
                name="zmqbench-peer",
                daemon=True,
            )
            self._thread.start()
            return
        self._process = start_module(
            "zmqbench_magic.sockets.far_ends.peer",
            (
                *("--role", self.role, "--ctrl", ctrl_url, "--data", data_url),
                *("--timeout", str(self.timeout), "--hwm", str(hwm)),
                *("--io-threads", str(self.io_threads), "--parent", str(os.getpid())),
            ),
            env=far_end_env(self._keys_env()),
            cpus=self.cpus,
        )

    def _keys_env(self) -> dict[str, str]:
        """An encrypted data path's keys, for a far end in its own process."""
        return {} if self.curve is None else {peer_module.CURVE_KEYS_ENV: self.curve.to_json()}

    def describe(self) -> str:
        where = f"remote, {self.remote}" if self.remote else self.peer
        return f"{self.transport} {self.role} peer ({where})"

    def command(self, message: ToPeer) -> None:
        """Send one control message to the far end, waiting at most ``timeout`` for it
        to take it and noticing at once if the far end has ended."""
        deadline = time.monotonic() + self.timeout
        while not self.ctrl.poll(_LIVENESS_POLL_MS, zmq.POLLOUT):
            if not self.alive():
                raise self._failure("ended before it took a command")
            if time.monotonic() > deadline:
                raise self._failure("did not accept a command")
        self.ctrl.send(json.dumps(message).encode(), zmq.NOBLOCK)

    def reply(self, timeout: float | None = None) -> FromPeer:
        """The far end's next control message, waiting at most ``timeout`` seconds and
        noticing at once if the far end dies."""
        wait_s = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait_s
        while not self.ctrl.poll(_LIVENESS_POLL_MS):
            if not self.alive():
                raise self._failure("exited")
            if time.monotonic() > deadline:
                raise self._failure(f"did not answer within {wait_s:g} s", TimeoutError)
        message: FromPeer | Failed = json.loads(self.ctrl.recv())
        if "error" in message:
            raise self._failure(f"failed: {cast(Failed, message)['error']}")
        return message

    def report(self, timeout: float | None = None) -> PeerReport:
        """The far end's report, its next message once armed (:meth:`reply`): a
        :class:`.protocol.SinkReport` from a sink, an :class:`.protocol.EchoReport` from
        an echo or a ROUTER."""
        return cast(PeerReport, self.reply(timeout))

    @property
    def far_end_id(self) -> int:
        """Which far end took a sample: its process id, or its thread's native id."""
        if self._process is not None:
            return self._process.pid
        if self.remote:
            return self._remote_pid
        return self._thread.native_id or 0 if self._thread is not None else 0

    @property
    def ipc_dir(self) -> str | None:
        """The private folder of an ipc link's endpoints (removed by :meth:`close`)."""
        return self._tempdir

    def pids(self) -> list[int]:
        """The far end's process, for CPU accounting (none for a thread peer)."""
        return [self._process.pid] if self._process is not None else []

    def name_lost_request(self, error: zmq.ZMQError) -> NoReturn:
        """Raise what a REQ socket's EFSM (``error``) in a data loop means. libzmq drops
        a request whose connection dies between its frames, yet reports the send as done
        without moving the socket on to await the reply (socket_base's ``-2`` case), so
        the next receive fails with EFSM. The connection died with the far end: once it
        is seen gone, ``PeerError`` names it; a far end still there a moment later
        leaves ``error`` itself, since then the loop, not the far end, is at fault."""
        deadline = time.monotonic() + _EXIT_SEEN_S
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.alive():
            raise error
        raise self._failure("exited") from error

    def alive(self) -> bool:
        if self.remote:
            return True  # only its silence, bounded by the timeout, can tell
        if self._process is not None:
            return self._process.poll() is None
        return self._thread is not None and self._thread.is_alive()

    def _failure(self, what: str, kind: type[Exception] = PeerError) -> Exception:
        detail = ""
        if self._process is not None and self._process.poll() is not None:
            detail = f" ({how_it_ended(self._process.returncode)}{stderr_tail(self._process)})"
        return kind(f"the {self.describe()} {what}{detail}")

    def close(self, hurry: bool = False) -> None:
        """Stop the far end and release everything; safe to call more than once. In a
        ``hurry`` (:func:`stop_process`), a far end is not waited out."""
        if self.ctx.closed:
            return
        if self.alive():
            # Not reachable? It is stopped below all the same.
            with contextlib.suppress(zmq.ZMQError, AttributeError):
                self.ctrl.send(json.dumps(QUIT).encode(), zmq.NOBLOCK)
        if self._process is not None:
            self.exit_code = stop_process(self._process, hurry)
        for sock in (getattr(self, "ctrl", None), getattr(self, "data", None)):
            if sock is not None:
                sock.close(linger=0)
        # Terminating the context makes a thread peer's blocking calls return at once.
        self.ctx.term()
        if self._thread is not None:
            self._thread.join(_STOP_GRACE_S)
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
        _open_links.discard(self)


def _open_session(link: Link, secret: Keys | None) -> int:
    """Ask the standing far end at ``link.remote`` for a session in ``link``'s role,
    connect ``link``'s sockets to it, and return its process id."""
    request = DoorOpen(role=link.role, hwm=link.hwm, curve=link.curve is not None)
    answer = ask_door(link.ctx, link.remote, secret, request, link.timeout)
    if secret is not None:
        as_client(link.ctrl, secret)
    if link.curve is not None:
        as_client(link.data, link.curve)
    link.data.ipv6 = link.ctrl.ipv6 = "[" in answer["data"]
    link.ctrl.connect(answer["ctrl"])
    link.data.connect(answer["data"])
    return int(answer["pid"])


def ask_door(
    ctx: zmq.Context, url: str, secret: Keys | None, request: DoorOpen, timeout: float
) -> DoorAnswer:
    """Ask the standing far end at ``url`` to open what ``request`` says (a pair's
    session, or a pattern's peer); its answer: where the control and data sockets
    listen, and the process id. Names a refused handshake, a silence or a refusal."""
    door = ctx.socket(zmq.REQ)
    door.linger = 0
    try:
        if secret is not None:
            as_client(door, secret)
        watch = door.get_monitor_socket(HANDSHAKE_FAILED)
        door.connect(url)
        door.send(json.dumps(request | DoorOpen(cmd="open", timeout=timeout)).encode())
        answered = _answer_or_refusal(door, watch, timeout)
        door.disable_monitor()
        watch.close(linger=0)
        if answered is None:
            msg = (
                f"the far end at {url} refused this client: the CURVE handshake "
                f"failed, so the two sides do not hold the same secret ({SECRET_FILE.option})"
            )
            raise PeerError(msg)
        if not answered:
            refused = "refusing this client's secret, " if secret is not None else ""
            msg = (
                f"the far end at {url} did not answer within {timeout:g} s (not "
                f"running, {refused}busy with another run, or unreachable)"
            )
            raise TimeoutError(msg)
        answer: DoorAnswer | Failed = json.loads(door.recv())
    finally:
        door.close(linger=0)
    if "error" in answer:
        raise ValueError(f"the far end at {url} refused the run: {cast(Failed, answer)['error']}")
    return DoorAnswer(ctrl=answer["ctrl"], data=answer["data"], pid=int(answer["pid"]))


def _answer_or_refusal(door: zmq.Socket, watch: zmq.Socket, timeout: float) -> bool | None:
    """True once the door answers, False after ``timeout`` of silence, None as soon as
    the far end refuses the handshake (a different secret)."""
    poller = zmq.Poller()
    poller.register(door, zmq.POLLIN)
    poller.register(watch, zmq.POLLIN)
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready = dict(poller.poll(int(left * 1000) + 1))
        if door in ready:
            return True
        if watch in ready:
            recv_monitor_message(watch)
            return None
    return False


def _pinned_serve(cpus: set[int], *args: Any) -> None:
    """A far end's thread: on its CPUs (with --cpu) before it serves."""
    pin_this_thread(cpus)
    peer_module.serve(*args)


def stderr_tail(process: subprocess.Popen[bytes]) -> str:
    """``: `` and the last line an ended far end's process wrote to stderr ("" if none)."""
    assert process.stderr is not None
    text = process.stderr.read().decode(errors="replace").strip()
    return f": {text.splitlines()[-1]}" if text else ""


def how_it_ended(code: int) -> str:
    """``exit code 3``, or ``killed by signal 9 (SIGKILL)``."""
    if code >= 0:
        return f"exit code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = "unknown"
    return f"killed by signal {-code} ({name})"


def stop_process(process: subprocess.Popen[bytes], hurry: bool = False) -> int | None:
    """Wait for the far end to quit (kill it if it will not); its exit code, or None
    when it had to be killed. In a ``hurry`` it is given :data:`_HURRIED_QUIT_S`, then
    terminated (SIGTERM's default ends it at once; the driver removes the ipc files)."""
    try:
        code: int | None = process.wait(_HURRIED_QUIT_S if hurry else _STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        code = None
    if code is None and hurry:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = process.wait(_STOP_GRACE_S)
    if code is None:
        process.kill()
        process.wait(_STOP_GRACE_S)
    if process.stderr is not None:
        process.stderr.close()
    return code


@atexit.register
def _close_open_links() -> None:
    for link in list(_open_links):
        link.close(hurry=True)  # left open: its run was abandoned
