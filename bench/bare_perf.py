"""A bare pyzmq throughput / latency loop written the pyzmq-perf way, standalone.

It is run as its own script, importing only pyzmq, as pyzmq's ``perf/perf.py`` is:
the measuring end in this process, the far end a fresh interpreter started from it.
It prints one number: delivered msgs/s (``thr``) or the mean round trip in µs (``lat``);
``pubsub`` prints two, delivered msgs/s and the messages lost.

Each role gets the memory the project's same role has. The receiving end (the PULL
of ``thr``, the echo of ``lat``, the SUB of ``pubsub``) is the project's far end, and
runs with the same fixed glibc malloc thresholds (``STEADY_MALLOC`` in
``zmqbench_magic/sockets/malloc.py``): a far end forked from this process, as it once
was, paid 2 x 256 page faults per 1 MB round trip and reported 1,668 µs where libzmq's
C tools measure about 440 µs; and a PULL left with glibc's defaults hands its 4 kB
buffers back to the OS and faults them in again, and delivers a third fewer. The driving
end (the pusher, the requester, the publisher) is the project's kernel side, left as it
is; ``--imports pandas`` has it import those modules first, as a kernel running the
project has, whose heap then serves each message's allocation (see the benchmarks page).

    python bench/bare_perf.py thr --count 200000 --size 100 --hwm 1000
    python bench/bare_perf.py thr --count 200000 --size 100 --hwm 1000 --asyncio
    python bench/bare_perf.py pubsub --count 200000 --size 100 --hwm 1000
    python bench/bare_perf.py thr --count 200000 --size 100 --hwm 1000 --imports pandas
    python bench/bare_perf.py thr --count 200000 --size 100 --hwm 1000 --thread

With ``--cpu 0/1`` the driving end runs on CPU 0 and the receiving end on CPU 1, each
pinned before its context's I/O thread starts (which inherits it), as the project's
``--cpu 0/1`` pins its driver and its far end.

With ``--thread`` the driving side's loop (the pusher's sends, the requester's round
trips) runs on a thread made for it, as the project's loops do: the thread's
allocations then come from a glibc heap arena of its own, not the process's main one.

With ``--asyncio`` the driving side (the pusher, the requester) awaits each send and
receive on an asyncio loop, written as pyzmq's asyncio examples write it; the measuring
of delivered messages and round trips is unchanged.

Unlike perf.py, every send and receive has a timeout, the far end is joined with
a timeout, and the timed loop follows an untimed warm-up of ``count`` messages
(perf.py warms up with one round trip), to match the project's ``warmup=1``.

``pubsub`` is written as pyzmq's ``examples/pubsub`` write one: the publisher (this
process) binds PUB on 127.0.0.1 tcp, one SUB in the far process subscribes to
``b""`` and measures, first data message to the end of the round, and reports its
figure back over the REQ/REP pair the two synchronise on; this process prints it.
Before the first round the publisher sends empty hellos until the subscriber says
over that pair that one arrived, as the ZeroMQ guide's node coordination does, so no
message of the count goes out before the subscription took. A PUB drops what its
high-water mark does not hold, so the end of a round is an empty message sent again
every millisecond until the subscriber answers (the round's end can be read up to
1 ms late): the subscriber counts what arrived, and the lost are the count less that.
The warm-up is a whole round of its own, as ``warmup=1``.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable

import zmq

TIMEOUT_MS = 10_000
# The project's far-end malloc thresholds (zmqbench_magic/sockets/malloc.py), as the
# environment a fresh interpreter reads and as glibc's mallopt numbers for this one.
STEADY_MALLOC = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 1024 * 1024),
    "MALLOC_TRIM_THRESHOLD_": str(1024 * 1024 * 1024),
}
_MALLOPT = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_MMAP_THRESHOLD_": -3}


def _socket(ctx: zmq.Context, kind: int, hwm: int) -> zmq.Socket:
    sock = ctx.socket(kind)
    # The far end's last messages are still queued when it closes: let them go out
    # (perf.py relies on the default infinite linger; this one is bounded).
    sock.linger = TIMEOUT_MS
    sock.rcvtimeo = sock.sndtimeo = TIMEOUT_MS
    sock.sndhwm = sock.rcvhwm = hwm
    return sock


def _import(modules: list[str]) -> None:
    """Import ``modules`` into the driving end, as the project's kernel has them."""
    for module in modules:
        importlib.import_module(module)


def _steady_malloc_here() -> None:
    """:data:`STEADY_MALLOC` applied to this running process (glibc's mallopt)."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)  # None: not glibc
    if mallopt is not None:
        for setting, number in _MALLOPT.items():
            mallopt(number, int(STEADY_MALLOC[setting]))


def _on_a_thread(loop: Callable[..., object], *args: object) -> object:
    """``loop(*args)`` on a thread made for it; its value."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(loop(*args)))
    thread.start()
    thread.join()
    return result[0]


def _push(sock: zmq.Socket, count: int, size: int) -> None:
    message = b" " * size
    for _ in range(2 * count):  # the warm-up, then the timed messages
        sock.send(message)


def _pusher(
    url: str, count: int, size: int, hwm: int, imports: list[str], thread: bool = False
) -> None:
    _import(imports)
    with zmq.Context() as ctx, _socket(ctx, zmq.PUSH, hwm) as sock:
        sock.connect(url)
        if thread:
            _on_a_thread(_push, sock, count, size)
        else:
            _push(sock, count, size)


def _echo(
    url: str, count: int, size: int, hwm: int, imports: list[str], thread: bool = False
) -> None:
    with zmq.Context() as ctx, _socket(ctx, zmq.REP, hwm) as sock:
        sock.connect(url)
        for _ in range(2 * count):
            sock.send(sock.recv())


def _pusher_async(
    url: str, count: int, size: int, hwm: int, imports: list[str], thread: bool = False
) -> None:
    """The sender as pyzmq's asyncio examples write one: a zmq.asyncio context and
    socket, each send awaited on the running loop."""
    import asyncio

    import zmq.asyncio

    _import(imports)

    async def push() -> None:
        ctx = zmq.asyncio.Context()
        sock = _socket(ctx, zmq.PUSH, hwm)
        try:
            sock.connect(url)
            message = b" " * size
            for _ in range(2 * count):
                await sock.send(message)
        finally:
            sock.close()
            ctx.term()

    asyncio.run(push())


def latency_async(sock: zmq.Socket, count: int, size: int) -> float:
    """As :func:`latency`, each send and receive awaited on an asyncio loop, over an
    async socket shadowing ``sock``."""
    import asyncio

    import zmq.asyncio

    async def ping() -> float:
        shadow = zmq.asyncio.Socket.shadow(sock.underlying)
        message = b" " * size
        for _ in range(count):
            await shadow.send(message)
            message = await shadow.recv()
        start = time.perf_counter()
        for _ in range(count):
            await shadow.send(message)
            message = await shadow.recv()
        return (time.perf_counter() - start) / count * 1e6

    return asyncio.run(ping())


def throughput(sock: zmq.Socket, count: int, size: int) -> float:
    """Delivered msgs/s, first to last receive, as perf.py and libzmq's local_thr."""
    for _ in range(count):
        sock.recv()
    sock.recv()
    start = time.perf_counter()
    for _ in range(count - 1):
        sock.recv()
    return (count - 1) / (time.perf_counter() - start)


def latency(sock: zmq.Socket, count: int, size: int) -> float:
    """Mean round trip in µs (perf.py prints half of it); as perf.py's, each request
    after the first is the reply just received (the echo's copy of the message)."""
    message = b" " * size
    for _ in range(count):
        sock.send(message)
        message = sock.recv()
    start = time.perf_counter()
    for _ in range(count):
        sock.send(message)
        message = sock.recv()
    return (time.perf_counter() - start) / count * 1e6


def _subscriber(url: str, sync_url: str, count: int, size: int, hwm: int) -> None:
    """The measuring end of ``pubsub``: one SUB subscribed to everything, timing each
    round's data messages from the first to the round's end (an empty message),
    reporting ``msgs/s lost`` to the publisher over REQ."""
    with (
        zmq.Context() as ctx,
        _socket(ctx, zmq.SUB, hwm) as sock,
        _socket(ctx, zmq.REQ, hwm) as sync,
    ):
        sock.subscribe(b"")
        sock.connect(url)
        sync.connect(sync_url)
        sock.recv()  # a hello: the subscription took
        sync.send(b"ready")
        sync.recv()
        for _ in range(2):  # the warm-up round, then the timed one
            message = sock.recv()
            while not message:  # hellos and ends still queued from before
                message = sock.recv()
            start = time.perf_counter()
            received = 1
            while sock.recv():
                received += 1
            elapsed = time.perf_counter() - start
            sync.send_string(f"{received / elapsed} {count - received}")
            reply = sync.recv()
        assert reply == b"done"


def _until_answered(pub: zmq.Socket, sync: zmq.Socket) -> bytes:
    """Send empty messages on ``pub``, one a millisecond, until ``sync`` has a request."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not sync.poll(1):
        if time.monotonic() > deadline:
            raise TimeoutError("the subscriber did not answer")
        pub.send(b"")
    return sync.recv()


def pubsub(pub: zmq.Socket, sync: zmq.Socket, count: int, size: int) -> str:
    """Publish a warm-up round, then the timed round, of ``count`` messages; return
    what the subscriber measured of the timed one: ``msgs/s lost``."""
    _until_answered(pub, sync)  # hellos until the subscriber got one
    sync.send(b"go")
    message = b" " * size
    for last in (False, True):
        for _ in range(count):
            pub.send(message)
        figures = _until_answered(pub, sync)  # the round's end
        sync.send(b"done" if last else b"next")
    return figures.decode()


def _pubsub_main(count: int, size: int, hwm: int) -> None:
    with (
        zmq.Context() as ctx,
        _socket(ctx, zmq.PUB, hwm) as pub,
        _socket(ctx, zmq.REP, hwm) as sync,
    ):
        url = f"tcp://127.0.0.1:{pub.bind_to_random_port('tcp://127.0.0.1')}"
        sync_url = f"tcp://127.0.0.1:{sync.bind_to_random_port('tcp://127.0.0.1')}"
        process = _far_end(_subscriber, url, sync_url, count, size, hwm, steady=True)
        try:
            print(pubsub(pub, sync, count, size))
        finally:
            process.join(TIMEOUT_MS / 1000)
            process.kill()


def _pinned(cpus: set[int], target: Callable[..., None], *args: object) -> None:
    """``target(*args)`` on ``cpus`` (none: where the OS puts it), pinned before its
    context's I/O thread starts, which then inherits the pinning."""
    if cpus:
        os.sched_setaffinity(0, cpus)
    target(*args)


def _far_end(
    target: Callable[..., None], *args: object, steady: bool, cpus: set[int] = frozenset()
) -> multiprocessing.Process:
    """Start ``target(*args)`` in a fresh interpreter on ``cpus``, with
    :data:`STEADY_MALLOC` where it is the receiving end."""
    # A fresh interpreter reads these at start; this process's own are set already.
    for setting, value in STEADY_MALLOC.items():
        if steady:
            os.environ[setting] = value
        else:
            os.environ.pop(setting, None)
    process = multiprocessing.get_context("spawn").Process(
        target=_pinned, args=(set(cpus), target, *args)
    )
    process.start()
    return process


def _split(cpu: str) -> tuple[set[int], set[int]]:
    """``0/1`` as ({0}, {1}): the driving end's CPU and the receiving end's."""
    if not cpu:
        return set(), set()
    driving, receiving = cpu.split("/")
    return {int(driving)}, {int(receiving)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test", choices=("thr", "lat", "pubsub"))
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--hwm", type=int, required=True)
    parser.add_argument(
        "--cpu",
        default="",
        metavar="DRIVING/RECEIVING",
        help="pin the driving end to the first CPU and the receiving end to the second (0/1)",
    )
    parser.add_argument(
        "--imports",
        nargs="*",
        default=[],
        metavar="MODULE",
        help="modules the driving end imports first, as the project's kernel has them",
    )
    parser.add_argument(
        "--thread",
        action="store_true",
        help="run the driving side's loop on a thread made for it, as the project does",
    )
    parser.add_argument(
        "--asyncio",
        action="store_true",
        help="await the driving side's sends and receives (the pusher's, the requester's)",
    )
    args = parser.parse_args()
    if args.thread and args.asyncio:
        parser.error("--thread and --asyncio: an asyncio loop is its own way of running")
    if args.test == "pubsub":
        if args.asyncio or args.thread or args.size < 1:
            parser.error(
                "pubsub takes no --asyncio or --thread, and a size of at least 1 (0 ends a round)"
            )
        _import(args.imports)  # the publisher drives; its subscriber is steady
        _pubsub_main(args.count, args.size, args.hwm)
        return 0
    kind, far_end, measure = {
        ("thr", False): (zmq.PULL, _pusher, throughput),
        ("lat", False): (zmq.REQ, _echo, latency),
        ("thr", True): (zmq.PULL, _pusher_async, throughput),
        ("lat", True): (zmq.REQ, _echo, latency_async),
    }[args.test, args.asyncio]
    # thr: this end receives (the project's far end) and the far end drives; lat: this
    # end drives and the far end echoes.
    receives_here = args.test == "thr"
    driving, receiving = _split(args.cpu)
    here, there = (receiving, driving) if receives_here else (driving, receiving)
    if here:
        os.sched_setaffinity(0, here)  # before the context: its I/O thread inherits it
    if receives_here:
        _steady_malloc_here()
    else:
        _import(args.imports)
    with zmq.Context() as ctx, _socket(ctx, kind, args.hwm) as sock:
        port = sock.bind_to_random_port("tcp://127.0.0.1")
        url = f"tcp://127.0.0.1:{port}"
        process = _far_end(
            far_end,
            url,
            args.count,
            args.size,
            args.hwm,
            args.imports if receives_here else [],
            receives_here and args.thread,
            steady=not receives_here,
            cpus=there,
        )
        try:
            if args.thread and not receives_here:
                print(_on_a_thread(measure, sock, args.count, args.size))
            else:
                print(measure(sock, args.count, args.size))
        finally:
            process.join(TIMEOUT_MS / 1000)
            process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
