"""A standing far end on another host (``zmqbench peer --bind tcp://ADDR:PORT``), as
libzmq's ``local_thr`` is: it serves runs, one at a time, until stopped.

Its door is a REP socket at the bound address. A driver asks it to ``open`` a session
for a role; it binds a control and a data socket on free ports of the same interface
and answers where (the driver's side of the door is :class:`~.link.Link`'s); the
session then speaks the far end's usual protocol (:mod:`.peer`) with the far end bound
and the driver connecting, until the driver quits or falls silent for the timeout.
Timing needs no synchronised clocks: throughput is timed at this end (the receiver),
latency at the driver.

With a secret (:mod:`.secret`) the door and every control channel are CURVE
encrypted and a ZAP handler admits only the secret's client key: the handshake of a
driver without it fails, which that driver names at once (it watches its door's
handshake), and this end logs the refusal and keeps serving. The data path is
encrypted too when the driver asks (``--curve``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import zmq
from zmq.utils.monitor import recv_monitor_message

from ...method.piped import read_until
from ...params.address import is_loopback_url
from ...params.far_end import CURVE, SECRET_FILE
from ..kernel.link import stop_process
from ..kernel.processes import far_end_env, start_module
from ..malloc import steady_malloc
from ..protocol import DoorAnswer, DoorOpen, Failed
from ..secret import HANDSHAKE_FAILED, Keys, admit_only, as_server
from . import member, peer

_DOOR_POLL_MS = 200


def serve_forever(
    bind: str,
    secret: Keys | None,
    *,
    say: Callable[[str], None],
    stop: threading.Event,
    timeout: float = 60.0,
) -> None:
    """Serve sessions at ``bind`` until ``stop`` is set (or Ctrl-C), saying where it
    listens, then each session and each refusal, with ``say``."""
    if secret is None and not is_loopback_url(bind):
        msg = f"a far end listening beyond loopback ({bind}) needs {SECRET_FILE.option}"
        raise ValueError(msg)
    ctx = zmq.Context()
    authenticator = admit_only(ctx, secret, say)
    door = ctx.socket(zmq.REP)
    door.linger = 0
    # Refused handshakes (another secret) are said, at most once a second.
    watch = door.get_monitor_socket(HANDSHAKE_FAILED)
    refusals = _Refusals(say)
    members: list[subprocess.Popen[bytes]] = []  # a pattern's peers it started
    try:
        if secret is not None:
            as_server(door, secret)
        try:
            door.bind(bind)
        except zmq.ZMQError as exc:
            raise ValueError(f"cannot listen on {bind}: {exc}") from None
        endpoint = door.getsockopt_string(zmq.LAST_ENDPOINT)
        guard = "CURVE, this secret's clients only" if secret else "no secret: loopback only"
        say(f"zmqbench peer listening on {endpoint} ({guard}); Ctrl-C stops it")
        interface = endpoint.removeprefix("tcp://").rsplit(":", 1)[0]
        runs = 0
        poller = zmq.Poller()
        poller.register(door, zmq.POLLIN)
        poller.register(watch, zmq.POLLIN)
        while not stop.is_set():
            members[:] = [m for m in members if m.poll() is None]
            ready = dict(poller.poll(_DOOR_POLL_MS))
            if watch in ready:
                recv_monitor_message(watch)
                refusals.add()
            if door not in ready:
                continue
            runs += 1
            members += _serve_one(ctx, door, json.loads(door.recv()), interface, secret, runs, say)
    finally:
        for started in members:
            started.terminate()  # idle between runs, or its kernel gone: it ends at once
            stop_process(started)
        door.disable_monitor()
        watch.close(linger=0)
        door.close(linger=0)
        if authenticator is not None:
            authenticator.stop()
        ctx.term()


class _Refusals:
    """Says refused handshakes, counting those within a second of the last said."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say, self.said_at, self.unsaid = say, 0.0, 0

    def add(self) -> None:
        self.unsaid += 1
        if time.monotonic() - self.said_at >= 1.0:
            times = f" ({self.unsaid} attempts)" if self.unsaid > 1 else ""
            self.say(f"refused a client{times}: the CURVE handshake failed (not this secret)")
            self.said_at, self.unsaid = time.monotonic(), 0


def _exit_when_stdin_closes() -> None:
    sys.stdin.read()
    os._exit(0)  # mid-run too: whatever it held goes with the process


def _serve_one(
    ctx: zmq.Context,
    door: zmq.Socket,
    request: DoorOpen,
    interface: str,
    secret: Keys | None,
    number: int,
    say: Callable[[str], None],
) -> list[subprocess.Popen[bytes]]:
    """Open the session asked for, answer where it is, and serve it to its end; or,
    for a pattern's peer, start it and answer where it is (the process started)."""
    if request.get("member"):
        return _open_member(door, request, interface, secret, number, say)
    if request.get("cmd") != "open" or request.get("role") not in peer.ROLES:
        _refuse(door, f"not a zmqbench request: {request}")
        return []
    if request["curve"] and secret is None:
        refusal = f"{CURVE.option} needs a far end started with a secret"
        _refuse(door, refusal)
        return []
    ctrl, data = peer.sockets(ctx, request["role"], request["timeout"], request["hwm"])
    if secret is not None:
        as_server(ctrl, secret)
        if request["curve"]:
            as_server(data, secret)
    ctrl_port = ctrl.bind_to_random_port(f"tcp://{interface}")
    data_port = data.bind_to_random_port(f"tcp://{interface}")
    where = DoorAnswer(
        ctrl=f"tcp://{interface}:{ctrl_port}",
        data=f"tcp://{interface}:{data_port}",
        pid=os.getpid(),
    )
    door.send(json.dumps(where).encode())
    started = time.monotonic()
    say(f"run {number}: {request['role']} session on {where['data']}")
    peer.session(ctrl, data)
    say(f"run {number}: done after {time.monotonic() - started:.1f} s")
    return []


def _refuse(door: zmq.Socket, why: str) -> None:
    """Answer a request at the door with why it is refused."""
    door.send(json.dumps(Failed(error=why)).encode())


_MEMBER_AT = re.compile(rb"member ctrl (tcp://\S+) data (tcp://\S+)")


def _open_member(
    door: zmq.Socket,
    request: DoorOpen,
    interface: str,
    secret: Keys | None,
    number: int,
    say: Callable[[str], None],
) -> list[subprocess.Popen[bytes]]:
    """Start one peer of a pattern (:mod:`.member`) in a process of its own for the
    kernel asking, and answer where it listens (the process, in a list: none when it
    could not start); it serves while this far end does, and
    ends when the kernel says quit, falls silent for the timeout, or this far end ends.
    Unlike a pair's session, it does not hold the door: a pattern's N peers on this
    host open one after another and run together."""
    role = request.get("role")
    if role not in member.HOSTED_ROLES:
        refusal = f"a peer's role must be one of {', '.join(member.HOSTED_ROLES)}, got {role!r}"
        _refuse(door, refusal)
        return []
    process = start_module(
        "zmqbench_magic.sockets.far_ends.member",
        (
            *("--role", role, "--listen", interface, "--timeout", str(request["timeout"])),
            *("--hwm", str(request["hwm"]), "--parent", str(os.getpid())),
            *(["--secret-stdin"] if secret is not None else []),
        ),
        env=far_end_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
    )
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.write(secret.to_json().encode() + b"\n" if secret is not None else b"")
        process.stdin.close()
    try:
        found = read_until(process, _MEMBER_AT, request["timeout"])
    except TimeoutError:
        found = None
    if found is None:
        stop_process(process)
        refusal = f"its {role} did not start within {request['timeout']:g} s (see its log)"
        _refuse(door, refusal)
        return []
    ctrl, data = (url.decode() for url in found.groups())
    door.send(json.dumps(DoorAnswer(ctrl=ctrl, data=data, pid=process.pid)).encode())
    say(f"run {number}: a pattern's {role} on {data}")
    return [process]


def main(bind: str, secret: Keys | None, *, over_ssh: bool = False) -> int:
    """``zmqbench peer``: serve until Ctrl-C or SIGTERM. ``over_ssh``: started by a
    driver over SSH (:mod:`.remote`): the secret comes on stdin, the far end listens on
    the address the SSH connection came in on, and it ends the moment stdin closes
    (the driver stopped it, or its kernel died and took the SSH session with it)."""
    import signal

    steady_malloc()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if over_ssh:
        secret = Keys.from_json(sys.stdin.readline())
        bind = f"tcp://{os.environ['SSH_CONNECTION'].split()[2]}:0"
        threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()
    try:
        serve_forever(bind, secret, say=lambda text: print(text, flush=True), stop=stop)
    except KeyboardInterrupt:
        pass
    except ValueError as exc:
        print(f"zmqbench peer: {exc}", file=sys.stderr)
        return 2
    return 0
