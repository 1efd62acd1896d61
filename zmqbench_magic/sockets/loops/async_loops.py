"""The driver's hot loops with ``zmq.asyncio`` (``--loop asyncio``): the same PUSH/PULL
and REQ/REP protocol over the same socket, each send and receive awaited on an event
loop, as a notebook's own asyncio code does it.

Which loop: a fresh one, on a thread of its own, made for the sample and closed after
it. A kernel's own loop is busy serving the kernel (its messages, its output, the
widgets), and a loop cannot run inside another one on the same thread; a fresh loop
also keeps what the kernel's loop happens to be doing out of the figure. The far end
is the Python one either way: the question is what awaiting costs the side that
awaits.

The async socket is a shadow of the link's own (``zmq.asyncio.Socket.shadow``), made on
the loop's thread. It keeps the link's short receive and send timeouts, so a stall is
noticed as in the other loops: the far end is asked whether it is alive, and the wait
goes on until ``--timeout``.

Ctrl-C lands in the caller's thread, which only waits: it halts the loop's thread too.
A send that succeeds at once never yields to the event loop (awaiting a finished future
does not), so the hot loops look at a flag every :data:`_HALT_EVERY` messages (a bit
test, against microseconds per awaited message), and a task waiting on the socket is
cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypedDict

import zmq
import zmq.asyncio

from ..kernel.link import LIVENESS_S, Link
from .own_thread import Halted, OwnThread, on_own_thread

# How often (in messages, a power of two) a hot loop looks whether it was halted.
_HALT_EVERY = 64


Main = Callable[[zmq.asyncio.Socket, threading.Event], Coroutine[Any, Any, Any]]


class _Running(TypedDict, total=False):
    """The event loop and its task, once the loop's thread has made them."""

    loop: asyncio.AbstractEventLoop
    task: asyncio.Task[Any]


def in_fresh_loop(link: Link, main: Main) -> OwnThread:
    """Run ``main(async_socket, halted)`` to its end on a new event loop, on a thread of
    its own (:mod:`.own_thread`); Ctrl-C in this thread sets ``halted`` and cancels
    it. Every await inside gives up within --timeout (the link's stall check), so the
    loop ends on its own."""
    running: _Running = {}
    halted = threading.Event()

    def run() -> Any:
        loop = asyncio.new_event_loop()
        try:
            socket = zmq.asyncio.Socket.shadow(link.data.underlying)
            task = running["task"] = loop.create_task(main(socket, halted))
            running["loop"] = loop
            return loop.run_until_complete(task)
        finally:
            loop.close()

    return on_own_thread(run, "zmqbench-asyncio", stop=lambda _: _halt(halted, running))


def _halt(halted: threading.Event, outcome: _Running) -> None:
    """Stop the loop's thread: the flag for a loop that never yields, a cancel for a
    task that waits (none yet, or the loop already closed: the flag is enough)."""
    halted.set()
    loop, task = outcome.get("loop"), outcome.get("task")
    if loop is not None and task is not None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(task.cancel)


def send_all(
    link: Link, message: Any, frames: int, copy: bool, count: int, burst: int
) -> OwnThread:
    """``count`` awaited sends; the seconds the first ``burst`` took, and all of them
    (one clock read between two runs of the same loop, nothing added inside it)."""

    async def main(socket: zmq.asyncio.Socket, halted: threading.Event) -> tuple[float, float]:
        send = socket.send if frames == 1 else socket.send_multipart

        async def send_range(sent: int, last: int) -> None:
            stalled_at = 0.0
            while sent < last:
                if not sent % _HALT_EVERY and halted.is_set():
                    raise Halted
                try:
                    await send(message, copy=copy)
                    sent, stalled_at = sent + 1, 0.0
                except zmq.Again:
                    stalled_at = stalled_at or time.monotonic() - LIVENESS_S
                    link.check_stall(stalled_at)

        start = time.perf_counter()
        await send_range(0, burst)
        burst_elapsed = time.perf_counter() - start
        await send_range(burst, count)
        return burst_elapsed, time.perf_counter() - start

    return in_fresh_loop(link, main)


def ping(link: Link, message: Any, frames: int, copy: bool, count: int) -> OwnThread:
    """``count`` awaited round trips; their stamps (``[0]``: the start). Each request
    after the first is the reply just received, as in :func:`.pair._ping`."""

    async def main(socket: zmq.asyncio.Socket, halted: threading.Event) -> list[float]:
        send = socket.send if frames == 1 else socket.send_multipart
        recv = socket.recv if frames == 1 else socket.recv_multipart
        now = time.perf_counter
        request = message
        stamps = [now()]
        for done in range(count):
            if not done % _HALT_EVERY and halted.is_set():
                raise Halted
            await _patiently(link, send, request, copy=copy)
            request = await _patiently(link, recv, copy=copy)
            stamps.append(now())
        return stamps

    return in_fresh_loop(link, main)


async def _patiently(
    link: Link, call: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any
) -> Any:
    """Await a send or a receive; each time the socket's short timeout passes with
    nothing (a far end gone or stalled), ask whether the far end is still there, as
    the other loops do, and wait again until ``--timeout``."""
    stalled_at = 0.0
    while True:
        try:
            return await call(*args, **kwargs)
        except zmq.Again:
            stalled_at = stalled_at or time.monotonic() - LIVENESS_S
            link.check_stall(stalled_at)
