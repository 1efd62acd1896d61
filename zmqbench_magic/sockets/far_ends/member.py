"""One far end of a pattern (:mod:`.crowd`): a subscriber, a receiver (a ROUTER's
DEALER among them), a sender, a proxy or a client, each a socket of its own, in a
process of its own or a thread of the kernel, driven over a control socket as
:mod:`.peer`'s far end is.

Its control protocol, JSON over a PAIR socket the kernel binds and the member
connects to (a command may carry the message's frames after its JSON), is declared in
:mod:`.protocol`: :class:`.protocol.MemberReady` once its data socket is bound or
connected (a DEALER has first sent its ROUTER an empty greeting, from which the ROUTER
learns its routing id: its thread's native id, its process id in a process); then,
each sample, an order (receive, send, ping or join), :class:`.protocol.Armed`, the
loop, and its report, its first and last receive stamped on the machine's monotonic
clock (``time.perf_counter``), which every process shares.

Every receive is bounded: a member hears its kernel within ``timeout`` or leaves.

On another host (``--remote``), a far end's door (:mod:`.standing`) starts each member
with ``--listen``: it binds both sockets there, its control socket CURVE-encrypted with
the door's secret, says where on stdout, and the kernel connects to both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable

import zmq

from ..kernel.hub import greet
from ..loops.member_loops import join, ping, receive, send
from ..protocol import (
    Armed,
    CpuClock,
    Failed,
    FromMember,
    MemberLoopOrder,
    MemberReady,
    MemberReport,
    Quit,
    ReceiveFigures,
    Sent,
)
from ..secret import Keys, admit_only, as_server
from .peer import follow_parent, loop_clock

# Each member's data socket, and whether it binds (it then says where).
SOCKETS = {
    "sink": zmq.PULL,
    "subscriber": zmq.SUB,
    "source": zmq.PUSH,
    "proxy": zmq.XSUB,  # and an XPUB it binds, which its subscribers reach
    # A proxy's publisher beside the kernel's: an XPUB, so it hears a subscription
    # (passed on by the proxy) before it says ready, as the kernel's hub does.
    "publisher": zmq.XPUB,
    "client": zmq.REQ,
    "joiner": zmq.SUB,  # connects only when told to join, while its publisher sends
    "dealer": zmq.DEALER,  # a ROUTER's receiver: it greets the ROUTER, then receives
}
# The roles a far end's door starts on its host for a kernel elsewhere: those whose
# one socket the kernel's hub reaches (a proxy's subscribers reach the proxy).
HOSTED_ROLES = ("sink", "subscriber", "source", "client")
# A receiver that heard the senders are done stops after this long a silence.
QUIET_S = 0.25
_PROXY_POLL_MS = 1000
_WAKE_MS = 50


def member_sockets(
    ctx: zmq.Context, role: str, timeout: float, hwm: int, conflate: bool = False
) -> tuple[zmq.Socket, zmq.Socket]:
    """A member's control socket and data socket, every wait bounded, before they
    bind or connect; a receiver's with ``conflate`` keeps only its newest message."""
    ctrl = ctx.socket(zmq.PAIR)
    data = ctx.socket(SOCKETS[role])
    for sock in (ctrl, data):
        sock.linger = 0
        sock.sndtimeo = int(timeout * 1000)
    ctrl.rcvtimeo = int(timeout * 1000)
    # Short waits on data: a receiver looks at its control socket between them.
    data.rcvtimeo = int(QUIET_S * 1000)
    data.sndhwm = data.rcvhwm = hwm
    if role == "dealer":
        # Its ROUTER names it by this routing id: its process, or its thread (unique).
        data.routing_id = str(threading.get_native_id()).encode()
    if conflate and role in ("sink", "subscriber"):
        data.conflate = 1  # before it connects: libzmq reads it as a pipe is made
    if role in ("subscriber", "joiner"):
        data.subscribe(b"")
    return ctrl, data


def serve(
    ctx: zmq.Context,
    role: str,
    ctrl_url: str,
    data_url: str,
    bind: bool,
    timeout: float,
    hwm: int,
    proxy_url: str = "",
    nodrop: bool = False,
    conflate: bool = False,
) -> None:
    """Connect to the kernel, bind or connect the data socket, and answer commands
    until told to quit, the kernel goes silent for ``timeout`` or stops the context;
    a proxy's XPUB waits for a full subscriber's room with ``nodrop``; a receiver with
    ``conflate`` keeps only its newest message."""

    def wire(ctrl: zmq.Socket, data: zmq.Socket) -> None:
        data.ipv6 = data_url.startswith("tcp://[")  # an IPv6 endpoint needs ZeroMQ's IPv6
        ctrl.connect(ctrl_url)
        if bind:
            data.bind(data_url)
        elif role != "joiner":
            data.connect(data_url)

    _serve(ctx, role, wire, bind, timeout, hwm, proxy_url, nodrop, conflate)


def serve_at(
    ctx: zmq.Context,
    role: str,
    interface: str,
    secret: Keys | None,
    timeout: float,
    hwm: int,
    say: Callable[[str], None],
) -> None:
    """A member on another host, started by its far end's door (:mod:`.standing`) for
    a kernel there: it binds its control and data sockets on free ports of
    ``interface``, says where with ``say`` (the door passes it on), and the kernel
    connects to both, its hub to the data socket. The control socket is encrypted with
    ``secret`` and admits that secret's client alone, as the door does."""
    authenticator = admit_only(ctx, secret, lambda text: print(text, file=sys.stderr))

    def wire(ctrl: zmq.Socket, data: zmq.Socket) -> None:
        if secret is not None:
            as_server(ctrl, secret)
        ctrl.ipv6 = data.ipv6 = interface.startswith("[")
        ctrl_port = ctrl.bind_to_random_port(f"tcp://{interface}")
        data_port = data.bind_to_random_port(f"tcp://{interface}")
        say(f"member ctrl tcp://{interface}:{ctrl_port} data tcp://{interface}:{data_port}")

    try:
        _serve(ctx, role, wire, True, timeout, hwm)
    finally:
        if authenticator is not None:
            authenticator.stop()


def _serve(
    ctx: zmq.Context,
    role: str,
    wire: Callable[[zmq.Socket, zmq.Socket], None],
    bound: bool,
    timeout: float,
    hwm: int,
    proxy_url: str = "",
    nodrop: bool = False,
    conflate: bool = False,
) -> None:
    """The member's life once ``wire`` has bound or connected its sockets."""
    ctrl, data = member_sockets(ctx, role, timeout, hwm, conflate)
    try:
        wire(ctrl, data)
        if role == "dealer":
            greet(data)
        if role == "client":
            # Its loops (and numpy) load before it says ready, not after its first go:
            # the import would hold up that sample's start, and calibration count it.
            from ..loops import pair  # noqa: F401
        if role == "proxy":
            _proxy(ctx, ctrl, data, proxy_url, timeout, hwm, nodrop)
        else:
            if role == "publisher":
                data.xpub_nodrop = int(nodrop)
                _await_subscription(data, timeout)
            _send(ctrl, MemberReady(ready=os.getpid(), endpoint=_endpoint(data, bound)))
            _answer(ctrl, data, timeout)
    except (zmq.ContextTerminated, zmq.Again):
        pass  # the kernel went away or stopped us: nothing to report to
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the kernel
        with contextlib.suppress(zmq.ZMQError):
            failed = Failed(error=f"{type(exc).__name__}: {exc}")
            ctrl.send(json.dumps(failed).encode(), zmq.NOBLOCK)
    finally:
        ctrl.close(linger=0)
        data.close(linger=0)


def _await_subscription(data: zmq.Socket, timeout: float) -> None:
    """A publisher's first subscription, at most ``timeout`` (the kernel's subscribers
    joined the proxy before it started, and the proxy passes theirs on to each new
    publisher): a message published before it would be dropped."""
    if not data.poll(int(timeout * 1000)):
        raise RuntimeError(f"no subscription reached the publisher within {timeout:g} s")
    data.recv()


def _endpoint(sock: zmq.Socket, bound: bool) -> str:
    return sock.getsockopt_string(zmq.LAST_ENDPOINT) if bound else ""


def _proxy(
    ctx: zmq.Context,
    ctrl: zmq.Socket,
    front: zmq.Socket,
    url: str,
    timeout: float,
    hwm: int,
    nodrop: bool,
) -> None:
    """libzmq's own proxy (``zmq_proxy_steerable``, C with the GIL released) from the
    XSUB ``front`` to an XPUB bound at ``url``, until the kernel says quit. With
    ``nodrop`` its XPUB waits for a full subscriber's room, at most ``timeout`` (then
    the proxy stops, and says so), as libzmq's ``proxy_thr`` has it wait."""
    back = ctx.socket(zmq.XPUB)
    steer, steering = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    for sock in (back, steer, steering):
        sock.linger = 0
    back.sndhwm = back.rcvhwm = hwm
    back.sndtimeo = int(timeout * 1000)
    back.xpub_nodrop = int(nodrop)
    # Every subscriber's subscription goes upstream, so the publisher can count them.
    back.xpub_verbose = 1
    # Publishers beside the kernel's connect here (--publishers); bound after the XSUB
    # connected to the kernel's hub, so this is its last endpoint.
    front.bind(_front_url(url))
    lane = f"inproc://zmqbench-steer-{id(steer)}"
    steer.bind(lane)
    steering.connect(lane)
    proxy = threading.Thread(
        target=_run_proxy, args=(front, back, steer), name="zmqbench-proxy", daemon=True
    )
    try:
        back.bind(url)
        proxy.start()
        _send(
            ctrl,
            MemberReady(
                ready=os.getpid(),
                endpoint=back.getsockopt_string(zmq.LAST_ENDPOINT),
                front=front.getsockopt_string(zmq.LAST_ENDPOINT),
            ),
        )
        # It is told nothing while it forwards, however long the run: it waits without
        # a timeout (a process of its own still ends with the kernel: exit_with_parent).
        while not ctrl.poll(_PROXY_POLL_MS) or json.loads(ctrl.recv())["cmd"] != "quit":
            if not proxy.is_alive():
                raise RuntimeError("the proxy stopped forwarding")
    finally:
        if proxy.is_alive():
            with contextlib.suppress(zmq.ZMQError):  # a terminated context ends it too
                steering.send(b"TERMINATE")
            proxy.join(timeout)
        for sock in (back, steer, steering):
            sock.close(linger=0)


def _front_url(back_url: str) -> str:
    """Where a proxy's XSUB binds, beside its XPUB's ``back_url``: another free port of
    the same address, or the same name with ``-in``."""
    return back_url if back_url.endswith(":*") else f"{back_url}-in"


def _run_proxy(front: zmq.Socket, back: zmq.Socket, steer: zmq.Socket) -> None:
    with contextlib.suppress(zmq.ContextTerminated):
        zmq.proxy_steerable(front, back, None, steer)


def _answer(ctrl: zmq.Socket, data: zmq.Socket, timeout: float) -> None:
    while True:
        _await_order(ctrl, data, timeout)
        command, *frames = ctrl.recv_multipart()
        order: MemberLoopOrder | Sent | Quit = json.loads(command)
        if order["cmd"] == "quit":
            return
        if order["cmd"] == "sent":
            continue  # the word that came after this receiver had its whole share
        if order.get("loop") == "native":
            # Built or loaded before it says armed: never inside a timed sample.
            from ..loops import native

            native.library()
        _send(ctrl, Armed(armed=True))
        with loop_clock() as (clock, counted):
            done, attached = _carry_out(ctrl, data, order, frames, timeout, clock, counted)
        ctrl.send_multipart([json.dumps(done).encode(), *attached])


def _await_order(ctrl: zmq.Socket, data: zmq.Socket, timeout: float) -> None:
    """Wait for the kernel's next order, at most ``timeout``, while the data socket
    takes in its own commands. A socket handles those (a new connection among them)
    only inside a call on it: a SUB that binds, as a subscriber on another host does,
    sends its subscription to a PUB that connects only then (libzmq #2267; pyzmq
    #1650), and the kernel waits for every subscription before it orders anything."""
    deadline = time.monotonic() + timeout
    while not ctrl.poll(_WAKE_MS):
        data.getsockopt(zmq.EVENTS)
        if time.monotonic() > deadline:
            raise zmq.Again  # as its receive would: the kernel is gone


def _carry_out(
    ctrl: zmq.Socket,
    data: zmq.Socket,
    order: MemberLoopOrder,
    frames: list[bytes],
    timeout: float,
    clock: Callable[[], float],
    counted: CpuClock,
) -> tuple[MemberReport, list[bytes]]:
    """One armed command's loop: its report (with the CPU it took, counted by the
    ``counted`` clock) and the frames that go after it."""
    if order["cmd"] == "join":
        cpu_start = clock()
        joined = join(data, order, notice=lambda: _heard_sent(ctrl), timeout=timeout)
        return {**joined, "cpu_s": clock() - cpu_start, "cpu_clock": counted}, []
    if order["cmd"] == "receive":
        cpu_start = clock()
        received = receive(data, order, notice=lambda: _heard_sent(ctrl), timeout=timeout)
        attached: list[bytes] = []
        if "bitmap" in received:
            attached = [received.pop("bitmap")]  # bytes: a frame of its own, never JSON
        attached += received.pop("reads", [])  # each read's stamp and time, after it
        figures: ReceiveFigures = received  # what is left for the JSON
        return {**figures, "cpu_s": clock() - cpu_start, "cpu_clock": counted}, attached
    _await_go(ctrl)
    cpu_start = clock()
    if order["cmd"] == "ping":
        pinged, attached = ping(ctrl, data, order, frames, timeout)
        return {**pinged, "cpu_s": clock() - cpu_start, "cpu_clock": counted}, attached
    sent = send(data, order, frames, timeout)
    return {**sent, "cpu_s": clock() - cpu_start, "cpu_clock": counted}, []


def _await_go(ctrl: zmq.Socket) -> None:
    if json.loads(ctrl.recv())["cmd"] != "go":
        raise RuntimeError("a member armed to send was told something other than go")


def _heard_sent(ctrl: zmq.Socket) -> bool:
    """Whether the kernel has said every sender is done (it says nothing else then)."""
    if not ctrl.poll(0):
        return False
    order = json.loads(ctrl.recv())
    if order["cmd"] != "sent":
        raise RuntimeError(f"a receiver was told {order['cmd']!r} while it received")
    return True


def _send(ctrl: zmq.Socket, message: FromMember) -> None:
    ctrl.send(json.dumps(message).encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=sorted(SOCKETS), required=True)
    parser.add_argument("--ctrl", default="", help="control endpoint to connect to")
    parser.add_argument("--data", default="", help="data endpoint")
    parser.add_argument("--bind", action="store_true", help="bind the data endpoint")
    parser.add_argument(
        "--listen", default="", help="bind both sockets on this interface, say where on stdout"
    )
    parser.add_argument(
        "--secret-stdin", action="store_true", help="with --listen: the secret, on stdin"
    )
    parser.add_argument("--proxy", default="", help="a proxy's XPUB endpoint to bind")
    parser.add_argument(
        "--nodrop", action="store_true", help="a proxy's XPUB, or a publisher, waits when full"
    )
    parser.add_argument(
        "--conflate", action="store_true", help="a receiver keeps its newest message only"
    )
    parser.add_argument("--timeout", type=float, required=True, help="seconds")
    parser.add_argument("--hwm", type=int, required=True, help="data high-water mark")
    parser.add_argument("--io-threads", type=int, default=1, help="the context's")
    parser.add_argument("--parent", type=int, required=True, help="exit when it is gone")
    args = parser.parse_args(argv)
    if not args.listen and not (args.ctrl and args.data):
        parser.error("give --ctrl and --data, or --listen")
    follow_parent(args.parent)
    ctx = zmq.Context(io_threads=args.io_threads)
    try:
        if args.listen:
            secret = Keys.from_json(sys.stdin.readline()) if args.secret_stdin else None
            serve_at(
                ctx,
                args.role,
                args.listen,
                secret,
                args.timeout,
                args.hwm,
                say=lambda text: print(text, flush=True),
            )
        else:
            serve(
                ctx,
                args.role,
                args.ctrl,
                args.data,
                args.bind,
                args.timeout,
                args.hwm,
                args.proxy,
                args.nodrop,
                args.conflate,
            )
    finally:
        ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
