"""A sample's loop on a thread of its own: its value, its error and its CPU come back
to the caller, and Ctrl-C in the caller stops it before the caller goes on."""

from __future__ import annotations

import threading
import time

import pytest

from zmqbench_magic.sockets.loops.own_thread import Halted, on_own_thread


def _ours() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "zmqbench-sender"]


def test_the_value_and_the_loops_own_cpu_come_back():
    def spin() -> str:
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
        return "done"

    result = on_own_thread(spin)
    assert result.value == "done"
    assert result.cpu >= 0.05
    assert not _ours()


def test_an_error_in_the_loop_is_raised_in_the_caller():
    def fail() -> None:
        msg = "the far end went"
        raise RuntimeError(msg)

    with pytest.raises(RuntimeError, match="the far end went"):
        on_own_thread(fail)
    assert not _ours()


def test_ctrl_c_stops_the_loop_before_the_caller_goes_on(kernel_sigint):
    """The loop drops the first halt (as one landing in a finalizer is dropped): it is
    halted again, and it is gone once the interrupt reaches the caller."""
    looping, halts = threading.Event(), []

    def loop_until_halted_twice() -> None:
        while True:
            looping.set()
            try:
                while True:
                    time.sleep(0.001)
            except Halted:
                halts.append(time.monotonic())
                if len(halts) == 2:
                    raise

    kernel_sigint(0.05, when=looping.is_set)
    with pytest.raises(KeyboardInterrupt):
        on_own_thread(loop_until_halted_twice)
    assert len(halts) == 2
    assert not _ours()
