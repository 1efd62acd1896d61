"""Starting helper processes: a Ctrl-C that lands while one starts is held until the
start is done (a Popen interrupted midway leaves what the caller cannot clean up)."""

from __future__ import annotations

import signal
import threading

import pytest

from zmqbench_magic.method.spawn import interrupt_after


def test_an_interrupt_during_a_start_is_raised_once_it_is_done():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt), interrupt_after():
            signal.raise_signal(signal.SIGINT)
            done.append("the start went on")
        assert done == ["the start went on"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with interrupt_after():  # and with none, nothing is raised
            done.append("again")
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_nothing_changes():
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_in_block()))
    thread.start()
    thread.join(10)
    assert seen == [signal.getsignal(signal.SIGINT)]


def _in_block() -> object:
    with interrupt_after():
        return signal.getsignal(signal.SIGINT)
