"""A sample's hot loop on a thread of its own, made for the sample and ended with it.

Why a thread: every message ZeroMQ sends is allocated (``malloc``) by the thread that
sends it and freed by ZeroMQ's I/O thread. glibc gives each new thread a heap arena
of its own, while a kernel's main thread allocates from the process's main arena,
which whatever the kernel has imported (pandas, numpy, the kernel's own machinery) has
already filled. Sending small messages from that arena is measurably slower than from
a fresh one: ``bench/bench_zmq.py`` sets a bare pyzmq loop sending from its main
thread, with and without pandas imported, beside the same loop on a thread of its own.
What a user reads is then ZeroMQ's rate, not the state of the kernel's heap.

The calling thread only waits (an event's wait, without the GIL). Ctrl-C lands there:
it halts the loop's thread, by default with an exception raised in it at its next
Python step (a native send loop returns to Python every few tens of milliseconds,
:mod:`.pair`; a native round-trip loop only at its sample's end), sent again until
the thread has left its loop (one that lands in a finalizer is dropped), and waits
for it, :data:`JOIN_GRACE_S` at most, before going on with the interrupt, since the
loop's sockets are closed after. It never waits with ``Thread.join``: a join that
Ctrl-C cuts short marks a thread still running as stopped (CPython 3.11, the fix for
bpo-45274 releases the lock the running thread holds).
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

# How long an interrupted loop's thread is given to stop before the caller goes on
# (every loop's waits end within the link's short socket timeouts).
JOIN_GRACE_S = 5.0


class Halted(Exception):
    """The caller was interrupted: the loop's thread stops too."""


@dataclass(frozen=True)
class OwnThread:
    """What a loop on a thread of its own gives back: its result, and that thread's own
    CPU seconds (the caller's thread only waited)."""

    value: Any
    cpu: float


class _Outcome(TypedDict, total=False):
    """What the loop's thread left: ``work``'s value or the error it raised, and the
    thread's CPU seconds."""

    value: Any
    error: BaseException
    cpu: float


def on_own_thread(
    work: Callable[[], Any],
    name: str = "zmqbench-sender",
    stop: Callable[[threading.Thread], None] | None = None,
) -> OwnThread:
    """Run ``work()`` on a new thread and wait for it: its value (or its error, raised
    here) and its thread's CPU seconds. Interrupted, ``stop(thread)`` (default
    :func:`halt`) is called until ``work`` has returned, for :data:`JOIN_GRACE_S`
    at most."""
    outcome: _Outcome = {}
    finished, left_work = threading.Event(), threading.Event()

    def run() -> None:
        start = time.thread_time()
        try:
            try:
                outcome["value"] = work()
            finally:
                left_work.set()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            outcome["error"] = exc
        finally:
            outcome["cpu"] = time.thread_time() - start
            finished.set()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        finished.wait()
    except BaseException:
        _stop_until_finished(thread, stop or halt, left_work, finished)
        raise
    _end(thread)
    if "error" in outcome:
        raise outcome["error"]
    return OwnThread(outcome["value"], outcome["cpu"])


def _stop_until_finished(
    thread: threading.Thread,
    stop: Callable[[threading.Thread], None],
    left_work: threading.Event,
    finished: threading.Event,
) -> None:
    """Stop ``thread``'s work, again each moment until it has left it; a second Ctrl-C
    meanwhile does not cut the wait short."""
    deadline = time.monotonic() + JOIN_GRACE_S
    while not finished.is_set() and time.monotonic() < deadline:
        try:
            if not left_work.is_set():
                stop(thread)
            finished.wait(0.05)
        except KeyboardInterrupt:
            continue
    if finished.is_set():  # past the grace, a loop still running is not waited on
        _end(thread)


def _end(thread: threading.Thread) -> None:
    """Wait the moment ``thread`` takes to end once its work is done (so it is gone
    when the caller looks), without letting Ctrl-C mark it stopped early."""
    with contextlib.suppress(KeyboardInterrupt):
        while thread.is_alive():
            time.sleep(0.0005)


def halt(thread: threading.Thread) -> None:
    """Raise :class:`Halted` in ``thread`` at its next Python step."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(Halted)
        )


__all__ = ["JOIN_GRACE_S", "Halted", "OwnThread", "halt", "on_own_thread"]
