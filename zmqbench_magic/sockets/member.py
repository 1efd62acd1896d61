"""One far end of a pattern (:mod:`.crowd`): a subscriber, a receiver, a sender, a
proxy or a client, each a socket of its own, in a process of its own or a thread of
the kernel, driven over a control socket as :mod:`.peer`'s far end is.

Control protocol (JSON over a PAIR socket; the kernel binds, the member connects; a
command may carry the message's frames after its JSON):

* member -> ``{"ready": pid, "endpoint": url}`` once its data socket is bound or
  connected (``endpoint``: where it bound, for the kernel to pass on);
* kernel -> ``{"cmd": "receive", "expect": n, "copy": bool, "frames": k, "loop": ...}``
  -> ``{"armed": true}``; the member receives until ``expect`` messages came, or,
  ``expect`` 0 (a share it cannot know) or short of it, until the kernel's
  ``{"cmd": "sent"}`` and then a silence; then ``{"received": m, "first": t0, "last":
  t1, "late": l, "cpu_s": c, "cpu_clock": ...}``, its first and last receive stamped
  on the machine's monotonic clock (``time.perf_counter``), which every process shares;
  with ``"numbered": {"senders": [i, ...], "count": n}`` (``--sequence true``) it reads
  each message's stamp (:mod:`.numbering`) and adds ``"gaps"``, ``"missed"``,
  ``"first_lost"`` and ``"reordered"``, and, its share unknown, its bitmap as a frame;
* kernel -> ``{"cmd": "send", "count": n, "copy": bool, "loop": ...}`` + frames ->
  ``{"armed": true}``; kernel -> ``{"cmd": "go"}``; member sends, then ``{"sent": n,
  "elapsed": s, "burst": b, "burst_elapsed": s, "cpu_s": c, "cpu_clock": ...}``; with
  ``"sender": i`` each message stamped with ``i`` and its number;
* kernel -> ``{"cmd": "ping", "count": n, "copy": bool, "loop": ...}`` + frames ->
  ``{"armed": true}``; kernel -> ``{"cmd": "go"}``; the client (a REQ) makes ``n``
  round trips back to back, then ``{"pinged": n, "first": t0, "last": t1, "cpu_s": c,
  "cpu_clock": ...}`` + one frame: each round trip's seconds as float64 bytes (numpy's
  ``tobytes``; a JSON list would cost more to make and read than the loop it reports);
* kernel -> ``{"cmd": "quit"}``; any error goes back as ``{"error": text}``.

Every receive is bounded: a member hears its kernel within ``timeout`` or leaves.

On another host (``--remote``), a far end's door (:mod:`.standing`) starts each member
with ``--listen``: it binds both sockets there, its control socket CURVE-encrypted with
the door's secret, says where on stdout, and the kernel connects to both.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import zmq

from .numbering import Tally, receive_numbered_native, receive_numbered_python, send_numbered_range
from .peer import follow_parent, loop_clock
from .secret import Keys, admit_only, as_server
from .timing import two_phases

# Each member's data socket, and whether it binds (it then says where).
SOCKETS = {
    "sink": zmq.PULL,
    "subscriber": zmq.SUB,
    "source": zmq.PUSH,
    "proxy": zmq.XSUB,  # and an XPUB it binds, which its subscribers reach
    "client": zmq.REQ,
}
# The roles a far end's door starts on its host for a kernel elsewhere: those whose
# one socket the kernel's hub reaches (a proxy's subscribers reach the proxy).
HOSTED_ROLES = ("sink", "subscriber", "source", "client")
# A receiver that heard the senders are done stops after this long a silence.
QUIET_S = 0.25
_PROXY_POLL_MS = 1000
_WAKE_MS = 50


def member_sockets(
    ctx: zmq.Context, role: str, timeout: float, hwm: int
) -> tuple[zmq.Socket, zmq.Socket]:
    """A member's control socket and data socket, every wait bounded, before they
    bind or connect."""
    ctrl = ctx.socket(zmq.PAIR)
    data = ctx.socket(SOCKETS[role])
    for sock in (ctrl, data):
        sock.linger = 0
        sock.sndtimeo = int(timeout * 1000)
    ctrl.rcvtimeo = int(timeout * 1000)
    # Short waits on data: a receiver looks at its control socket between them.
    data.rcvtimeo = int(QUIET_S * 1000)
    data.sndhwm = data.rcvhwm = hwm
    if role == "subscriber":
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
) -> None:
    """Connect to the kernel, bind or connect the data socket, and answer commands
    until told to quit, the kernel goes silent for ``timeout`` or stops the context;
    a proxy's XPUB waits for a full subscriber's room with ``nodrop``."""

    def wire(ctrl: zmq.Socket, data: zmq.Socket) -> None:
        data.ipv6 = data_url.startswith("tcp://[")  # an IPv6 endpoint needs ZeroMQ's IPv6
        ctrl.connect(ctrl_url)
        if bind:
            data.bind(data_url)
        else:
            data.connect(data_url)

    _serve(ctx, role, wire, bind, timeout, hwm, proxy_url, nodrop)


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
) -> None:
    """The member's life once ``wire`` has bound or connected its sockets."""
    ctrl, data = member_sockets(ctx, role, timeout, hwm)
    try:
        wire(ctrl, data)
        if role == "client":
            # Its loops (and numpy) load before it says ready, not after its first go:
            # the import would hold up that sample's start, and calibration count it.
            from . import loops  # noqa: F401
        if role == "proxy":
            _proxy(ctx, ctrl, data, proxy_url, timeout, hwm, nodrop)
        else:
            _send(ctrl, {"ready": os.getpid(), "endpoint": _endpoint(data, bound)})
            _answer(ctrl, data, timeout)
    except (zmq.ContextTerminated, zmq.Again):
        pass  # the kernel went away or stopped us: nothing to report to
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the kernel
        with contextlib.suppress(zmq.ZMQError):
            ctrl.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode(), zmq.NOBLOCK)
    finally:
        ctrl.close(linger=0)
        data.close(linger=0)


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
    lane = f"inproc://zmqbench-steer-{id(steer)}"
    steer.bind(lane)
    steering.connect(lane)
    proxy = threading.Thread(
        target=_run_proxy, args=(front, back, steer), name="zmqbench-proxy", daemon=True
    )
    try:
        back.bind(url)
        proxy.start()
        _send(ctrl, {"ready": os.getpid(), "endpoint": back.getsockopt_string(zmq.LAST_ENDPOINT)})
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


def _run_proxy(front: zmq.Socket, back: zmq.Socket, steer: zmq.Socket) -> None:
    with contextlib.suppress(zmq.ContextTerminated):
        zmq.proxy_steerable(front, back, None, steer)


def _answer(ctrl: zmq.Socket, data: zmq.Socket, timeout: float) -> None:
    while True:
        _await_order(ctrl, data, timeout)
        command, *frames = ctrl.recv_multipart()
        order = json.loads(command)
        if order["cmd"] == "quit":
            return
        if order["cmd"] == "sent":
            continue  # the word that came after this receiver had its whole share
        if order.get("loop") == "native":
            # Built or loaded before it says armed: never inside a timed sample.
            from . import native

            native.library()
        _send(ctrl, {"armed": True})
        with loop_clock() as (clock, counted):
            done, attached = _carry_out(ctrl, data, order, frames, timeout, clock)
            done["cpu_clock"] = counted
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
    order: dict[str, Any],
    frames: list[bytes],
    timeout: float,
    clock: Callable[[], float],
) -> tuple[dict[str, Any], list[bytes]]:
    """One armed command's loop: its report (with the CPU it took) and the frames that
    go after it."""
    attached: list[bytes] = []
    if order["cmd"] == "receive":
        cpu_start = clock()
        done = receive(data, order, notice=lambda: _heard_sent(ctrl), timeout=timeout)
        if "bitmap" in done:
            attached = [done.pop("bitmap")]  # bytes: a frame of its own, never JSON
    else:
        _await_go(ctrl)
        cpu_start = clock()
        if order["cmd"] == "ping":
            done, attached = ping(ctrl, data, order, frames, timeout)
        else:
            done = send(data, order, frames)
    done["cpu_s"] = clock() - cpu_start
    return done, attached


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


def receive(
    data: zmq.Socket, order: dict[str, Any], notice: Callable[[], bool], timeout: float
) -> dict[str, Any]:
    """Receive ``order["expect"]`` messages, or, short of them (a share unknown, or
    messages dropped), until ``notice()`` says every sender is done and a silence
    follows; a silence of ``timeout`` with no notice is the senders' failure.

    With ``order["numbered"]`` (``--sequence true``: the senders it hears and their
    count) each message's stamp is read, and the report adds the gaps, the numbers
    missed and the first of them, and how many came out of order
    (:class:`.numbering.Tally`); where its share is unknown, its bitmap too."""
    native = order.get("loop") == "native"
    loop: Callable[[zmq.Socket, int, bool, int], tuple[int, float, float]]
    loop = _receive_native if native else _receive_python
    tally = Tally.of(order["numbered"]) if order.get("numbered") else None
    if tally is not None:
        numbered = receive_numbered_native if native else receive_numbered_python
        loop = partial(numbered, tally=tally)
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
        late = _drain(data)  # anything after the silence is not the next sample's
    report: dict[str, Any] = {"received": received, "first": first, "last": last, "late": late}
    if tally is not None:
        report |= tally.figures()
        if not order["expect"]:
            report["bitmap"] = tally.bitmap(0)  # the hub's numbers, shared with others
    return report


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


def _drain(data: zmq.Socket, quiet_ms: int = 200) -> int:
    late = 0
    while data.poll(quiet_ms):
        data.recv_multipart(copy=False)
        late += 1
    return late


def send(data: zmq.Socket, order: dict[str, Any], frames: list[bytes]) -> dict[str, Any]:
    """Send ``order["count"]`` messages of ``frames``; time the first ``burst`` (the
    sender's own queue holds them: the send-only rate) and all of them. With
    ``order["sender"]`` (``--sequence true``) each message is stamped with this
    sender's index and its number (:mod:`.numbering`)."""
    count, burst, copy = order["count"], order["burst"], order["copy"]
    data.copy_threshold = order["copy_threshold"]
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


def _send_native(data: zmq.Socket, message: bytes, copy: bool, count: int) -> None:
    from . import native

    lib = native.library()
    left = count
    while left:
        went = lib.zb_send(data.underlying, message, len(message), left, int(not copy))
        left -= native.check(lib, went)


class _Client:
    """A client's side as the round-trip loops (:func:`.loops._ping`) ask for it: its
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
    ctrl: zmq.Socket, data: zmq.Socket, order: dict[str, Any], frames: list[bytes], timeout: float
) -> tuple[dict[str, Any], list[bytes]]:
    """A client's ``order["count"]`` round trips, back to back, each timed: its report,
    and the round trips' seconds as one float64 frame."""
    import numpy as np

    from .loops import _ping, _ping_native

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
    report = {"pinged": count, "first": float(stamps[0]), "last": float(stamps[-1])}
    return report, [np.diff(stamps).astype(np.float64).tobytes()]


def _send(ctrl: zmq.Socket, message: dict[str, Any]) -> None:
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
    parser.add_argument("--nodrop", action="store_true", help="a proxy's XPUB waits when full")
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
            )
    finally:
        ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
