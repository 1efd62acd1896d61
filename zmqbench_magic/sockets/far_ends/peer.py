"""The far end of a benchmark: a PULL sink, a REP echo (closed loop) or a ROUTER echo
(open loop, many requests in flight) driven over a control socket.

It runs either as a separate process (``python -m zmqbench_magic.sockets.far_ends.peer``) so the
kernel's GIL does not distort the figure, or as a thread of the kernel (needed for
inproc). The same :func:`serve` loop does both.

Its control protocol, JSON over a PAIR socket the driver binds and the peer connects
to, is declared in :mod:`.protocol`: :class:`.protocol.Ready` once both sockets are
connected; then, each sample, a :class:`.protocol.PeerOrder`, :class:`.protocol.Armed`,
the data, and its report (a sink's from its first to its last receive, with the CPU
this end spent in its loop); :data:`.protocol.QUIT` ends it.

Every receive is bounded by ``timeout``; a sink that stops hearing messages reports
how many it got (libzmq can drop messages over ipc) instead of waiting forever.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

import zmq

from ..protocol import (
    Armed,
    CpuClock,
    CpuUse,
    EchoFigures,
    Failed,
    FromPeer,
    PeerReport,
    Ready,
    SinkFigures,
    ToPeer,
)
from ..secret import Keys, as_client

ROLES = {"sink": zmq.PULL, "echo": zmq.REP, "route": zmq.ROUTER}


class PeerError(RuntimeError):
    """The far end died, hung, reported an error or refused this client: one exception
    type for every kind of far end (a process, a thread, a standing one, one over SSH)."""


_PARENT_POLL_S = 0.2
CURVE_KEYS_ENV = "ZMQBENCH_CURVE_KEYS"


def serve(
    ctx: zmq.Context,
    role: str,
    ctrl_url: str,
    data_url: str,
    timeout: float,
    hwm: int,
    keys: Keys | None = None,
) -> None:
    """Connect to the driver and answer its commands until told to quit.

    ``hwm`` is the data socket's high-water mark (it must be set before connecting);
    with ``keys`` the data path is encrypted (CURVE, the driver being the server).

    Returns quietly when the context is terminated (the driver's way of stopping a
    thread peer) or when the driver stops talking for ``timeout`` seconds.
    """
    ctrl, data = sockets(ctx, role, timeout, hwm)
    if keys is not None:
        as_client(data, keys)
    data.ipv6 = data_url.startswith("tcp://[")  # an IPv6 endpoint needs ZeroMQ's IPv6
    try:
        ctrl.connect(ctrl_url)
        data.connect(data_url)
    except zmq.ZMQError:
        ctrl.close(linger=0)
        data.close(linger=0)
        raise
    session(ctrl, data)


def sockets(ctx: zmq.Context, role: str, timeout: float, hwm: int) -> tuple[zmq.Socket, zmq.Socket]:
    """A far end's control socket and its data socket for ``role``, every wait bounded
    by ``timeout``, before they bind or connect."""
    ctrl = ctx.socket(zmq.PAIR)
    data = ctx.socket(ROLES[role])
    timeout_ms = int(timeout * 1000)
    for sock in (ctrl, data):
        sock.linger = 0
        sock.rcvtimeo = timeout_ms
        sock.sndtimeo = timeout_ms
    data.rcvhwm = data.sndhwm = hwm
    if role == "route":
        # A ROUTER drops a reply whose queue is full (libzmq counts a queue's room
        # lazily, so that can happen below the high-water mark): wait for room instead.
        data.router_mandatory = 1
    return ctrl, data


def session(ctrl: zmq.Socket, data: zmq.Socket) -> None:
    """Say ready, answer the driver's commands until it quits, goes silent for the
    timeout or stops the context; report any failure to it; close both sockets."""
    try:
        _send(ctrl, Ready(ready=os.getpid()))
        _answer_commands(ctrl, data)
    except zmq.ContextTerminated:
        pass  # the driver stopped a thread far end: nothing to report to
    except zmq.Again:
        _say_why(f"no message on the data socket within {int(data.rcvtimeo) / 1000:g} s")
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the driver
        _report_error(ctrl, f"{type(exc).__name__}: {exc}")
    finally:
        ctrl.close(linger=0)
        data.close(linger=0)


def _say_why(reason: str) -> None:
    """Why a far end leaves on its own, when its driver went silent (maybe gone, maybe
    stalled): the last line of a process far end's stderr, which a driver still there
    quotes. A thread far end says nothing: its stderr is the user's cell."""
    if threading.current_thread() is threading.main_thread():
        print(reason, file=sys.stderr)


def _answer_commands(ctrl: zmq.Socket, data: zmq.Socket) -> None:
    while True:
        try:
            command: ToPeer = json.loads(ctrl.recv())
        except zmq.Again:
            _say_why(f"no command within {int(ctrl.rcvtimeo) / 1000:g} s")
            return
        if command["cmd"] == "quit":
            return
        loop = _LOOPS[command["cmd"], command.get("loop", "python")]
        _send(ctrl, Armed(armed=True))
        with loop_clock() as (clock, counted):
            cpu_start = clock()
            done = loop(data, command["count"], command["copy"], command["frames"])
            report = _report(done, CpuUse(cpu_s=clock() - cpu_start, cpu_clock=counted))
        _send(ctrl, report)


def _report(done: SinkFigures | EchoFigures, used: CpuUse) -> PeerReport:
    """A loop's figures and the CPU it took: the sample's report."""
    if "echoed" not in done:
        return {**done, **used}
    return {**cast(EchoFigures, done), **used}


@contextlib.contextmanager
def loop_clock() -> Iterator[tuple[Callable[[], float], CpuClock]]:
    """A far end's CPU clock for one loop, and what it counts, with no garbage
    collection inside the loop, as on the driver's side. The clock is the whole
    process's where the end has one of its own (ZeroMQ's I/O thread works for it),
    else this thread's (the driver counts its own); a thread far end shares the
    driver's interpreter, whose own loop has turned collection off already."""
    own_process = threading.current_thread() is threading.main_thread()
    if own_process:
        gc.disable()
    try:
        if own_process:
            yield time.process_time, "process"
        else:
            yield time.thread_time, "thread"
    finally:
        if own_process:
            gc.enable()


def _sink(
    data: zmq.Socket, count: int, copy: bool, frames: int, now: Any = time.perf_counter
) -> SinkFigures:
    """Receive ``count`` messages; time first to last receive, as libzmq's local_thr.

    If messages are lost (libzmq can drop them over ipc), the receive times out: the
    sample is still timed first to *last* receive (not including the silence that
    showed the loss), and anything that arrives after the timeout is drained and
    counted as ``late`` so it cannot be taken for the next sample's messages."""
    receive: Any = data.recv if frames == 1 else data.recv_multipart
    try:
        receive(copy=copy)
    except zmq.Again:
        return {"received": 0, "elapsed": 0.0}
    first = now()
    received = 1
    try:
        for _ in range(count - 1):
            receive(copy=copy)
            received += 1
    except zmq.Again:
        # Messages were lost: report what arrived rather than wait forever. The last
        # receive returned one receive timeout ago (no clock read per message: it
        # would slow the very loop being timed).
        last = now() - int(data.rcvtimeo) / 1000
        return {"received": received, "elapsed": last - first, "late": drain(data)}
    return {"received": received, "elapsed": now() - first}


def _sink_native(data: zmq.Socket, count: int, copy: bool, frames: int) -> SinkFigures:
    """As :func:`_sink`, in C: every receive is stamped, so a lossy sample's last
    receive is exact."""
    from ..loops import native

    lib = native.library()
    first, last = ctypes.c_double(), ctypes.c_double()
    received = native.check(
        lib, lib.zb_sink(data.underlying, count, ctypes.byref(first), ctypes.byref(last))
    )
    if received == 0:
        return {"received": 0, "elapsed": 0.0}
    done: SinkFigures = {"received": received, "elapsed": last.value - first.value}
    return done if received == count else done | {"late": drain(data)}


def _echo_native(data: zmq.Socket, count: int, copy: bool, frames: int) -> EchoFigures:
    """As :func:`_echo`, in C; a silence longer than the receive timeout ends it."""
    return _echo_in_c("zb_echo", data, count, copy)


def _echo_in_c(loop: str, data: zmq.Socket, count: int, copy: bool) -> EchoFigures:
    """Run the C echo ``loop`` (``zb_echo`` or ``zb_route``) for ``count`` requests."""
    from ..loops import native

    lib = native.library()
    echoed = native.check(lib, getattr(lib, loop)(data.underlying, count, int(not copy)))
    if echoed < count:
        # As the Python loop's receive would: the requests stopped coming.
        raise zmq.Again()
    return {"echoed": echoed}


def drain(data: zmq.Socket, quiet_ms: int = 200) -> int:
    """Receive whatever is still on its way until ``quiet_ms`` pass in silence."""
    late = 0
    while data.poll(quiet_ms):
        data.recv_multipart(copy=False)
        late += 1
    return late


def _echo(data: zmq.Socket, count: int, copy: bool, frames: int) -> EchoFigures:
    """Send back each of ``count`` requests unchanged."""
    receive: Any
    reply: Any
    if frames == 1:
        receive, reply = data.recv, data.send
    else:
        receive, reply = data.recv_multipart, data.send_multipart
    for _ in range(count):
        reply(receive(copy=copy), copy=copy)
    return {"echoed": count}


def _route(data: zmq.Socket, count: int, copy: bool, frames: int) -> EchoFigures:
    """As :func:`_echo` for a ROUTER: every request is multipart (its routing frame
    first), whatever the payload's own frames."""
    return _echo(data, count, copy, frames=frames + 1)


def _route_native(data: zmq.Socket, count: int, copy: bool, frames: int) -> EchoFigures:
    """As :func:`_route`, in C."""
    return _echo_in_c("zb_route", data, count, copy)


# Each command's loop, Python's or native: its figures, without the CPU it took.
_Loop = Callable[[zmq.Socket, int, bool, int], SinkFigures | EchoFigures]
_LOOPS: dict[tuple[str, str], _Loop] = {
    ("sink", "python"): _sink,
    ("sink", "native"): _sink_native,
    ("echo", "python"): _echo,
    ("echo", "native"): _echo_native,
    ("route", "python"): _route,
    ("route", "native"): _route_native,
}


def _send(ctrl: zmq.Socket, message: FromPeer) -> None:
    ctrl.send(json.dumps(message).encode())


def _report_error(ctrl: zmq.Socket, text: str) -> None:
    # If the driver is gone too, its own timeout says so.
    with contextlib.suppress(zmq.ZMQError):
        ctrl.send(json.dumps(Failed(error=text)).encode(), zmq.NOBLOCK)


def exit_with_parent(parent_pid: int, ending: Callable[[], object] = lambda: os._exit(3)) -> None:
    """End this process (``ending()``) as soon as the process that started it is gone,
    so that a killed kernel never leaves a peer (or a driver process) behind."""
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_S)
    ending()


def follow_parent(parent_pid: int) -> None:
    """What a far end's own process does first: leave Ctrl-C to the driver (a kernel
    interrupt reaches the whole process group, and the driver owns shutdown), and end
    as soon as the driver's process is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=exit_with_parent, args=(parent_pid,), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=sorted(ROLES), required=True)
    parser.add_argument("--ctrl", required=True, help="control endpoint to connect to")
    parser.add_argument("--data", required=True, help="data endpoint to connect to")
    parser.add_argument("--timeout", type=float, required=True, help="seconds")
    parser.add_argument("--hwm", type=int, required=True, help="data high-water mark")
    parser.add_argument("--io-threads", type=int, default=1, help="the context's I/O threads")
    parser.add_argument("--parent", type=int, required=True, help="exit when it is gone")
    args = parser.parse_args(argv)
    follow_parent(args.parent)
    # An encrypted data path's keys come in the environment, never on a command line.
    keys = os.environ.get(CURVE_KEYS_ENV)
    ctx = zmq.Context(io_threads=args.io_threads)
    try:
        serve(
            ctx,
            args.role,
            args.ctrl,
            args.data,
            args.timeout,
            args.hwm,
            Keys.from_json(keys) if keys else None,
        )
    finally:
        ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
